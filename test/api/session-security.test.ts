/**
 * What protects a session (interface §5.2, §5.4; decisions §4): the cookie's attributes, the
 * session list's public ids, a session store that never holds a usable cookie value, a main
 * database without plaintext passwords, and hijack detection on an IP change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GOOD_PASSWORD,
  mainDatabaseDump,
  registerUser,
  sessionStoreDump,
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

interface ParsedCookie {
  name: string;
  value: string;
  /** Attribute names lower-cased; flags map to true. */
  attrs: Record<string, string | true>;
}

function parseSetCookie(line: string): ParsedCookie {
  const [pair = '', ...rest] = line.split(';');
  const attrs: Record<string, string | true> = {};
  for (const part of rest.map((p) => p.trim()).filter(Boolean)) {
    const i = part.indexOf('=');
    if (i < 0) attrs[part.toLowerCase()] = true;
    else attrs[part.slice(0, i).toLowerCase()] = part.slice(i + 1);
  }
  const eq = pair.indexOf('=');
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attrs };
}

/** The one session cookie a response sets. */
function sessionCookieOf(res: Response): ParsedCookie {
  const cookies = res.setCookies.map(parseSetCookie).filter((c) => c.name === 'svc_session');
  expect(cookies, JSON.stringify(res.setCookies)).toHaveLength(1);
  return cookies[0]!;
}

function expectError(res: Response, status: number, message: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ statusCode: status, message });
}

function expectCleared(res: Response): void {
  const { value, attrs } = sessionCookieOf(res);
  expect(value).toBe('');
  const expired =
    (typeof attrs.expires === 'string' && Date.parse(attrs.expires) < Date.now()) ||
    (typeof attrs['max-age'] === 'string' && Number(attrs['max-age']) <= 0);
  expect(expired, JSON.stringify(attrs)).toBe(true);
}

