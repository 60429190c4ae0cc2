/**
 * The OAuth flow of interface §3.2 (one test per row), §4 rules 6–8 and the OAuth errors of §7
 * and decisions §2 and §6, against a real OAuth 2.0 authorization server on loopback that checks
 * the client, the redirect URI and PKCE itself.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKeyFor } from '../../src/sessions/token.js';
import { answerAtProvider, GMAIL_SCOPE } from '../helpers/oauth-provider.js';
import { authorize, callback, callbackPath, connectGmail, startOAuthWorld } from '../helpers/oauth-setup.js';
import { expectErrorBody, mainDatabaseDump, registerUser, sessionStoreDump, sleep, startTrove, UUID_RE, type Client, type Response, type RunningTrove } from '../helpers/trove.js';

function rawGet(url: string, cookie: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const requestPath = url.slice(url.indexOf('/', 'http://'.length));
    const req = httpRequest({ host: hostname, port, path: requestPath, headers: { cookie } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

let world: Awaited<ReturnType<typeof startOAuthWorld>>;
let server: RunningTrove;

beforeAll(async () => {
  world = await startOAuthWorld({
    main: {},
    shortState: { OAUTH_STATE_TTL: '1' },
    wrongSecret: { GMAIL_OAUTH_CLIENT_SECRET: 'not-the-secret-the-provider-knows' },
  });
  server = world.troves.main!;
});
afterAll(async () => {
  await world?.close();
});

async function signedIn(trove = server): Promise<{ client: Client; user: { id: string } }> {
  const client = trove.client();
  const { user } = await registerUser(client);
  return { client, user };
}

function expectRedirect(res: Response, trove: RunningTrove, page: 'success' | 'error', reason?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(302);
  const location = new URL(res.headers.get('location')!);
  expect(location.origin).toBe(trove.config.frontendBaseUrl);
  expect(location.pathname).toBe(`/integrations/oauth/${page}`);
  expect(Object.fromEntries(location.searchParams)).toEqual(
    page === 'success' ? { integration: 'gmail' } : { integration: 'gmail', reason },
  );
}

async function connections(client: Client) {
  const res = await client.get('/v1/user-integrations');
  expect(res.status).toBe(200);
  return res.body.results as Array<Record<string, unknown>>;
}

function bindingCookie(res: Response): string | undefined {
  return res.setCookies.find((line) => line.startsWith('svc_oauth='));
}

describe('authorize', () => {
  it('redirects to the provider with the client, the exact redirect URI, the Gmail scope, offline access, consent and PKCE S256', async () => {
    const { client } = await signedIn();
    const res = await client.get('/v1/user-integration/oauth/gmail/authorize');
    expect(res.status).toBe(302);
    const url = new URL(res.headers.get('location')!);
    expect(url.origin + url.pathname).toBe(`${world.provider.origin}/auth`);
    const params = Object.fromEntries(url.searchParams);
    expect(params).toMatchObject({
      client_id: world.provider.clientId,
      redirect_uri: `${server.baseUrl}${callbackPath('gmail')}`,
      response_type: 'code',
      scope: GMAIL_SCOPE,
      access_type: 'offline',
      prompt: 'consent',
      code_challenge_method: 'S256',
    });
    expect(params.state).toMatch(UUID_RE);
    expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params).not.toHaveProperty('client_secret');
    // The browser-binding cookie: sent back on the provider's cross-site redirect, never readable by scripts.
    const cookie = bindingCookie(res)!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\/v1\/user-integration\/oauth(;|$)/);
    expect(cookie).toMatch(/Max-Age=300(;|$)/);
  });

  it('needs a session', async () => {
    const res = await server.client().get('/v1/user-integration/oauth/gmail/authorize');
    expectErrorBody(res, 401, 'No session cookie');
  });

  it("answers 403 when userId is someone else's, and redirects when it is the caller's own", async () => {
    const { client, user } = await signedIn();
    expectErrorBody(await client.get(`/v1/user-integration/oauth/gmail/authorize?userId=${randomUUID()}`), 403, 'Not your account');
    const res = await client.get(`/v1/user-integration/oauth/gmail/authorize?userId=${user.id}`);
    expect(res.status).toBe(302);
  });

  it('answers 404 for names that are not installed integrations, path tricks included', async () => {
    const { client } = await signedIn();
    const cookie = await client.jar.getCookieString(server.baseUrl);
    for (const name of ['outlook', 'GMAIL', 'Gmail', '..%2fgmail', '%2e%2e', '%2E%2E%2Fgmail', 'gmail%00', 'registry', 'contract']) {
      for (const step of ['authorize', 'callback']) {
        // Sent byte for byte: a URL parser on the client side would resolve %2e%2e before the server saw it.
        const res = await rawGet(`${server.baseUrl}/v1/user-integration/oauth/${name}/${step}?state=x&code=y`, cookie);
        expect(res.status, `${name}/${step}`).toBe(404);
        expect(res.body.message, `${name}/${step}`).toBe('Integration not found');
      }
    }
  });

  it('answers 400 for an installed integration that connects without OAuth (the feed), on both steps', async () => {
    const { client } = await signedIn();
    expectErrorBody(await client.get('/v1/user-integration/oauth/feed/authorize'), 400, 'Integration does not support OAuth');
    expectErrorBody(await client.get('/v1/user-integration/oauth/feed/callback?state=x&code=y'), 400, 'Integration does not support OAuth');
  });

  it('answers 503 naming nothing to the client, but the missing variable in the log, when the client is not configured', async () => {
    const bare = await startTrove({ LOGIN_RATE_LIMIT_MAX: '1000' });
    const half = await startTrove({ LOGIN_RATE_LIMIT_MAX: '1000', GMAIL_OAUTH_CLIENT_ID: 'some-id' });
    try {
      for (const [trove, variable] of [[bare, 'GMAIL_OAUTH_CLIENT_ID'], [half, 'GMAIL_OAUTH_CLIENT_SECRET']] as const) {
        const { client } = await signedIn(trove);
        const res = await client.get('/v1/user-integration/oauth/gmail/authorize');
        expectErrorBody(res, 503, 'Integration not configured');
        expect(JSON.stringify(res.body)).not.toContain(variable);
        const line = trove.logs.find((l) => l.level >= 50 && l.msg.includes(variable));
        expect(line, `no error log line names ${variable}`).toBeDefined();
      }
    } finally {
      await bare.close();
      await half.close();
    }
  });
});

describe('callback', () => {
  it('pending -> connected: exchanges the code, stores the credentials, clears the binding cookie and sends the browser to the success page', async () => {
    const { client } = await signedIn();
    const { res } = await connectGmail(client);
    expectRedirect(res, server, 'success');
    const cleared = bindingCookie(res)!;
    expect(cleared).toMatch(/^svc_oauth=;/);
    expect(cleared).toMatch(/Max-Age=0/i);

    const [connection, ...others] = await connections(client);
    expect(others).toHaveLength(0);
    expect(connection).toEqual({
      id: expect.stringMatching(UUID_RE),
      integration: 'gmail',
      status: 'connected',
      lastError: null,
      itemCount: 0,
      lastSyncAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const page = await client.get(new URL(res.headers.get('location')!).pathname + '?integration=gmail');
    expect(page.status).toBe(200);
    expect(page.body).toContain('connected to <strong>gmail</strong>');
  });

  it('a reconnect replaces the credentials of the live connection instead of adding a second one', async () => {
    const { client } = await signedIn();
    expectRedirect((await connectGmail(client)).res, server, 'success');
    const [first] = await connections(client);
    const before = await server.trove.services.userIntegrations.credentialsOf({ id: first!.id as string });
    expectRedirect((await connectGmail(client)).res, server, 'success');
    const after = await connections(client);
    expect(after).toHaveLength(1);
    expect(after[0]!.id).toBe(first!.id);
    const now = await server.trove.services.userIntegrations.credentialsOf({ id: first!.id as string });
    expect(now!.accessToken).not.toBe(before!.accessToken);
  });

  it('pending -> rejected: an absent state is invalid_state', async () => {
    const { client } = await signedIn();
    const url = await answerAtProvider((await authorize(client)).toString());
    url.searchParams.delete('state');
    expectRedirect(await callback(client, url), server, 'error', 'invalid_state');
    expect(await connections(client)).toHaveLength(0);
  });

  it('pending -> rejected: a state that differs is invalid_state, and does not use up the real one', async () => {
    const { client } = await signedIn();
    const url = await answerAtProvider((await authorize(client)).toString());
    const forged = new URL(url);
    forged.searchParams.set('state', randomUUID());
    expectRedirect(await callback(client, forged), server, 'error', 'invalid_state');
    expectRedirect(await callback(client, url), server, 'success');
  });

  it('pending -> rejected: a state used once is invalid_state the second time', async () => {
    const { client } = await signedIn();
    const { callbackUrl, res } = await connectGmail(client);
    expectRedirect(res, server, 'success');
    expectRedirect(await callback(client, callbackUrl), server, 'error', 'invalid_state');
  });

  it('pending -> rejected: an expired state is invalid_state (OAUTH_STATE_TTL=1)', async () => {
    const trove = world.troves.shortState!;
    const { client } = await signedIn(trove);
    const authorizeRes = await client.get('/v1/user-integration/oauth/gmail/authorize');
    expect(bindingCookie(authorizeRes)).toMatch(/Max-Age=1(;|$)/);
    const url = await answerAtProvider(authorizeRes.headers.get('location')!);
    await sleep(1_100);
    // The browser dropped the cookie with the state's lifetime; sending it anyway shows the server's own expiry check.
    await client.jar.setCookie(`svc_oauth=${/^svc_oauth=([^;]*)/.exec(bindingCookie(authorizeRes)!)![1]}; Path=/v1/user-integration/oauth`, trove.baseUrl);
    expectRedirect(await callback(client, url), trove, 'error', 'invalid_state');
    expect(await connections(client)).toHaveLength(0);
  });

  it('pending -> failed: the provider\'s error param (the user denied) is cancelled, and the state is used up', async () => {
    const { client } = await signedIn();
    const url = await answerAtProvider((await authorize(client)).toString(), 'deny');
    expect(url.searchParams.get('error')).toBe('access_denied');
    expectRedirect(await callback(client, url), server, 'error', 'cancelled');
    expectRedirect(await callback(client, url), server, 'error', 'invalid_state');
    expect(await connections(client)).toHaveLength(0);
  });

  it('an error param with a state this browser never got is invalid_state, not cancelled (the state is checked first)', async () => {
    const { client } = await signedIn();
    await authorize(client);
    const res = await client.get(`${callbackPath('gmail')}?error=access_denied&state=${randomUUID()}`);
    expectRedirect(res, server, 'error', 'invalid_state');
  });

  it('pending -> failed: a code that was already redeemed fails the exchange; logged at error level, without the code', async () => {
    const { client } = await signedIn();
    const first = await connectGmail(client);
    expectRedirect(first.res, server, 'success');
    const usedCode = first.callbackUrl.searchParams.get('code')!;

    const second = await answerAtProvider((await authorize(client)).toString());
    second.searchParams.set('code', usedCode);
    expectRedirect(await callback(client, second), server, 'error', 'exchange_failed');

    const line = server.logs.find((l) => l.level >= 50 && l.msg === 'OAuth token exchange failed');
    expect(line).toBeDefined();
    expect(String(line!.reason)).toMatch(/invalid_grant/);
    expect(JSON.stringify(server.logs)).not.toContain(usedCode);
  });

  it('pending -> failed: the provider refuses the client secret Trove is configured with', async () => {
    const trove = world.troves.wrongSecret!;
    const { client } = await signedIn(trove);
    const { res } = await connectGmail(client);
    expectRedirect(res, trove, 'error', 'exchange_failed');
    expect(trove.logs.some((l) => l.level >= 50 && /invalid_client/.test(String(l.reason)))).toBe(true);
    expect(await connections(client)).toHaveLength(0);
  });

  it("a state issued to user A, completed in user B's browser, is invalid_state and attaches nothing to either", async () => {
    const alice = await signedIn();
    const bob = await signedIn();
    const aliceUrl = await answerAtProvider((await authorize(alice.client)).toString());
    await authorize(bob.client); // Bob even has a binding cookie of his own
    expectRedirect(await callback(bob.client, aliceUrl), server, 'error', 'invalid_state');
    expect(await connections(bob.client)).toHaveLength(0);
    expect(await connections(alice.client)).toHaveLength(0);
  });

  it('a state issued for another integration is invalid_state on this one', async () => {
    const { client, user } = await signedIn();
    // Only Gmail speaks OAuth here, so the pending state of another integration is put in the store directly.
    const secret = server.config.session.secret;
    const state = randomUUID();
    const binding = 'binding-value-for-this-test';
    await server.trove.services.store.saveOAuthState({
      stateKey: storeKeyFor(secret, state),
      sessionKey: storeKeyFor(secret, (await client.sessionCookie())!),
      userId: user.id,
      integration: 'outlook',
      codeVerifier: 'v'.repeat(43),
      bindingKey: storeKeyFor(secret, binding),
      expiresAt: Date.now() + 60_000,
    });
    await client.jar.setCookie(`svc_oauth=${binding}; Path=/v1/user-integration/oauth`, server.baseUrl);
    expectRedirect(await client.get(`${callbackPath('gmail')}?code=abc&state=${state}`), server, 'error', 'invalid_state');
  });

  it('a callback without the binding cookie is invalid_state', async () => {
    const { client } = await signedIn();
    const url = await answerAtProvider((await authorize(client)).toString());
    const stranger = server.client();
    expectRedirect(await callback(stranger, url), server, 'error', 'invalid_state');
    expect(await connections(client)).toHaveLength(0);
  });

  it('a flow whose session was logged out meanwhile cannot complete', async () => {
    const { client } = await signedIn();
    const url = await answerAtProvider((await authorize(client)).toString());
    const binding = (await client.jar.getCookies(server.baseUrl + callbackPath('gmail'))).find((c) => c.key === 'svc_oauth')!;
    expect((await client.post('/v1/auth/logout')).status).toBe(200);
    await client.jar.setCookie(`svc_oauth=${binding.value}; Path=/v1/user-integration/oauth`, server.baseUrl);
    expectRedirect(await callback(client, url), server, 'error', 'invalid_state');
  });

  it('keeps no provider token or client secret in clear in the database files or the log', async () => {
    const { client } = await signedIn();
    expectRedirect((await connectGmail(client)).res, server, 'success');
    const [connection] = await connections(client);
    const credentials = (await server.trove.services.userIntegrations.credentialsOf({ id: connection!.id as string }))!;
    const secrets = [credentials.accessToken, credentials.refreshToken, credentials.clientSecret] as string[];
    expect(secrets.every((s) => typeof s === 'string' && s.length > 10)).toBe(true);
    const dumps = { 'main database': await mainDatabaseDump(server), 'session store': await sessionStoreDump(server) };
    for (const [name, dump] of Object.entries(dumps)) {
      const bytes = dump.bytes.toString('latin1');
      expect(bytes.length, `${name} dump is empty`).toBeGreaterThan(0);
      for (const secret of secrets) expect(bytes.includes(secret), `the ${name} holds a secret in clear`).toBe(false);
    }
    const log = JSON.stringify(server.logs);
    for (const secret of secrets) expect(log.includes(secret), 'the log holds a secret').toBe(false);
  });
});

describe('result pages', () => {
  it('say in plain words what happened, escaping what the query carried', async () => {
    const client = server.client();
    const cases = [
      ['cancelled', 'authorization was cancelled'],
      ['invalid_state', 'invalid state token'],
      ['exchange_failed', 'failed to complete authorization'],
    ];
    for (const [reason, text] of cases) {
      const res = await client.get(`/integrations/oauth/error?integration=gmail&reason=${reason}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.body).toContain(text);
    }
    const hostile = await client.get(`/integrations/oauth/success?integration=${encodeURIComponent('<script>alert(1)</script>')}`);
    expect(hostile.body).not.toContain('<script>alert(1)</script>');
    expect(hostile.body).toContain('&lt;script&gt;');
  });
});
