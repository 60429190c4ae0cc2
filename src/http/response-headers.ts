import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Security headers, worked out once at startup: the Fastify helmet plugin re-parses its whole
 * policy on every request, which cost more than a session lookup.
 *
 * Web pages get helmet's full set. JSON under /v1 gets only what protects an API answer
 * (OWASP's REST guidance): no caching, no sniffing, nothing may load or frame it, no cross-origin
 * reads, HSTS on https. Every header costs time on each of thousands of requests a second, and
 * the document-only ones (COOP, X-Download-Options, …) do nothing for JSON.
 */
function headersOf(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return headers;
}

/** Sets the request id header and the security headers on every answer. */
export function registerResponseHeaders(app: FastifyInstance, options: { https: boolean }): void {
  const api: Record<string, string> = {
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'cross-origin-resource-policy': 'same-origin',
  };
  if (options.https) api['strict-transport-security'] = 'max-age=31536000; includeSubDomains';
  const pages = headersOf({
    // Upgrading to https would break a plain-http install on the local network.
    contentSecurityPolicy: { directives: { 'upgrade-insecure-requests': options.https ? [] : null } },
  });
  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.headers(request.url.startsWith('/v1/') ? api : pages);
    done();
  });
}