async function withCookie(server: RunningTrove, value: string, options?: Parameters<RunningTrove['client']>[0]): Promise<Client> {
  const client = server.client(options);
  await client.setSessionCookie(value);
  return client;
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

/** The ways a UUID cookie value could sit in a file: as text (any case) or as its 16 raw bytes. */
function expectNotIn(bytes: Buffer, cookieValue: string): void {
  const text = bytes.toString('latin1').toLowerCase();
  expect(text.includes(cookieValue.toLowerCase()), `cookie value ${cookieValue} found`).toBe(false);
  expect(text.includes(cookieValue.replace(/-/g, '').toLowerCase()), `cookie value ${cookieValue} (no dashes) found`).toBe(false);
  expect(bytes.includes(Buffer.from(cookieValue.replace(/-/g, ''), 'hex')), `cookie value ${cookieValue} (binary) found`).toBe(false);
}

describe('with default settings', () => {
  let server: RunningTrove;
  beforeAll(async () => {
    server = await startTrove({ LOGIN_RATE_LIMIT_MAX: '1000' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the session cookie is svc_session=<UUID v4>; HttpOnly; SameSite=Strict; Path=/; Max-Age=604800; no Domain, no Secure', async () => {
    const client = server.client();
    const email = uniqueEmail('attrs');
    const register = await client.post('/v1/auth/register', { email, name: 'Attr', password: GOOD_PASSWORD });
    expect(register.status).toBe(201);
    const login = await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD });
    expect(login.status).toBe(200);
    const change = await client.post('/v1/auth/password', { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD });
    expect(change.status, JSON.stringify(change.body)).toBe(200);

    const values = new Set<string>();
    for (const res of [register, login, change]) {
      const cookie = sessionCookieOf(res);
      expect(cookie.value).toMatch(UUID_V4);
      values.add(cookie.value);
      expect(cookie.attrs.httponly).toBe(true);
      expect(String(cookie.attrs.samesite).toLowerCase()).toBe('strict');
      expect(cookie.attrs.path).toBe('/');
      expect(cookie.attrs['max-age']).toBe('604800');
      if (typeof cookie.attrs.expires === 'string') {
        expect(Math.abs(Date.parse(cookie.attrs.expires) - (Date.now() + 604_800_000))).toBeLessThan(60_000);
      }
      expect(cookie.attrs).not.toHaveProperty('domain');
      expect(cookie.attrs).not.toHaveProperty('secure');
    }
    expect(values.size).toBe(3);
  });

  it('session list items have a public id that is not the cookie value, current only on mine, loginMethod, IP and user agent', async () => {
    const a = server.client({ headers: { 'user-agent': 'TroveTest-A/1.0 (laptop)' } });
    const { email } = await registerUser(a);
    const b = server.client({ localAddress: '127.0.0.2', headers: { 'user-agent': 'TroveTest-B/2.0 (phone)' } });
    expect((await b.post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
    const cookies = [(await a.sessionCookie())!, (await b.sessionCookie())!];

    for (const [client, ip, ua] of [
      [a, '127.0.0.1', 'TroveTest-A/1.0 (laptop)'],
      [b, '127.0.0.2', 'TroveTest-B/2.0 (phone)'],
    ] as const) {
      for (const prefix of ['/v1/auth/sessions', '/v1/user/sessions']) {
        const res = await client.get(prefix);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ operation: 'session.readMany', total: 2 });
        // No cookie value anywhere in the answer.
        for (const value of cookies) expect(JSON.stringify(res.body)).not.toContain(value);

        const items = res.body.results as SessionItem[];
        expect(items).toHaveLength(2);
        const current = items.filter((s) => s.current);
        expect(current).toHaveLength(1);
        expect(current[0]).toMatchObject({ ipAddress: ip, userAgent: ua });
        for (const item of items) {
          expect(item.id).toMatch(/^[0-9a-f-]{36}$/i);
          expect(cookies).not.toContain(item.id);
          expect(item.metadata.loginMethod).toBe('password');
          expect(Date.parse(item.expiresAt) - Date.parse(item.createdAt)).toBe(604_800_000);
        }
        expect(new Set(items.map((s) => s.ipAddress))).toEqual(new Set(['127.0.0.1', '127.0.0.2']));
        expect(new Set(items.map((s) => s.userAgent))).toEqual(new Set(['TroveTest-A/1.0 (laptop)', 'TroveTest-B/2.0 (phone)']));
      }
    }
    // A public id is not a cookie: it opens nothing.
    for (const item of await sessionsOf(a)) {
      expectError(await (await withCookie(server, item.id)).get('/v1/user/profile'), 401, 'Invalid session');
    }
  });

  it('a dump of the session store holds no cookie value, and nothing in it works as a cookie', async () => {
    const cookies: string[] = [];
    const publicIds: string[] = [];
    for (let u = 0; u < 2; u++) {
      const first = server.client();
      const { email } = await registerUser(first);
      cookies.push((await first.sessionCookie())!);
      publicIds.push(await currentSessionId(first));
      for (let i = 0; i < 2; i++) {
        const c = server.client();
        expect((await c.post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
        cookies.push((await c.sessionCookie())!);
        publicIds.push(await currentSessionId(c));
      }
    }
    expect(new Set(cookies).size).toBe(6);

    const { bytes, tables: dump } = await sessionStoreDump(server);
    for (const value of cookies) expectNotIn(bytes, value);

    const text = JSON.stringify(dump).toLowerCase();
    for (const value of cookies) expect(text).not.toContain(value);
    // The dump does hold these sessions (it is the right store), under their public ids.
    for (const id of publicIds) expect(text).toContain(id);

    // Whatever a thief copies out of the store, none of it is accepted as a cookie.
    const stolen = new Set<string>();
    for (const rows of Object.values(dump)) {
      for (const row of rows) for (const v of Object.values(row)) if (typeof v === 'string' && v.length >= 16) stolen.add(v);
    }
    expect(stolen.size).toBeGreaterThan(0);
    for (const value of stolen) {
      const res = await (await withCookie(server, value)).get('/v1/user/profile');
      expect(res.status, `store value ${value} opened a session`).toBe(401);
    }
    // The real cookies still work.
    expect((await (await withCookie(server, cookies[0]!)).get('/v1/user/profile')).status).toBe(200);
  });

  it('the main database holds no plaintext password, only Argon2 hashes', async () => {
    const password = 'Unusual-Marmot-Password-31';
    const client = server.client();
    const { email } = await registerUser(client, { password });
    const changed = 'Another-Okapi-Secret-64';
    expect((await client.post('/v1/auth/password', { currentPassword: password, newPassword: changed })).status).toBe(200);

    const { bytes: raw, tables } = await mainDatabaseDump(server);
    const bytes = raw.toString('latin1');
    for (const p of [password, changed, GOOD_PASSWORD]) expect(bytes.includes(p), `password ${p} in the main database`).toBe(false);

    const dump = JSON.stringify(tables);
    for (const p of [password, changed, GOOD_PASSWORD]) expect(dump).not.toContain(p);
    const hashes = (tables.users ?? []).map((row) => row.password_hash as string);
    expect(hashes.length).toBeGreaterThan(0);
    for (const h of hashes) expect(h).toMatch(/^\$argon2(id|i|d)\$/);
    expect((await server.client().post('/v1/auth/login', { email, password: changed })).status).toBe(200);
  });

  it('neither cookie values nor passwords appear in the server log', async () => {
    const client = server.client();
    const password = 'Logged-Never-Walrus-88';
    const { email } = await registerUser(client, { password });
    await server.client().post('/v1/auth/login', { email, password: 'Wrong-Walrus-Attempt-1' });
    const cookie = (await client.sessionCookie())!;
    expect((await client.get('/v1/user/profile')).status).toBe(200);
    await (await withCookie(server, cookie, { localAddress: '127.0.0.2' })).get('/v1/user/profile');

    const log = JSON.stringify(server.logs);
    expect(log).not.toContain(cookie);
    expect(log).not.toContain(password);
    expect(log).not.toContain('Wrong-Walrus-Attempt-1');
  });

  it('TRUST_PROXY unset: X-Forwarded-For is ignored, the connection address is recorded and compared', async () => {
    const client = server.client({ headers: { 'x-forwarded-for': '203.0.113.9' } });
    await registerUser(client);
    const id = await currentSessionId(client);
    expect((await sessionsOf(client)).find((s) => s.id === id)!.ipAddress).toBe('127.0.0.1');

    const before = server.logs.length;
    const spoofed = await withCookie(server, (await client.sessionCookie())!, { headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect((await spoofed.get('/v1/user/profile')).status).toBe(200);
    expect(server.logs.slice(before).filter((l) => l.level === 40 && JSON.stringify(l).includes(id))).toEqual([]);
  });

  it('a request from another IP is still served, and a warning names both addresses and the session', async () => {
    const a = server.client();
    const { user } = await registerUser(a);
    const id = await currentSessionId(a);

    const before = server.logs.length;
    const b = await withCookie(server, (await a.sessionCookie())!, { localAddress: '127.0.0.2' });
    const res = await b.get('/v1/user/profile');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result.id).toBe(user.id);

    const warnings = server.logs.slice(before).filter((l) => l.level === 40 && JSON.stringify(l).includes(id));
    expect(warnings.length, JSON.stringify(server.logs.slice(before))).toBeGreaterThanOrEqual(1);
    const line = JSON.stringify(warnings[0]);
    expect(line).toContain('127.0.0.1');
    expect(line).toContain('127.0.0.2');
    // An operator can find the request the warning is about.
    expect(warnings[0]!.requestId).toBe(res.headers.get('x-request-id'));

    // Only logged: the session lives on, for both, and keeps its address at creation.
    expect((await a.get('/v1/user/profile')).status).toBe(200);
    expect((await b.get('/v1/user/profile')).status).toBe(200);
    expect((await sessionsOf(a)).find((s) => s.id === id)!.ipAddress).toBe('127.0.0.1');
  });
});

describe('with SESSION_SECURE=true', () => {
  let server: RunningTrove;
  beforeAll(async () => {
    server = await startTrove({ SESSION_SECURE: 'true' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('every session cookie carries Secure, the other attributes unchanged', async () => {
    const client = server.client();
    const email = uniqueEmail('secure');
    const register = await client.post('/v1/auth/register', { email, name: 'Sec', password: GOOD_PASSWORD });
    expect(register.status).toBe(201);
    const login = await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD });
    expect(login.status).toBe(200);
    for (const res of [register, login]) {
      const cookie = sessionCookieOf(res);
      expect(cookie.value).toMatch(UUID_V4);
      expect(cookie.attrs).toMatchObject({ secure: true, httponly: true, path: '/', 'max-age': '604800' });
      expect(String(cookie.attrs.samesite).toLowerCase()).toBe('strict');
      expect(cookie.attrs).not.toHaveProperty('domain');
    }
    const cleared = await server.client().get('/v1/user/profile');
    expectError(cleared, 401, 'No session cookie');
    expectCleared(cleared);
    expect(sessionCookieOf(cleared).attrs.secure).toBe(true);
  });
});

describe('with SESSION_INVALIDATE_ON_IP_CHANGE=true', () => {
  let server: RunningTrove;
  beforeAll(async () => {
    server = await startTrove({ SESSION_INVALIDATE_ON_IP_CHANGE: 'true' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a request from another IP is 401 Invalid session, and the session is gone for its owner too', async () => {
    const a = server.client();
    await registerUser(a);
    const id = await currentSessionId(a);
    const cookie = (await a.sessionCookie())!;
    // Same address: fine.
    expect((await a.get('/v1/user/profile')).status).toBe(200);

    const before = server.logs.length;
    const b = await withCookie(server, cookie, { localAddress: '127.0.0.2' });
    const res = await b.get('/v1/user/profile');
    expectError(res, 401, 'Invalid session');
    expectCleared(res);

    const warnings = server.logs.slice(before).filter((l) => l.level === 40 && JSON.stringify(l).includes(id));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(warnings[0])).toContain('127.0.0.2');

    expectError(await a.get('/v1/user/profile'), 401, 'Invalid session');
    expectError(await (await withCookie(server, cookie, { localAddress: '127.0.0.2' })).get('/v1/user/profile'), 401, 'Invalid session');
  });
});
