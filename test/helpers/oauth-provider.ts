import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { CookieJar } from 'tough-cookie';

export const GMAIL_SCOPE = 'https://www.googleapis.com/auth/gmail.readonly';

export interface OAuthProvider {
  /** e.g. http://localhost:40123 */
  origin: string;
  clientId: string;
  clientSecret: string;
  /** The GMAIL_* variables that point Trove at this server. */
  gmailEnv(overrides?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

/**
 * A real OAuth 2.0 authorization server (oidc-provider) on loopback, with one client: the Gmail
 * client of the Troves under test, their exact redirect URIs, PKCE S256 required, client_secret_post.
 * It checks all of those itself. The sign-in and consent step is one small form: Approve or Deny.
 * It also serves the one Gmail API call Trove makes, `GET /gmail/v1/users/me/profile`, accepting
 * only access tokens it issued itself, unexpired, with the Gmail scope.
 */
export async function startOAuthProvider(options: { redirectUris: string[]; hostName?: string; accessTokenTtl?: number }): Promise<OAuthProvider> {
  const hostName = options.hostName ?? '127.0.0.1';
  const clientId = 'trove-gmail-test-client';
  const clientSecret = randomBytes(24).toString('base64url');

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://${hostName}:${port}`;

  const provider = new Provider(origin, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    scopes: ['openid', 'offline_access', GMAIL_SCOPE],
    pkce: { methods: ['S256'], required: () => true },
    // Like Google with access_type=offline: every grant to this client comes with a refresh token.
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    ttl: { AccessToken: options.accessTokenTtl ?? 3600, RefreshToken: 86_400, AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600 },
    // Quiet: tests provoke errors on purpose.
    renderError: async (ctx: { type: string; body: unknown }, out: { error: string; error_description?: string }) => {
      ctx.type = 'application/json';
      ctx.body = out;
    },
  });
  const handleOidc = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string | undefined): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error('interaction mismatch');
    if (req.method === 'GET' && action === undefined) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Test provider</title><h1>Allow Trove to read your mail?</h1>
<form method="post" action="/interaction/${uid}/approve"><button id="approve" type="submit">Approve</button></form>
<form method="post" action="/interaction/${uid}/deny"><button id="deny" type="submit">Deny</button></form>`);
      return;
    }
    if (req.method === 'POST' && action === 'deny') {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user said no' }, { mergeWithLastSubmission: false });
      return;
    }
    if (req.method === 'POST' && action === 'approve') {
      const accountId = 'mailbox-owner';
      const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
      // Without resource indicators, every scope of an opaque access token is granted this way.
      grant.addOIDCScope(details.params.scope);
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
      return;
    }
    res.writeHead(405).end();
  }

  async function profile(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const accessToken = token ? await provider.AccessToken.find(token) : undefined;
    if (!accessToken || accessToken.isExpired || !accessToken.scopes.has(GMAIL_SCOPE)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 401, message: 'Invalid Credentials' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ emailAddress: 'mailbox-owner@example.com', messagesTotal: 3, threadsTotal: 2, historyId: '1' }));
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    const match = /^\/interaction\/([^/]+)(?:\/(approve|deny))?$/.exec(url.pathname);
    const work = match
      ? interaction(req, res, match[1]!, match[2])
      : url.pathname === '/gmail/v1/users/me/profile'
        ? profile(req, res)
        : Promise.resolve(handleOidc(req, res));
    work.catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`provider helper failed: ${err.message}`);
    });
  });

  return {
    origin,
    clientId,
    clientSecret,
    gmailEnv: (overrides = {}) => ({
      GMAIL_OAUTH_CLIENT_ID: clientId,
      GMAIL_OAUTH_CLIENT_SECRET: clientSecret,
      GMAIL_OAUTH_AUTHORIZE_URL: `${origin}/auth`,
      GMAIL_OAUTH_TOKEN_URL: `${origin}/token`,
      GMAIL_API_BASE_URL: origin,
      ...overrides,
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The person at the provider, as a browser would be: follows the provider's redirects with its
 * own cookies, answers the consent form, and stops at the first redirect that leaves the
 * provider (to Trove's callback), returning that URL.
 */
export async function answerAtProvider(authorizationUrl: string, answer: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const jar = new CookieJar();
  let url = new URL(authorizationUrl);
  const providerOrigin = url.origin;
  let method = 'GET';
  for (let hop = 0; hop < 10; hop++) {
    const cookie = await jar.getCookieString(url.toString());
    const res = await fetch(url, { method, redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of res.headers.getSetCookie()) await jar.setCookie(line, url.toString());
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      url = new URL(location, url);
      method = 'GET';
      if (url.origin !== providerOrigin) return url;
      continue;
    }
    const body = await res.text();
    if (res.status === 200 && /^\/interaction\/[^/]+$/.test(url.pathname)) {
      url = new URL(`${url.pathname}/${answer}`, url);
      method = 'POST';
      continue;
    }
    throw new Error(`provider answered ${res.status} at ${url.pathname}: ${body.slice(0, 300)}`);
  }
  throw new Error('too many redirects at the provider');
}
