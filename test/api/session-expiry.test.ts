/**
 * Expiry in real time (interface §3.1 and §5.3, decisions §1 and §4): absolute expiry, idle
 * timeout and sliding renewal, with second-long settings. Each rule gets a server of its own so
 * that no other rule can interfere, and the tests wait in parallel (describe.concurrent), so the
 * file takes about as long as its longest wait.
 *
 * The machine may be busy, so waits are measured from the times the server reports (createdAt,
 * lastAccessedAt, expiresAt in the session list) rather than assumed, and every step that must
 * land before a deadline has a margin of at least half a second.
 *
 * A browser drops a cookie whose Max-Age ran out; the server must refuse the session anyway (a
 * copied cookie does not expire), so the cookie value is sent again by hand.
 */
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
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

interface SessionItem {
  id: string;
  createdAt: string;
  lastAccessedAt: string;
  expiresAt: string;
  current: boolean;
}

function sessionSetCookies(res: Response): string[] {
  return res.setCookies.filter((l) => l.startsWith('svc_session='));
}

function cookieValueOf(res: Response): string {
  const line = sessionSetCookies(res)[0] ?? '';
  return line.slice('svc_session='.length).split(';')[0]!;
}

function attributesOf(line: string): Record<string, string | true> {
  const attrs: Record<string, string | true> = {};
  for (const part of line.split(';').slice(1).map((p) => p.trim()).filter(Boolean)) {
    const i = part.indexOf('=');
    if (i < 0) attrs[part.toLowerCase()] = true;
    else attrs[part.slice(0, i).toLowerCase()] = part.slice(i + 1);
  }
  return attrs;
}

function expectCleared(expect: ExpectStatic, res: Response): void {
  const lines = sessionSetCookies(res);
  expect(lines).toHaveLength(1);
  expect(lines[0]!.startsWith('svc_session=;')).toBe(true);
  const attrs = attributesOf(lines[0]!);
  const expired =
    (typeof attrs.expires === 'string' && Date.parse(attrs.expires) < Date.now()) ||
    (typeof attrs['max-age'] === 'string' && Number(attrs['max-age']) <= 0);
  expect(expired, lines[0]).toBe(true);
}

function expectError(expect: ExpectStatic, res: Response, status: number, message: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ statusCode: status, message });
}

/** Lists the sessions with the given cookie; returns the response and the current session as the server saw it. */
async function listAs(expect: ExpectStatic, server: RunningTrove, cookie: string): Promise<{ res: Response; current: SessionItem }> {
  const res = await (await withCookie(server, cookie)).get('/v1/user/sessions');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const current = (res.body.results as SessionItem[]).filter((s) => s.current);
  expect(current).toHaveLength(1);
  return { res, current: current[0]! };
}

async function withCookie(server: RunningTrove, value: string): Promise<Client> {
  const client = server.client();
  await client.setSessionCookie(value);
  return client;
}

async function profileAs(server: RunningTrove, cookie: string): Promise<Response> {
  return (await withCookie(server, cookie)).get('/v1/user/profile');
}

async function sleepUntil(epochMs: number): Promise<void> {
  const wait = epochMs - Date.now();
  if (wait > 0) await sleep(wait);
}

describe.concurrent('absolute expiry (SESSION_MAX_AGE=2, SESSION_RENEWAL_THRESHOLD=0)', () => {
  let server: RunningTrove;
  beforeAll(async () => {
    server = await startTrove({ SESSION_MAX_AGE: '2', SESSION_RENEWAL_THRESHOLD: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the cookie Max-Age follows SESSION_MAX_AGE, and expiresAt is creation + max age', async ({ expect }) => {
    const email = uniqueEmail('maxage');
    const register = await server.client().post('/v1/auth/register', { email, name: 'Max', password: GOOD_PASSWORD });
    expect(register.status).toBe(201);
    const registered = await listAs(expect, server, cookieValueOf(register));
    const login = await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD });
    expect(login.status).toBe(200);
    const loggedIn = await listAs(expect, server, cookieValueOf(login));

    for (const [res, { current }] of [
      [register, registered],
      [login, loggedIn],
    ] as const) {
      const lines = sessionSetCookies(res);
      expect(lines).toHaveLength(1);
      expect(attributesOf(lines[0]!)['max-age']).toBe('2');
      expect(Date.parse(current.expiresAt) - Date.parse(current.createdAt)).toBe(2000);
    }
  });

  it('activity does not extend it, nor does renewal (threshold 0); past expiresAt: 401 Session expired, session deleted', async ({ expect }) => {
    const client = server.client();
    await registerUser(client);
    const cookie = (await client.sessionCookie())!;
    const { current: first } = await listAs(expect, server, cookie);
    const deadline = Date.parse(first.expiresAt);

    // Busy every 0.3 s until a request lands in the last second, where a threshold would renew.
    let lastAccess = Date.parse(first.lastAccessedAt);
    while (deadline - lastAccess >= 1000 && Date.now() + 300 < deadline - 500) {
      await sleep(300);
      const { res, current } = await listAs(expect, server, cookie);
      expect(sessionSetCookies(res)).toEqual([]);
      expect(current.expiresAt).toBe(first.expiresAt);
      lastAccess = Date.parse(current.lastAccessedAt);
    }
    expect(deadline - lastAccess).toBeLessThan(1000);

    await sleepUntil(deadline + 100);
    const expired = await profileAs(server, cookie);
    expectError(expect, expired, 401, 'Session expired');
    expectCleared(expect, expired);
    // Deleted, not only refused: the same cookie now names nothing.
    expectError(expect, await profileAs(server, cookie), 401, 'Invalid session');
  });
});

