import type { FastifyInstance } from 'fastify';
import { caller, type Guards } from '../http/session-guard.js';
import { homeHtml, homeScript } from './home-page.js';
import { loginHtml, loginScript } from './login-page.js';

/** The minimal pages that stand until the web UI is built: /login, and / behind the guard. */
export async function pageRoutes(app: FastifyInstance, { guards }: { guards: Guards }) {
  const hide = { schema: { hide: true } };
  app.get('/login', hide, async (_request, reply) => reply.type('text/html; charset=utf-8').send(loginHtml));
  app.get('/login.js', hide, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(loginScript));
  app.get('/home.js', hide, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(homeScript));
  app.get('/', { ...hide, onRequest: guards.requirePageSession }, async (request, reply) =>
    reply.type('text/html; charset=utf-8').send(homeHtml(caller(request).user)),
  );
}
