/**
 * The session state table of interface §3.1, one test per row (expiry and sliding renewal, which
 * need second-long settings, live in session-expiry.test.ts), plus the account rules of
 * decisions §5 that decide who can get a session at all.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GOOD_PASSWORD,
  registerUser,
  sleep,
  startTrove,
  uniqueEmail,
  type Client,
  type Response,
  type RunningTrove,
} from '../helpers/trove.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NEW_PASSWORD = 'Quartz-Meadow-92-violin';

interface SessionItem {
  id: string;
  userId: string;
  createdAt: string;
  lastAccessedAt: string;
  expiresAt: string;
  ipAddress: string;
  userAgent: string;
  metadata: { loginMethod: string };
  current: boolean;
}

/** The one `svc_session` Set-Cookie line of a response, split into value and attributes. */
function sessionSetCookie(res: Response): { value: string; attrs: Record<string, string | true> } {
  const lines = res.setCookies.filter((l) => l.startsWith('svc_session='));
  expect(lines, `Set-Cookie lines: ${JSON.stringify(res.setCookies)}`).toHaveLength(1);
  const [pair = '', ...rest] = lines[0]!.split(';');
  const attrs: Record<string, string | true> = {};
  for (const part of rest.map((p) => p.trim()).filter(Boolean)) {
    const i = part.indexOf('=');
    if (i < 0) attrs[part.toLowerCase()] = true;
    else attrs[part.slice(0, i).toLowerCase()] = part.slice(i + 1);
  }
  return { value: pair.slice(pair.indexOf('=') + 1), attrs };
}

/** The response deletes the cookie in the browser: empty value, expired, same path. */
async function expectCookieCleared(res: Response, client?: Client): Promise<void> {
  const { value, attrs } = sessionSetCookie(res);
  expect(value).toBe('');
  expect(attrs.path).toBe('/');
  const expiredByDate = typeof attrs.expires === 'string' && Date.parse(attrs.expires) < Date.now();
  const expiredByAge = typeof attrs['max-age'] === 'string' && Number(attrs['max-age']) <= 0;
  expect(expiredByDate || expiredByAge, `clearing cookie: ${JSON.stringify(attrs)}`).toBe(true);
  if (client) expect(await client.sessionCookie()).toBeUndefined();
}

function expectError(res: Response, status: number, message: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ statusCode: status, message });
  expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
}

let server: RunningTrove;
let admin: { client: Client; email: string; user: { id: string } };

beforeAll(async () => {
  // Default session settings; only the login limit is raised, as every client here shares one IP.
  server = await startTrove({ LOGIN_RATE_LIMIT_MAX: '1000' });
  const client = server.client();
  // The first account on an empty instance is its admin (decisions §5).
  const { email, user } = await registerUser(client, { email: uniqueEmail('admin'), name: 'Admin' });
  admin = { client, email, user };
});
afterAll(async () => {
  await server?.close();
});

async function login(client: Client, email: string, password = GOOD_PASSWORD): Promise<Response> {
  const res = await client.post('/v1/auth/login', { email, password });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res;
}

/** A browser of its own that carries the given cookie value. */
async function withCookie(value: string): Promise<Client> {
  const client = server.client();
  await client.setSessionCookie(value);
  return client;
}

async function cookieOf(client: Client): Promise<string> {
  const value = await client.sessionCookie();
  expect(value).toBeDefined();
  return value!;
}

async function sessionsOf(client: Client, prefix = '/v1/user/sessions'): Promise<SessionItem[]> {
  const res = await client.get(prefix);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.results as SessionItem[];
}

async function currentSessionId(client: Client): Promise<string> {
  const current = (await sessionsOf(client)).filter((s) => s.current);
  expect(current).toHaveLength(1);
  return current[0]!.id;
}

/** The cookie value no longer opens anything. */
async function expectRefused(cookieValue: string, message = 'Invalid session'): Promise<void> {
  const res = await (await withCookie(cookieValue)).get('/v1/user/profile');
  expectError(res, 401, message);
}

