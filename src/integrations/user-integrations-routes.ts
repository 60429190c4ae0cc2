import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { errorResponses, SuccessSchema } from '../http/common-schemas.js';
import { ReadManySchema, ReadOneSchema, readMany, readOne } from '../http/envelope.js';
import { ListQuery, pageRequest } from '../http/list-query.js';
import { caller, type Guards } from '../http/session-guard.js';
import type { UserIntegration } from './repository.js';
import type { UserIntegrationsService } from './service.js';

/** A connection as clients see it: never its credentials. */
const UserIntegrationItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  integration: Type.String({ examples: ['gmail'] }),
  status: Type.Union([Type.Literal('connected'), Type.Literal('syncing'), Type.Literal('error'), Type.Literal('disconnected')]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  itemCount: Type.Integer({ minimum: 0 }),
  lastSyncAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const ConnectBody = Type.Object(
  {
    integration: Type.String({ maxLength: 100, examples: ['feed'] }),
    credentials: Type.Object({}, { additionalProperties: true, description: "validated against the integration's credentialsSchema" }),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

const view = ({ userId: _userId, ...rest }: UserIntegration) => rest;

/** The caller's connected integrations (decisions §7). */
export async function userIntegrationRoutes(
  app: FastifyInstance,
  { userIntegrations, guards }: { userIntegrations: UserIntegrationsService; guards: Guards },
) {
  const tags = ['integrations'];

  app.get<{ Querystring: ListQuery }>(
    '/v1/user-integrations',
    {
      onRequest: guards.requireSession,
      schema: {
        tags,
        summary: "The caller's connected integrations, newest first",
        querystring: ListQuery,
        response: { 200: ReadManySchema(UserIntegrationItem), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const page = await userIntegrations.list({ userId: caller(request).user.id, ...pageRequest(request.query) });
      return readMany(reply, 'userIntegration.readMany', { ...page, results: page.results.map(view) });
    },
  );

  app.post<{ Body: Static<typeof ConnectBody> }>(
    '/v1/user-integrations',
    {
      onRequest: guards.requireSession,
      preValidation: guards.verifyCsrf,
      schema: {
        tags,
        summary: 'Connect an integration that takes credentials (not OAuth); they are checked with the provider, then stored encrypted',
        body: ConnectBody,
        response: { 201: ReadOneSchema(UserIntegrationItem), ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const { user } = caller(request);
      const connected = await userIntegrations.connectWithCredentials({ userId: user.id, ...request.body });
      request.log.info({ userId: user.id, integration: connected.integration, userIntegrationId: connected.id }, 'integration connected');
      return reply.code(201).send(readOne(reply, 'userIntegration.readOne', view(connected)));
    },
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/v1/user-integrations/:id',
    {
      onRequest: guards.requireSession,
      preValidation: guards.verifyCsrf,
      schema: {
        tags,
        summary: 'Disconnect one of the caller’s integrations (soft delete; its credentials are no longer used)',
        params: IdParams,
        response: { 200: SuccessSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { user } = caller(request);
      await userIntegrations.disconnect({ userId: user.id, id: request.params.id.toLowerCase() });
      request.log.info({ userId: user.id, userIntegrationId: request.params.id }, 'integration disconnected');
      return { success: true as const };
    },
  );
}
