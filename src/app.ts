import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { authRoutes } from './auth/routes.js';
import type { AuthService } from './auth/service.js';
import type { Config } from './config.js';
import { ErrorSchema } from './http/common-schemas.js';
import { clientErrorHandler, registerErrorHandling, sendError } from './http/error-handler.js';
import type { InFlight } from './http/in-flight.js';
import { OneLineRequestLog } from './http/request-log.js';
import { lazyRequestLogger } from './http/request-logger.js';
import { registerResponseHeaders } from './http/response-headers.js';
import './http/fastify-types.js';
import { liftCsrfTokenField, makeGuards } from './http/session-guard.js';
import { schemaErrorFormatter, validatorCompiler } from './http/validation.js';
import { registerOpenApi } from './openapi.js';
import { pageRoutes } from './pages/routes.js';
import { catalogRoutes } from './integrations/catalog-routes.js';
import { OAuthFlowService } from './integrations/oauth-flow.js';
import { oauthRoutes } from './integrations/oauth-routes.js';
import { userIntegrationRoutes } from './integrations/user-integrations-routes.js';
import type { Services } from './services.js';
import { sessionRoutes } from './sessions/routes.js';
import { adminRoutes } from './users/admin-routes.js';
import { userRoutes } from './users/routes.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

export interface AppDeps {
  config: Config;
  services: Services;
  auth: AuthService;
  logger: FastifyServerOptions['logger'];
  inFlight: InFlight;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const { users, sessions, store, userIntegrations, rateLimit: sharedLimit } = deps.services;
  const app = Fastify({
    logger: deps.logger,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    logController: new OneLineRequestLog(),
    childLoggerFactory: lazyRequestLogger,
    // A hop count trusts that many proxies nearest to the server (proxy-addr's semantics).
    trustProxy:
      typeof config.trustProxy === 'number' ? (_address: string, hop: number) => hop < (config.trustProxy as number) : config.trustProxy,
    bodyLimit: config.bodyLimit,
    forceCloseConnections: 'idle',
    schemaErrorFormatter,
    clientErrorHandler,
    routerOptions: { ignoreTrailingSlash: true },
    // A malformed URL (bad %-encoding, an over-long path parameter) is answered before any hook runs;
    // without this it would get Fastify's own body, without the error shape or the X-Request-Id header.
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id);
      sendError(request, reply, err.statusCode ?? 400, err.message);
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.decorate('troveConfig', config);
  app.decorateRequest('user', null);
  app.decorateRequest('session', null);
  app.addSchema(ErrorSchema);
  registerErrorHandling(app);
  deps.inFlight.attach(app);
  // Bodies are JSON (interface §4): anything else, text/plain included, is 415.
  app.removeContentTypeParser('text/plain');

  registerResponseHeaders(app, { https: config.session.secure });
  await app.register(cookie);
  await app.register(rateLimit, {
    global: false,
    cache: 50_000,
    // With sessions in Redis the login limit counts there too, shared by every process.
    ...(sharedLimit ? { redis: sharedLimit.redis, nameSpace: sharedLimit.nameSpace } : {}),
  });
  liftCsrfTokenField(app);
  await registerOpenApi(app, version);

  const guards = makeGuards({ sessions, config });
  await app.register(authRoutes, { auth: deps.auth, sessions, guards });
  await app.register(sessionRoutes, { sessions, guards });
  await app.register(userRoutes, { guards });
  await app.register(adminRoutes, { users, sessions, guards });
  await app.register(catalogRoutes, { userIntegrations, guards });
  await app.register(userIntegrationRoutes, { userIntegrations, guards });
  const flow = new OAuthFlowService({ config, store, sessions, userIntegrations });
  await app.register(oauthRoutes, { flow, guards });
  await app.register(pageRoutes, { guards });
  return app;
}