async function expectActive(client: Client): Promise<void> {
  const res = await client.get('/v1/user/profile');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** One account signed in from `count` browsers; the first one registered. */
async function userWithSessions(count: number) {
  const first = server.client();
  const { email, password, user } = await registerUser(first);
  const clients = [first];
  for (let i = 1; i < count; i++) {
    const c = server.client();
    await login(c, email, password);
    clients.push(c);
  }
  return { email, password, user, clients };
}

describe('none → active', () => {
  it('register answers 201 with only id, email and name, creates the user and a session, and sets the cookie', async () => {
    const client = server.client();
    const email = uniqueEmail('reg');
    const res = await client.post('/v1/auth/register', { email, name: 'Reggie', password: GOOD_PASSWORD });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({ user: { id: expect.any(String), email, name: 'Reggie' } });

    const cookie = sessionSetCookie(res);
    expect(cookie.value).toMatch(UUID_V4);
    expect(await client.sessionCookie()).toBe(cookie.value);

    const profile = await client.get('/v1/user/profile');
    expect(profile.status).toBe(200);
    expect(profile.body.result).toMatchObject({ id: res.body.user.id, email, name: 'Reggie', role: 'user' });
    const sessions = await sessionsOf(client);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ userId: res.body.user.id, current: true });

    // The password hash is real: the account can log in with it.
    await login(server.client(), email);
  });

  it('login answers 200 with the user and a new session beside the existing ones', async () => {
    const first = server.client();
    const { email, user } = await registerUser(first, { name: 'Lou' });
    const second = server.client();
    const res = await login(second, email);
    expect(res.body).toEqual({ user: { id: user.id, email, name: 'Lou' } });

    const cookie = sessionSetCookie(res);
    expect(cookie.value).toMatch(UUID_V4);
    expect(cookie.value).not.toBe(await cookieOf(first));
    await expectActive(first);
    await expectActive(second);
    const sessions = await sessionsOf(second);
    expect(sessions).toHaveLength(2);
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
  });

  it('login with a wrong password or an unknown email answers 401 and sets no cookie', async () => {
    const { email } = await registerUser(server.client());
    const client = server.client();
    for (const body of [
      { email, password: 'Wrong-password-123' },
      { email: uniqueEmail('nobody'), password: GOOD_PASSWORD },
    ]) {
      const res = await client.post('/v1/auth/login', body);
      expectError(res, 401, 'Invalid email or password');
      expect(res.setCookies.filter((l) => l.startsWith('svc_session=') && !l.startsWith('svc_session=;'))).toEqual([]);
    }
    expect(await client.sessionCookie()).toBeUndefined();
  });
});

describe('active (pre-login session) → successful login (fixation protection)', () => {
  it('deletes the session the client came with and issues a new id', async () => {
    const client = server.client();
    const { email } = await registerUser(client);
    const before = await cookieOf(client);
    const beforeId = await currentSessionId(client);

    const res = await login(client, email);
    const after = sessionSetCookie(res).value;
    expect(after).toMatch(UUID_V4);
    expect(after).not.toBe(before);
    expect(await client.sessionCookie()).toBe(after);

    await expectRefused(before);
    await expectActive(client);
    const sessions = await sessionsOf(client);
    expect(sessions.map((s) => s.id)).not.toContain(beforeId);
    expect(sessions).toHaveLength(1);
  });

  it('also ends a planted session of another account when someone logs in on that browser', async () => {
    const attacker = server.client();
    await registerUser(attacker);
    const planted = await cookieOf(attacker);
    const victimBrowser = await withCookie(planted);
    const { email } = await registerUser(server.client());

    await login(victimBrowser, email);
    expect(await victimBrowser.sessionCookie()).not.toBe(planted);
    await expectRefused(planted);
    const profile = await victimBrowser.get('/v1/user/profile');
    expect(profile.body.result.email).toBe(email);
  });
});

describe('active → any authenticated request', () => {
  it('updates lastAccessedAt of the session used (seen in the session list) without re-sending the cookie', async () => {
    const { clients } = await userWithSessions(2);
    const [watcher, worker] = clients as [Client, Client];
    const workerId = await currentSessionId(worker);
    const find = async () => (await sessionsOf(watcher)).find((s) => s.id === workerId)!;

    const before = await find();
    await sleep(30);
    const res = await worker.get('/v1/user/profile');
    expect(res.status).toBe(200);
    // Seven days left is far from the one-day renewal threshold: no cookie needed.
    expect(res.setCookies.filter((l) => l.startsWith('svc_session='))).toEqual([]);

    const after = await find();
    expect(Date.parse(after.lastAccessedAt)).toBeGreaterThan(Date.parse(before.lastAccessedAt));
    expect(after.createdAt).toBe(before.createdAt);
    expect(after.expiresAt).toBe(before.expiresAt);
  });

  const protectedRoutes: [string, string, unknown?][] = [
    ['GET', '/v1/user/profile'],
    ['GET', '/v1/user/sessions'],
    ['GET', '/v1/auth/sessions'],
    ['POST', '/v1/auth/logout'],
    ['POST', '/v1/auth/logout-all'],
    ['POST', '/v1/auth/password', { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD }],
    ['DELETE', `/v1/auth/sessions/${randomUUID()}`],
    ['DELETE', `/v1/user/sessions/${randomUUID()}`],
    ['POST', `/v1/admin/users/${randomUUID()}/force-logout`],
  ];

  it.each(protectedRoutes)('%s %s without a cookie: 401 No session cookie, cookie cleared', async (method, path, body) => {
    const client = server.client();
    const res = await client.request(method, path, body);
    expectError(res, 401, 'No session cookie');
    expect(res.body.error).toBe('Unauthorized');
    await expectCookieCleared(res, client);
  });

  it('with an unknown session id: 401 Invalid session, cookie cleared', async () => {
    for (const value of [randomUUID(), 'not-a-session-id']) {
      const client = await withCookie(value);
      const res = await client.get('/v1/user/profile');
      expectError(res, 401, 'Invalid session');
      await expectCookieCleared(res, client);
    }
  });

  it('whose user is gone: 401 User not found, session deleted, cookie cleared', async () => {
    const { clients, user } = await userWithSessions(1);
    const client = clients[0]!;
    const cookie = await cookieOf(client);
    // Through the repository, so only the user row changes and the session is still in the store.
    expect(await server.trove.services.users.softDelete({ id: user.id })).toBe(true);

    const res = await client.get('/v1/user/profile');
    expectError(res, 401, 'User not found');
    await expectCookieCleared(res, client);
    // The session was deleted, not just refused.
    await expectRefused(cookie, 'Invalid session');
  });
});

