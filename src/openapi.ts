import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** The OpenAPI description, generated from the route schemas, at /v1/openapi.json; a browsable page at /docs. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Trove',
        version,
        description:
          'Self-hosted search over your own data. Sessions travel in the `svc_session` cookie; ' +
          'when CSRF_ENABLED=true, state-changing requests send the token as `X-CSRF-Token` or the body field `csrfToken`. ' +
          'Every error answer has the shape `{ statusCode, error, message, requestId }`. ' +
          'When the session store or the main database cannot be reached, a route that needs it answers 503 with the message ' +
          '`Session store unavailable` or `Database unavailable`; retry once it is back.',
      },
      components: {
        securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'svc_session' } },
      },
      tags: [
        { name: 'auth', description: 'Accounts and sessions' },
        { name: 'user', description: "The caller's own records" },
        { name: 'admin', description: 'Administration (admin role)' },
        { name: 'integrations', description: 'Installed integrations and the caller\'s connections to them (OAuth or credentials)' },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true, uiConfig: { url: '/v1/openapi.json' } });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
