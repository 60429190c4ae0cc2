import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorBody, GOOD_PASSWORD, registerUser, startTrove, uniqueEmail, type Client, type RunningTrove } from '../helpers/trove.js';

// The optional anti-forgery token (interface §5.4, decisions §4).
const NEW_PASSWORD = 'quiet-Orchard-83-kettle';

/** A signed-in client with its token (from the register answer). */
async function signUp(server: RunningTrove): Promise<{ c: Client; email: string; token: string; userId: string }> {
  const c = server.client();
  const email = uniqueEmail('csrf');
  const res = await c.post('/v1/auth/register', { email, password: GOOD_PASSWORD, name: 'Csrf User' });
  expect(res.status).toBe(201);
  return { c, email, token: res.body.csrfToken, userId: res.body.user.id };
}

async function signIn(server: RunningTrove, email: string, password = GOOD_PASSWORD): Promise<{ c: Client; token: string }> {
  const c = server.client();
  const res = await c.post('/v1/auth/login', { email, password });
  expect(res.status).toBe(200);
  return { c, token: res.body.csrfToken };
}

const currentSessionId = async (c: Client): Promise<string> =>
  (await c.get('/v1/user/sessions')).body.results.find((s: { current: boolean }) => s.current).id;

describe('CSRF_ENABLED=false (the default)', () => {
  let server: RunningTrove;
  beforeAll(async () => { server = await startTrove({ LOGIN_RATE_LIMIT_MAX: '1000' }); });
  afterAll(async () => { await server.close(); });

  it('register and login answer no token, and state-changing requests work without one', async () => {
    const c = server.client();
    const reg = await c.post('/v1/auth/register', { email: uniqueEmail('nocsrf'), password: GOOD_PASSWORD, name: 'No Csrf' });
    expect(reg.status).toBe(201);
    expect(reg.body.csrfToken).toBeUndefined();
    const email = reg.body.user.email as string;

    const other = server.client();
    const login = await other.post('/v1/auth/login', { email, password: GOOD_PASSWORD });
    expect(login.status).toBe(200);
    expect(login.body.csrfToken).toBeUndefined();
    const third = server.client();
    await third.post('/v1/auth/login', { email, password: GOOD_PASSWORD });
    const fourth = server.client();
    await fourth.post('/v1/auth/login', { email, password: GOOD_PASSWORD });

    expect((await c.delete(`/v1/user/sessions/${await currentSessionId(other)}`)).body).toEqual({ success: true });
    expect((await c.delete(`/v1/auth/sessions/${await currentSessionId(third)}`)).body).toEqual({ success: true });
    expect((await c.post('/v1/auth/logout-all')).body).toEqual({ success: true });
    expect((await fourth.get('/v1/user/profile')).status).toBe(401);
    expect((await c.post('/v1/auth/password', { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD })).body).toEqual({ success: true });
    expect((await c.post('/v1/auth/logout')).body).toEqual({ success: true });
    expect((await c.get('/v1/user/profile')).status).toBe(401);
  });
});

