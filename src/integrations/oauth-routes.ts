import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { errorResponses } from '../http/common-schemas.js';
import { caller, type Guards } from '../http/session-guard.js';
import type { FailureReason, OAuthFlowService } from './oauth-flow.js';

/** The browser-binding cookie of a pending flow (see oauth-flow.ts for why it is SameSite=Lax). */
export const BINDING_COOKIE = 'svc_oauth';
const BINDING_PATH = '/v1/user-integration/oauth';

// No pattern: a malformed name must be 404 `Integration not found`, like any name not installed.
const IntegrationParams = Type.Object({ integration: Type.String({ maxLength: 100 }) });
const AuthorizeQuery = Type.Object({ userId: Type.Optional(Type.String({ maxLength: 100 })) });
// Providers add their own parameters (scope, iss, error_description …); they are ignored.
const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 200 })),
    error: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
);

const Redirect = Type.Null({ description: 'redirect; see the Location header' });

export async function oauthRoutes(app: FastifyInstance, { flow, guards }: { flow: OAuthFlowService; guards: Guards }) {
  const config = app.troveConfig;
  const tags = ['integrations'];
  const cookieAttributes = { httpOnly: true, secure: config.session.secure, sameSite: 'lax', path: BINDING_PATH } as const;

  const frontend = (path: string, query: Record<string, string>) =>
    `${config.frontendBaseUrl}${path}?${new URLSearchParams(query).toString()}`;

  const clearBinding = (reply: FastifyReply) =>
    reply.setCookie(BINDING_COOKIE, '', { ...cookieAttributes, expires: new Date(0), maxAge: 0 });

  app.get<{ Params: Static<typeof IntegrationParams>; Querystring: Static<typeof AuthorizeQuery> }>(
    '/v1/user-integration/oauth/:integration/authorize',
    {
      onRequest: guards.requireSession,
      schema: {
        tags,
        summary: "Start connecting an OAuth integration: redirects to the provider's consent page",
        params: IntegrationParams,
        querystring: AuthorizeQuery,
        response: { 302: Redirect, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const { user, session } = caller(request);
      const { url, binding } = await flow.begin({
        integration: request.params.integration,
        callerId: user.id,
        requestedUserId: request.query.userId,
        sessionKey: session.key,
      });
      reply.setCookie(BINDING_COOKIE, binding, { ...cookieAttributes, maxAge: config.oauthStateTtl });
      return reply.redirect(url, 302);
    },
  );

  app.get<{ Params: Static<typeof IntegrationParams>; Querystring: Static<typeof CallbackQuery> }>(
    '/v1/user-integration/oauth/:integration/callback',
    {
      // No session guard: the provider's redirect is cross-site, so the SameSite=Strict session
      // cookie is not sent. The state and the binding cookie identify the flow instead.
      schema: {
        tags,
        summary: 'Where the provider sends the browser back; redirects to the success or error page',
        params: IntegrationParams,
        querystring: CallbackQuery,
        response: { 302: Redirect, ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const { integration } = request.params;
      const outcome = await flow.complete(
        { ...request.query, integration, binding: request.cookies[BINDING_COOKIE] },
        request.log,
      );
      if (outcome.ok) {
        clearBinding(reply);
        return reply.redirect(frontend('/integrations/oauth/success', { integration }), 302);
      }
      request.log.info({ integration, userId: outcome.userId, reason: outcome.reason, detail: outcome.detail }, 'OAuth callback rejected');
      const reason: FailureReason = outcome.reason;
      return reply.redirect(frontend('/integrations/oauth/error', { integration, reason }), 302);
    },
  );
}
