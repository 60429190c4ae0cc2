import { timingSafeEqual } from 'node:crypto';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestAsyncHookHandler,
  preValidationAsyncHookHandler,
} from 'fastify';
import type { Config } from '../config.js';
import { InvalidCsrfTokenError, InvalidSessionError } from '../domain-errors.js';
import type { SessionService } from '../sessions/service.js';
import type { StoredSession } from '../sessions/store.js';
import type { User } from '../users/repository.js';
import { isGuardError } from './error-handler.js';
import { clearSessionCookie, setSessionCookie } from './session-cookie.js';

export interface Guards {
  /** onRequest hook of every protected API route (interface §5.3). */
  requireSession: onRequestAsyncHookHandler;
  /** onRequest hook of protected web pages: a failed guard sends the browser to /login. */
  requirePageSession: onRequestAsyncHookHandler;
  /** preValidation hook: checks the anti-forgery token on state-changing requests when CSRF_ENABLED. */
  verifyCsrf: preValidationAsyncHookHandler;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function makeGuards(deps: { sessions: SessionService; config: Config }): Guards {
  const { sessions, config } = deps;

  async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const cookieValue = request.cookies[config.session.cookieName];
    const auth = await sessions.authenticate({ cookieValue, ipAddress: request.ip, log: request.log });
    request.user = auth.user;
    request.session = auth.session;
    if (auth.renewed && cookieValue) setSessionCookie(reply, config.session, cookieValue);
  }

  return {
    requireSession: authenticate,

    async requirePageSession(request, reply) {
      try {
        await authenticate(request, reply);
      } catch (err) {
        if (!isGuardError(err)) throw err;
        clearSessionCookie(reply, config.session);
        await reply.redirect('/login', 302);
      }
    },

    async verifyCsrf(request) {
      if (!config.csrfEnabled || SAFE_METHODS.has(request.method)) return;
      const expected = request.session?.csrfToken;
      const header = request.headers['x-csrf-token'];
      const given = typeof header === 'string' ? header : (request.csrfTokenField ?? '');
      const a = Buffer.from(given);
      const b = Buffer.from(expected ?? '');
      if (!expected || a.length !== b.length || !timingSafeEqual(a, b)) throw new InvalidCsrfTokenError();
    },
  };
}

/** The user and session the guard attached; only call on routes that ran `requireSession`. */
export function caller(request: FastifyRequest): { user: User; session: StoredSession } {
  if (!request.user || !request.session) throw new InvalidSessionError();
  return { user: request.user, session: request.session };
}

/**
 * Clients may send the anti-forgery token as a body field of any JSON request; it is lifted out
 * before validation so that no route's schema has to know about it.
 */
export function liftCsrfTokenField(app: FastifyInstance): void {
  app.decorateRequest('csrfTokenField', undefined);
  app.addHook('preValidation', (request, _reply, done) => {
    const body = request.body;
    if (body && typeof body === 'object' && !Array.isArray(body) && 'csrfToken' in body) {
      const { csrfToken } = body as { csrfToken?: unknown };
      if (typeof csrfToken === 'string') request.csrfTokenField = csrfToken;
      delete (body as { csrfToken?: unknown }).csrfToken;
    }
    done();
  });
}