describe('CSRF_ENABLED=true', () => {
  let server: RunningTrove;
  let admin: Awaited<ReturnType<typeof signUp>>;
  beforeAll(async () => {
    server = await startTrove({ CSRF_ENABLED: 'true', LOGIN_RATE_LIMIT_MAX: '1000' });
    admin = await signUp(server); // first account: admin
  });
  afterAll(async () => { await server.close(); });

  it('register and login answer a token; GET /v1/auth/csrf gives the same one, one per session', async () => {
    const { c, email, token } = await signUp(server);
    expect(token).toEqual(expect.any(String));
    expect(token.length).toBeGreaterThanOrEqual(20);
    expect((await c.get('/v1/auth/csrf')).body).toEqual({ csrfToken: token });
    expect((await c.get('/v1/auth/csrf')).body).toEqual({ csrfToken: token });

    const second = await signIn(server, email);
    expect(second.token).toEqual(expect.any(String));
    expect(second.token).not.toBe(token);
    expect((await second.c.get('/v1/auth/csrf')).body).toEqual({ csrfToken: second.token });
    // The first session keeps its own token.
    expect((await c.get('/v1/auth/csrf')).body).toEqual({ csrfToken: token });
  });

  it('GET /v1/auth/csrf needs a session', async () => {
    expectErrorBody(await server.client().get('/v1/auth/csrf'), 401, 'No session cookie');
  });

  it('GET requests need no token', async () => {
    const { c } = await signUp(server);
    expect((await c.get('/v1/user/profile')).status).toBe(200);
    expect((await c.get('/v1/user/sessions')).status).toBe(200);
    expect((await c.get('/v1/auth/sessions')).status).toBe(200);
    expect((await c.get('/')).status).toBe(200);
  });

  describe('POST /v1/auth/logout', () => {
    it('without a token or with a wrong one is 403 and the session stays', async () => {
      const { c, token } = await signUp(server);
      expectErrorBody(await c.post('/v1/auth/logout'), 403, 'Invalid CSRF token');
      expectErrorBody(await c.post('/v1/auth/logout', {}), 403, 'Invalid CSRF token');
      expectErrorBody(await c.post('/v1/auth/logout', undefined, { 'x-csrf-token': 'wrong' }), 403, 'Invalid CSRF token');
      expectErrorBody(await c.post('/v1/auth/logout', undefined, { 'x-csrf-token': '' }), 403, 'Invalid CSRF token');
      const sameLength = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      expectErrorBody(await c.post('/v1/auth/logout', { csrfToken: sameLength }), 403, 'Invalid CSRF token');
      expectErrorBody(await c.post('/v1/auth/logout', { csrfToken: 12345 }), 403, 'Invalid CSRF token');
      expect((await c.get('/v1/user/profile')).status).toBe(200);
    });

    it('with the token in the X-CSRF-Token header succeeds', async () => {
      const { c, token } = await signUp(server);
      expect((await c.post('/v1/auth/logout', undefined, { 'x-csrf-token': token })).body).toEqual({ success: true });
      expect((await c.get('/v1/user/profile')).status).toBe(401);
    });

    it('with the token in the body field csrfToken succeeds', async () => {
      const { c, token } = await signUp(server);
      expect((await c.post('/v1/auth/logout', { csrfToken: token })).body).toEqual({ success: true });
      expect((await c.get('/v1/user/profile')).status).toBe(401);
    });
  });

  describe('POST /v1/auth/logout-all', () => {
    it('is refused without the right token, and works with it (header or body)', async () => {
      const { c, email, token } = await signUp(server);
      const other = await signIn(server, email);
      expectErrorBody(await c.post('/v1/auth/logout-all'), 403, 'Invalid CSRF token');
      expectErrorBody(await c.post('/v1/auth/logout-all', { csrfToken: 'nope' }), 403, 'Invalid CSRF token');
      expect((await other.c.get('/v1/user/profile')).status).toBe(200);

      expect((await c.post('/v1/auth/logout-all', undefined, { 'x-csrf-token': token })).body).toEqual({ success: true });
      expect((await other.c.get('/v1/user/profile')).status).toBe(401);
      expect((await c.get('/v1/user/profile')).status).toBe(200);

      const third = await signIn(server, email);
      expect((await c.post('/v1/auth/logout-all', { csrfToken: token })).body).toEqual({ success: true });
      expect((await third.c.get('/v1/user/profile')).status).toBe(401);
    });
  });

  describe('POST /v1/auth/password', () => {
    it('without a token or with a wrong one is 403 and the password stays', async () => {
      const { c, email } = await signUp(server);
      const change = { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD };
      expectErrorBody(await c.post('/v1/auth/password', change), 403, 'Invalid CSRF token');
      expectErrorBody(await c.post('/v1/auth/password', change, { 'x-csrf-token': randomBytes(32).toString('base64url') }), 403, 'Invalid CSRF token');
      expectErrorBody(await c.post('/v1/auth/password', { ...change, csrfToken: 'wrong' }), 403, 'Invalid CSRF token');
      expect((await c.get('/v1/user/profile')).status).toBe(200);
      expect((await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
      expectErrorBody(await server.client().post('/v1/auth/login', { email, password: NEW_PASSWORD }), 401, 'Invalid email or password');
    });

    it('with the token in the body succeeds; the fresh session has a fresh token and the old one is refused', async () => {
      const { c, email, token } = await signUp(server);
      const res = await c.post('/v1/auth/password', { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD, csrfToken: token });
      expect(res.body).toEqual({ success: true });
      expect((await server.client().post('/v1/auth/login', { email, password: NEW_PASSWORD })).status).toBe(200);

      const fresh = (await c.get('/v1/auth/csrf')).body.csrfToken as string;
      expect(fresh).toEqual(expect.any(String));
      expect(fresh).not.toBe(token);
      expectErrorBody(await c.post('/v1/auth/logout', undefined, { 'x-csrf-token': token }), 403, 'Invalid CSRF token');
      expect((await c.post('/v1/auth/logout', undefined, { 'x-csrf-token': fresh })).body).toEqual({ success: true });
    });

    it('with the token in the header succeeds', async () => {
      const { c, email, token } = await signUp(server);
      const res = await c.post('/v1/auth/password', { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD }, { 'x-csrf-token': token });
      expect(res.body).toEqual({ success: true });
      expect((await server.client().post('/v1/auth/login', { email, password: NEW_PASSWORD })).status).toBe(200);
    });
  });

  describe.each(['/v1/user/sessions', '/v1/auth/sessions'])('DELETE %s/:sessionId', (prefix) => {
    it('is refused without the right token and works with it (header or body)', async () => {
      const { c, email, token } = await signUp(server);
      const a = await signIn(server, email);
      const b = await signIn(server, email);
      const aId = await currentSessionId(a.c);
      const bId = await currentSessionId(b.c);

      expectErrorBody(await c.delete(`${prefix}/${aId}`), 403, 'Invalid CSRF token');
      expectErrorBody(await c.delete(`${prefix}/${aId}`, { 'x-csrf-token': 'wrong' }), 403, 'Invalid CSRF token');
      expectErrorBody(await c.request('DELETE', `${prefix}/${aId}`, { csrfToken: 'wrong' }), 403, 'Invalid CSRF token');
      expect((await a.c.get('/v1/user/profile')).status).toBe(200);

      expect((await c.delete(`${prefix}/${aId}`, { 'x-csrf-token': token })).body).toEqual({ success: true });
      expect((await a.c.get('/v1/user/profile')).status).toBe(401);
      expect((await c.request('DELETE', `${prefix}/${bId}`, { csrfToken: token })).body).toEqual({ success: true });
      expect((await b.c.get('/v1/user/profile')).status).toBe(401);
    });
  });

  describe('POST /v1/admin/users/:userId/force-logout', () => {
    it('is refused without the right token and works with it', async () => {
      const target = await signUp(server);
      expectErrorBody(await admin.c.post(`/v1/admin/users/${target.userId}/force-logout`), 403, 'Invalid CSRF token');
      expectErrorBody(await admin.c.post(`/v1/admin/users/${target.userId}/force-logout`, { csrfToken: target.token }), 403, 'Invalid CSRF token');
      expect((await target.c.get('/v1/user/profile')).status).toBe(200);
      const res = await admin.c.post(`/v1/admin/users/${target.userId}/force-logout`, undefined, { 'x-csrf-token': admin.token });
      expect(res.body).toEqual({ success: true });
      expect((await target.c.get('/v1/user/profile')).status).toBe(401);
    });
  });

  it("another session's token is refused, whether it belongs to another user or the same one", async () => {
    const me = await signUp(server);
    const stranger = await signUp(server);
    const mine2 = await signIn(server, me.email);

    for (const foreign of [stranger.token, mine2.token]) {
      expectErrorBody(await me.c.post('/v1/auth/logout', undefined, { 'x-csrf-token': foreign }), 403, 'Invalid CSRF token');
      expectErrorBody(await me.c.post('/v1/auth/logout', { csrfToken: foreign }), 403, 'Invalid CSRF token');
      expectErrorBody(await me.c.post('/v1/auth/logout-all', undefined, { 'x-csrf-token': foreign }), 403, 'Invalid CSRF token');
    }
    expect((await me.c.get('/v1/user/profile')).status).toBe(200);
    expect((await mine2.c.get('/v1/user/profile')).status).toBe(200);
    expect((await stranger.c.get('/v1/user/profile')).status).toBe(200);
  });

  it('login and register need no token (there is no session yet)', async () => {
    const { email } = await registerUser(server.client());
    expect((await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
  });
});
