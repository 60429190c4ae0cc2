import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { AdminRequiredError, UserNotFoundError } from '../domain-errors.js';
import { errorResponses, SuccessSchema } from '../http/common-schemas.js';
import { clearSessionCookie } from '../http/session-cookie.js';
import { caller, type Guards } from '../http/session-guard.js';
import type { SessionService } from '../sessions/service.js';
import type { UsersRepository } from './repository.js';

// 100 is also Fastify's limit on a path parameter's length.
const UserIdParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 100 }) });

export async function adminRoutes(
  app: FastifyInstance,
  deps: { users: UsersRepository; sessions: SessionService; guards: Guards },
) {
  const { users, sessions, guards } = deps;

  app.post<{ Params: Static<typeof UserIdParams> }>(
    '/v1/admin/users/:userId/force-logout',
    {
      onRequest: guards.requireSession,
      preValidation: guards.verifyCsrf,
      schema: {
        tags: ['admin'],
        summary: 'End every session of a user (admins only)',
        params: UserIdParams,
        response: { 200: SuccessSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const admin = caller(request).user;
      if (admin.role !== 'admin') throw new AdminRequiredError();
      const target = await users.findById({ id: request.params.userId });
      if (!target) throw new UserNotFoundError();
      const ended = await sessions.endAllOfUser({ userId: target.id });
      if (target.id === admin.id) clearSessionCookie(reply, app.troveConfig.session);
      request.log.info({ adminId: admin.id, userId: target.id, ended }, 'force-logout');
      return { success: true as const };
    },
  );
}
