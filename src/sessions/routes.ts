import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { errorResponses, SuccessSchema } from '../http/common-schemas.js';
import { ReadManySchema, readMany } from '../http/envelope.js';
import { ListQuery, pageRequest } from '../http/list-query.js';
import { clearSessionCookie } from '../http/session-cookie.js';
import { caller, type Guards } from '../http/session-guard.js';
import type { SessionService } from './service.js';

const SessionItem = Type.Object({
  id: Type.String({ format: 'uuid', description: 'public id; never the cookie value' }),
  userId: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  lastAccessedAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  ipAddress: Type.String(),
  userAgent: Type.String(),
  metadata: Type.Object(
    {
      loginMethod: Type.Union([Type.Literal('password'), Type.Literal('oauth')]),
      deviceName: Type.Optional(Type.String()),
      location: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  ),
  current: Type.Boolean({ description: 'true on the session that made this request' }),
});

const SessionIdParams = Type.Object({ sessionId: Type.String({ format: 'uuid' }) });

/**
 * The caller's sessions, under both paths the interface names:
 * /v1/auth/sessions and /v1/user/sessions behave the same.
 */
export async function sessionRoutes(app: FastifyInstance, { sessions, guards }: { sessions: SessionService; guards: Guards }) {
  const config = app.troveConfig;

  for (const prefix of ['/v1/auth/sessions', '/v1/user/sessions']) {
    const tags = [prefix.startsWith('/v1/auth') ? 'auth' : 'user'];

    app.get<{ Querystring: ListQuery }>(
      prefix,
      {
        onRequest: guards.requireSession,
        schema: {
          tags,
          summary: "The caller's active sessions, newest first",
          querystring: ListQuery,
          response: { 200: ReadManySchema(SessionItem), ...errorResponses(400, 401) },
        },
      },
      async (request, reply) => {
        const { user, session } = caller(request);
        const page = await sessions.list({ userId: user.id, currentKey: session.key, ...pageRequest(request.query) });
        return readMany(reply, 'session.readMany', page);
      },
    );

    app.delete<{ Params: Static<typeof SessionIdParams> }>(
      `${prefix}/:sessionId`,
      {
        onRequest: guards.requireSession,
        preValidation: guards.verifyCsrf,
        schema: {
          tags,
          summary: "End one of the caller's sessions by its public id",
          params: SessionIdParams,
          response: { 200: SuccessSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request, reply) => {
        const { user, session } = caller(request);
        const ended = await sessions.endById({ callerId: user.id, id: request.params.sessionId.toLowerCase() });
        if (ended.key === session.key) clearSessionCookie(reply, config.session);
        return { success: true as const };
      },
    );
  }
}
