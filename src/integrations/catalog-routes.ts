import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../http/common-schemas.js';
import { ReadManySchema, readMany } from '../http/envelope.js';
import type { Guards } from '../http/session-guard.js';
import type { UserIntegrationsService } from './service.js';

const IntegrationItem = Type.Object({
  name: Type.String({ examples: ['gmail'] }),
  title: Type.String(),
  description: Type.String(),
  kinds: Type.Array(Type.Union([Type.Literal('email'), Type.Literal('file'), Type.Literal('message'), Type.Literal('feed')])),
  auth: Type.Union([Type.Literal('oauth'), Type.Literal('credentials')]),
  credentialFields: Type.Array(
    Type.Object({
      name: Type.String(),
      label: Type.String(),
      type: Type.Union([Type.Literal('string'), Type.Literal('url'), Type.Literal('password')]),
      required: Type.Boolean(),
      secret: Type.Boolean(),
      description: Type.Optional(Type.String()),
    }),
  ),
  credentialsSchema: Type.Object({}, { additionalProperties: true, description: 'JSON Schema of the credentials' }),
  oauth: Type.Optional(Type.Boolean()),
  configured: Type.Boolean({ description: 'OAuth client id and secret set on this server; true for credentials integrations' }),
});

/** The installed integrations (decisions §7). */
export async function catalogRoutes(app: FastifyInstance, { userIntegrations, guards }: { userIntegrations: UserIntegrationsService; guards: Guards }) {
  app.get(
    '/v1/integrations',
    {
      onRequest: guards.requireSession,
      schema: {
        tags: ['integrations'],
        summary: 'The integrations installed on this server, with their manifests',
        response: { 200: ReadManySchema(IntegrationItem), ...errorResponses(401) },
      },
    },
    async (_request, reply) => {
      const results = await userIntegrations.catalog();
      return readMany(reply, 'integration.readMany', { results, total: results.length, nextCursor: null });
    },
  );
}
