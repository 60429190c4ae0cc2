import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { errorResponses, SuccessSchema } from '../http/common-schemas.js';
import { clientGone } from '../http/client-gone.js';
import { clearSessionCookie, setSessionCookie } from '../http/session-cookie.js';
import { caller, type Guards } from '../http/session-guard.js';
import type { SessionService } from '../sessions/service.js';
import { loginRateLimit } from './login-rate-limit.js';
import { CsrfResponse, LoginBody, PasswordChangeBody, RegisterBody, SignedInResponse } from './schemas.js';
import type { AuthService, ClientInfo, SignedIn } from './service.js';

interface Deps {
  auth: AuthService;
  sessions: SessionService;
  guards: Guards;
}

export async function authRoutes(app: FastifyInstance, { auth, sessions, guards }: Deps): Promise<void> {
  const config = app.troveConfig;
  const cookieName = config.session.cookieName;
  const tags = ['auth'];
  const protectedRoute = { onRequest: guards.requireSession, preValidation: guards.verifyCsrf };

  const client = (request: FastifyRequest, reply: FastifyReply): ClientInfo => ({
    ipAddress: request.ip,
    userAgent: request.headers['user-agent'] ?? '',
    previousCookie: request.cookies[cookieName],
    signal: clientGone(reply),
  });

  const signedIn = (reply: FastifyReply, result: SignedIn) => {
    setSessionCookie(reply, config.session, result.cookieValue);
    const { id, email, name } = result.user;
    return { user: { id, email, name }, ...(config.csrfEnabled ? { csrfToken: result.session.csrfToken } : {}) };
  };

  app.post<{ Body: Static<typeof RegisterBody> }>(
    '/v1/auth/register',
    {
      schema: {
        tags,
        summary: 'Create an account and sign in',
        body: RegisterBody,
        response: { 201: SignedInResponse, ...errorResponses(400, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const result = await auth.register({ ...request.body, ...client(request, reply) });
      request.log.info({ userId: result.user.id, role: result.user.role }, 'user registered');
      return reply.code(201).send(signedIn(reply, result));
    },
  );

  app.post<{ Body: Static<typeof LoginBody> }>(
    '/v1/auth/login',
    {
      preHandler: loginRateLimit(app, (request) => (request.body as Static<typeof LoginBody>).email),
      schema: {
        tags,
        summary: 'Sign in; any session the client came with is ended and a new one issued',
        body: LoginBody,
        response: { 200: SignedInResponse, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const result = await auth.login({ ...request.body, ...client(request, reply) });
      request.log.info({ userId: result.user.id, sessionId: result.session.id }, 'login');
      return signedIn(reply, result);
    },
  );

  app.post(
    '/v1/auth/logout',
    {
      ...protectedRoute,
      schema: { tags, summary: 'End the current session', response: { 200: SuccessSchema, ...errorResponses(401, 403) } },
    },
    async (request, reply) => {
      await sessions.end({ key: caller(request).session.key });
      clearSessionCookie(reply, config.session);
      return { success: true as const };
    },
  );

  app.post(
    '/v1/auth/logout-all',
    {
      ...protectedRoute,
      schema: {
        tags,
        summary: "End every session of the caller's account except the current one",
        response: { 200: SuccessSchema, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { user, session } = caller(request);
      const ended = await sessions.endAllOfUser({ userId: user.id, exceptKey: session.key });
      request.log.info({ userId: user.id, ended }, 'logout-all');
      return { success: true as const };
    },
  );

  app.post<{ Body: Static<typeof PasswordChangeBody> }>(
    '/v1/auth/password',
    {
      ...protectedRoute,
      preHandler: loginRateLimit(app, (request) => caller(request).user.email),
      schema: {
        tags,
        summary: 'Change the password; every session of the account ends and the caller gets a new one',
        body: PasswordChangeBody,
        response: { 200: SuccessSchema, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const result = await auth.changePassword({
        userId: caller(request).user.id,
        currentPassword: request.body.currentPassword,
        newPassword: request.body.newPassword,
        ...client(request, reply),
      });
      setSessionCookie(reply, config.session, result.cookieValue);
      request.log.info({ userId: result.user.id }, 'password changed; all sessions ended');
      return { success: true as const };
    },
  );

  app.get(
    '/v1/auth/csrf',
    {
      onRequest: guards.requireSession,
      schema: { tags, summary: "The current session's anti-forgery token", response: { 200: CsrfResponse, ...errorResponses(401) } },
    },
    async (request) => ({ csrfToken: caller(request).session.csrfToken }),
  );
}
