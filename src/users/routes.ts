import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../http/common-schemas.js';
import { ReadOneSchema, readOne } from '../http/envelope.js';
import { caller, type Guards } from '../http/session-guard.js';

export const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Type.Union([Type.Literal('user'), Type.Literal('admin')]),
  createdAt: Type.String({ format: 'date-time' }),
});

export async function userRoutes(app: FastifyInstance, { guards }: { guards: Guards }) {
  app.get(
    '/v1/user/profile',
    {
      onRequest: guards.requireSession,
      schema: {
        tags: ['user'],
        summary: "The caller's account",
        response: { 200: ReadOneSchema(UserSchema), ...errorResponses(401) },
      },
    },
    // Nothing here waits, so no promise: Fastify sends a returned value at once.
    (request, reply) => readOne(reply, 'user.readOne', caller(request).user),
  );
}
