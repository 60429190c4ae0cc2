import type { FastifyInstance } from 'fastify';
import { caller, type Guards } from '../http/session-guard.js';
import { homeHtml, homeScript } from './home-page.js';
import { loginHtml, loginScript } from './login-page.js';
import { oauthErrorHtml, oauthSuccessHtml } from './oauth-result-page.js';

type ResultQuery = { Querystring: { integration?: string; reason?: string } };
const one = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * The minimal pages that stand until the web UI is built: /login, / behind the guard, and where
 * OAuth flows end. Those two have no guard: they are reached through the provider's cross-site
 * redirect, with which the browser does not send the SameSite=Strict session cookie.
 */
export async function pageRoutes(app: FastifyInstance, { guards }: { guards: Guards }) {
  const hide = { schema: { hide: true } };
  app.get('/login', hide, async (_request, reply) => reply.type('text/html; charset=utf-8').send(loginHtml));
  app.get('/login.js', hide, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(loginScript));
  app.get('/home.js', hide, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(homeScript));
  app.get<ResultQuery>('/integrations/oauth/success', hide, async (request, reply) =>
    reply.type('text/html; charset=utf-8').send(oauthSuccessHtml(one(request.query.integration))),
  );
  app.get<ResultQuery>('/integrations/oauth/error', hide, async (request, reply) =>
    reply.type('text/html; charset=utf-8').send(oauthErrorHtml(one(request.query.integration), one(request.query.reason))),
  );
  app.get('/', { ...hide, onRequest: guards.requirePageSession }, async (request, reply) =>
    reply.type('text/html; charset=utf-8').send(homeHtml(caller(request).user)),
  );
}