describe('active → POST /v1/auth/logout', () => {
  it('answers { success: true }, clears the cookie and deletes only that session', async () => {
    const { clients } = await userWithSessions(2);
    const [client, other] = clients as [Client, Client];
    const cookie = await cookieOf(client);

    const res = await client.post('/v1/auth/logout');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    await expectCookieCleared(res, client);

    expectError(await client.get('/v1/user/profile'), 401, 'No session cookie');
    await expectRefused(cookie);
    await expectActive(other);
    expect(await sessionsOf(other)).toHaveLength(1);
  });
});

describe('active → DELETE of a session by id', () => {
  it.each(['/v1/auth/sessions', '/v1/user/sessions'])(
    'DELETE %s/:id of my other session: { success: true }, that session refused, mine stays',
    async (prefix) => {
      const { clients } = await userWithSessions(3);
      const [me, target, bystander] = clients as [Client, Client, Client];
      const targetId = await currentSessionId(target);
      const targetCookie = await cookieOf(target);

      const res = await me.delete(`${prefix}/${targetId}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ success: true });
      // The caller's cookie is left alone.
      expect(res.setCookies.filter((l) => l.startsWith('svc_session='))).toEqual([]);

      expectError(await target.get('/v1/user/profile'), 401, 'Invalid session');
      await expectRefused(targetCookie);
      await expectActive(me);
      await expectActive(bystander);
      const ids = (await sessionsOf(me, prefix)).map((s) => s.id);
      expect(ids).toHaveLength(2);
      expect(ids).not.toContain(targetId);
    },
  );

  it('deleting my own current session by id ends it', async () => {
    const { clients } = await userWithSessions(1);
    const me = clients[0]!;
    const cookie = await cookieOf(me);
    const res = await me.delete(`/v1/user/sessions/${await currentSessionId(me)}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    await expectRefused(cookie);
  });

  it.each(['/v1/auth/sessions', '/v1/user/sessions'])(
    "DELETE %s/:id of another user's session: 403 Not your session, and it stays active",
    async (prefix) => {
      const mine = await userWithSessions(1);
      const theirs = await userWithSessions(1);
      const theirId = await currentSessionId(theirs.clients[0]!);

      const res = await mine.clients[0]!.delete(`${prefix}/${theirId}`);
      expectError(res, 403, 'Not your session');
      expect(res.body.error).toBe('Forbidden');
      await expectActive(theirs.clients[0]!);
      await expectActive(mine.clients[0]!);
      // Other people's sessions are not listed either.
      expect((await sessionsOf(mine.clients[0]!, prefix)).map((s) => s.id)).not.toContain(theirId);
    },
  );

  it.each(['/v1/auth/sessions', '/v1/user/sessions'])('DELETE %s/:id of an unknown id: 404 Session not found', async (prefix) => {
    const { clients } = await userWithSessions(1);
    const res = await clients[0]!.delete(`${prefix}/${randomUUID()}`);
    expectError(res, 404, 'Session not found');
    await expectActive(clients[0]!);
  });
});

describe('active → POST /v1/auth/logout-all', () => {
  it("deletes every other session of the caller's account, keeps the current one and other accounts' sessions", async () => {
    const { clients } = await userWithSessions(3);
    const [me, ...others] = clients as [Client, Client, Client];
    const otherCookies = await Promise.all(others.map(cookieOf));
    const stranger = await userWithSessions(1);

    const res = await me.post('/v1/auth/logout-all');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });

    for (const cookie of otherCookies) await expectRefused(cookie);
    await expectActive(me);
    const sessions = await sessionsOf(me, '/v1/auth/sessions');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.current).toBe(true);
    await expectActive(stranger.clients[0]!);
  });
});