describe.concurrent('idle timeout (SESSION_IDLE_TIMEOUT=1)', () => {
  let server: RunningTrove;
  beforeAll(async () => {
    server = await startTrove({ SESSION_IDLE_TIMEOUT: '1' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('idle longer than the timeout: 401 Session expired, session deleted, cookie cleared', async ({ expect }) => {
    const client = server.client();
    await registerUser(client);
    const cookie = (await client.sessionCookie())!;

    await sleep(1300);
    // The absolute lifetime is 7 days here: only the idle rule can end it.
    const res = await profileAs(server, cookie);
    expectError(expect, res, 401, 'Session expired');
    expectCleared(expect, res);
    expectError(expect, await profileAs(server, cookie), 401, 'Invalid session');
  });

  it('the idle clock runs from the last request, not from creation', async ({ expect }) => {
    const client = server.client();
    await registerUser(client);
    const cookie = (await client.sessionCookie())!;
    const { current: first } = await listAs(expect, server, cookie);

    // Requests 300 ms apart for well over a second: never idle, so never expired.
    let last = first;
    while (Date.parse(last.lastAccessedAt) - Date.parse(first.createdAt) < 1500) {
      await sleep(300);
      last = (await listAs(expect, server, cookie)).current;
    }
    expect(last.id).toBe(first.id);
    expect(last.createdAt).toBe(first.createdAt);
  });

  it('idle sessions drop out of the session list', async ({ expect }) => {
    const first = server.client();
    const { email, password } = await registerUser(first);
    const second = server.client();
    expect((await second.post('/v1/auth/login', { email, password })).status).toBe(200);
    const idleIds = [(await listAs(expect, server, (await first.sessionCookie())!)).current.id];
    idleIds.push((await listAs(expect, server, (await second.sessionCookie())!)).current.id);

    await sleep(1300);
    const fresh = server.client();
    expect((await fresh.post('/v1/auth/login', { email, password })).status).toBe(200);
    const { res, current } = await listAs(expect, server, (await fresh.sessionCookie())!);
    const ids = (res.body.results as SessionItem[]).map((s) => s.id);
    expect(ids).toEqual([current.id]);
    for (const id of idleIds) expect(ids).not.toContain(id);
  });
});

describe.concurrent('sliding renewal (SESSION_MAX_AGE=2, SESSION_RENEWAL_THRESHOLD=1)', () => {
  let server: RunningTrove;
  beforeAll(async () => {
    server = await startTrove({ SESSION_MAX_AGE: '2', SESSION_RENEWAL_THRESHOLD: '1' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('with less than the threshold left, expiresAt moves to now + max age and the cookie is re-sent with the full Max-Age', async ({ expect }) => {
    const client = server.client();
    await registerUser(client);
    const cookie = (await client.sessionCookie())!;

    /** One request, checked against the rule: renewed exactly when less than 1 s was left before it. */
    let expiresBefore: number | undefined;
    const request = async () => {
      const { res, current } = await listAs(expect, server, cookie);
      const now = Date.parse(current.lastAccessedAt); // the server's clock for this request
      expiresBefore ??= Date.parse(current.createdAt) + 2000; // nothing renewed it before this request
      const renewed = expiresBefore - now < 1000;
      const lines = sessionSetCookies(res);
      if (renewed) {
        expect(Date.parse(current.expiresAt)).toBe(now + 2000);
        expect(lines).toHaveLength(1);
        expect(lines[0]!.startsWith(`svc_session=${cookie};`)).toBe(true);
        const attrs = attributesOf(lines[0]!);
        expect(attrs).toMatchObject({ 'max-age': '2', path: '/', httponly: true });
        expect(String(attrs.samesite).toLowerCase()).toBe('strict');
      } else {
        expect(Date.parse(current.expiresAt)).toBe(expiresBefore);
        expect(lines).toEqual([]);
      }
      expiresBefore = Date.parse(current.expiresAt);
      return { renewed, current };
    };

    const first = await request();
    const original = Date.parse(first.current.createdAt) + 2000;
    // 0.85 s before the end: less than the 1 s threshold is left, so this one renews.
    if (!first.renewed) {
      await sleepUntil(original - 850);
      expect((await request()).renewed).toBe(true);
    }
    expect(expiresBefore).toBeGreaterThan(original);

    // Past the original expiry, the renewed session still works (request() expects 200).
    await sleepUntil(original + 100);
    expect(Date.now()).toBeGreaterThan(original);
    await request();
  });
});