describe('active → POST /v1/admin/users/:userId/force-logout', () => {
  it('by an admin: { success: true }, every session of that user refused, who can log in again', async () => {
    expect((await admin.client.get('/v1/user/profile')).body.result.role).toBe('admin');
    const target = await userWithSessions(2);
    const cookies = await Promise.all(target.clients.map(cookieOf));

    const res = await admin.client.post(`/v1/admin/users/${target.user.id}/force-logout`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ success: true });

    for (const cookie of cookies) await expectRefused(cookie);
    await expectActive(admin.client);
    const again = server.client();
    await login(again, target.email);
    await expectActive(again);
  });

  it('by a non-admin: 403 Admin role required, nothing ends', async () => {
    const caller = await userWithSessions(1);
    const target = await userWithSessions(1);
    const res = await caller.clients[0]!.post(`/v1/admin/users/${target.user.id}/force-logout`);
    expectError(res, 403, 'Admin role required');
    await expectActive(target.clients[0]!);
    await expectActive(caller.clients[0]!);
    // Not even against the admin.
    expectError(await caller.clients[0]!.post(`/v1/admin/users/${admin.user.id}/force-logout`), 403, 'Admin role required');
    await expectActive(admin.client);
  });

  it('of an unknown user: 404 User not found', async () => {
    const res = await admin.client.post(`/v1/admin/users/${randomUUID()}/force-logout`);
    expectError(res, 404, 'User not found');
    expect(res.body.error).toBe('Not Found');
    await expectActive(admin.client);
  });
});

describe('active → password change (POST /v1/auth/password)', () => {
  it('deletes every session of the user; the caller gets a new cookie that works', async () => {
    const { email, clients } = await userWithSessions(2);
    const [me, other] = clients as [Client, Client];
    const oldMine = await cookieOf(me);
    const oldOther = await cookieOf(other);

    const res = await me.post('/v1/auth/password', { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ success: true });
    const fresh = sessionSetCookie(res);
    expect(fresh.value).toMatch(UUID_V4);
    expect(fresh.value).not.toBe(oldMine);
    expect(fresh.attrs['max-age']).toBe('604800');

    await expectRefused(oldMine);
    await expectRefused(oldOther);
    expectError(await other.get('/v1/user/profile'), 401, 'Invalid session');
    await expectActive(me);
    expect(await sessionsOf(me)).toHaveLength(1);

    // The new password is the one that counts now.
    expectError(await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD }), 401, 'Invalid email or password');
    await login(server.client(), email, NEW_PASSWORD);
  });

  it('with a wrong current password: 401 Invalid email or password, nobody is signed out', async () => {
    const { email, clients } = await userWithSessions(2);
    const [me, other] = clients as [Client, Client];
    const cookie = await cookieOf(me);

    const res = await me.post('/v1/auth/password', { currentPassword: 'Not-my-password-55', newPassword: NEW_PASSWORD });
    expectError(res, 401, 'Invalid email or password');
    expect(await me.sessionCookie()).toBe(cookie);
    await expectActive(me);
    await expectActive(other);
    await login(server.client(), email, GOOD_PASSWORD);
  });
});

describe('accounts: who can get a session', () => {
  it('trims and lower-cases emails on register and login', async () => {
    const local = `ann${Date.now()}`;
    const client = server.client();
    const res = await client.post('/v1/auth/register', { email: `  ${local}@Example.COM `, name: 'Ann', password: GOOD_PASSWORD });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.user.email).toBe(`${local}@example.com`);
    expect((await client.get('/v1/user/profile')).body.result.email).toBe(`${local}@example.com`);

    const id = res.body.user.id;
    expect((await login(server.client(), `${local}@example.com`)).body.user.id).toBe(id);
    expect((await login(server.client(), ` ${local.toUpperCase()}@EXAMPLE.com  `)).body.user.id).toBe(id);
    // Same address in another spelling is the same account.
    const dup = await server.client().post('/v1/auth/register', { email: `${local}@example.com`, name: 'Ann 2', password: GOOD_PASSWORD });
    expectError(dup, 409, 'Email already registered');
  });

  it('a soft-deleted user cannot log in, and the email can register again as a new account', async () => {
    const { email, user } = await registerUser(server.client());
    expect(await server.trove.services.users.softDelete({ id: user.id })).toBe(true);

    expectError(await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD }), 401, 'Invalid email or password');

    const client = server.client();
    const again = await client.post('/v1/auth/register', { email, name: 'Second life', password: NEW_PASSWORD });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.user.id).not.toBe(user.id);
    expect(again.body.user.email).toBe(email);

    const res = await login(server.client(), email, NEW_PASSWORD);
    expect(res.body.user).toEqual({ id: again.body.user.id, email, name: 'Second life' });
    // The old account's password no longer opens anything.
    expectError(await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD }), 401, 'Invalid email or password');
  });
});
