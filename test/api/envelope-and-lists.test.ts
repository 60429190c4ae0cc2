import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  expectErrorBody,
  GOOD_PASSWORD,
  registerUser,
  startTrove,
  UUID_RE,
  type Client,
  type Response,
  type RunningTrove,
} from '../helpers/trove.js';

// The response envelope (interface §2.3, decisions §3) and the list conventions (interface §4.2).
let server: RunningTrove;
beforeAll(async () => { server = await startTrove({ LOGIN_RATE_LIMIT_MAX: '1000' }); });
afterAll(async () => { await server.close(); });

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function expectEnvelope(res: Response, operation: string): void {
  expect(res.status).toBe(200);
  const { requestId, timestamp, duration } = res.body;
  expect(requestId).toMatch(UUID_RE);
  expect(requestId).toBe(res.headers.get('x-request-id'));
  expect(timestamp).toMatch(ISO_UTC);
  expect(Math.abs(Date.parse(timestamp) - Date.now())).toBeLessThan(60_000);
  expect(typeof duration).toBe('number');
  expect(duration).toBeGreaterThanOrEqual(0);
  expect(res.body.operation).toBe(operation);
}

/** Every key anywhere in a JSON value. */
function keysDeep(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysDeep);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...keysDeep(v)]);
  return [];
}

describe('read-one envelope: GET /v1/user/profile', () => {
  let first: Client;
  let second: Client;
  let firstEmail: string;
  let secondEmail: string;
  beforeAll(async () => {
    first = server.client();
    firstEmail = (await registerUser(first, { name: 'Ada First' })).email;
    second = server.client();
    secondEmail = (await registerUser(second, { name: 'Bob Second', email: '  Bob.Second@Example.COM ' })).email;
  });

  it('carries requestId, timestamp, duration, operation user.readOne and the user as result', async () => {
    const res = await first.get('/v1/user/profile');
    expectEnvelope(res, 'user.readOne');
    expect(res.body.result).toMatchObject({ id: expect.any(String), email: firstEmail, name: 'Ada First', role: 'admin' });
    expect(res.body.results).toBeUndefined();
  });

  it('the first user is admin, the second is user; the email is stored trimmed and lower-cased', async () => {
    const res = await second.get('/v1/user/profile');
    expectEnvelope(res, 'user.readOne');
    expect(secondEmail).not.toBe('bob.second@example.com');
    expect(res.body.result).toMatchObject({ email: 'bob.second@example.com', name: 'Bob Second', role: 'user' });
    expect(res.body.result.id).not.toBe((await first.get('/v1/user/profile')).body.result.id);
  });

  it('no password or hash appears anywhere, in the profile or in register/login answers', async () => {
    const bodies = [
      (await first.get('/v1/user/profile')).body,
      (await server.client().post('/v1/auth/login', { email: firstEmail, password: GOOD_PASSWORD })).body,
      (await server.client().post('/v1/auth/register', { email: `x-${randomUUID()}@example.com`, password: GOOD_PASSWORD, name: 'X' })).body,
    ];
    for (const body of bodies) {
      expect(keysDeep(body).filter((k) => /password|hash/i.test(k))).toEqual([]);
      expect(JSON.stringify(body)).not.toContain(GOOD_PASSWORD);
      expect(JSON.stringify(body)).not.toMatch(/\$argon2/);
    }
  });

  it('every response gets its own requestId and timestamp', async () => {
    const a = await first.get('/v1/user/profile');
    const b = await first.get('/v1/user/profile');
    expect(a.body.requestId).not.toBe(b.body.requestId);
    expect(Date.parse(b.body.timestamp)).toBeGreaterThanOrEqual(Date.parse(a.body.timestamp));
  });
});

describe('read-many envelope and paging of sessions', () => {
  let email: string;
  let owner: Client;
  /** Public session ids in creation order (oldest first). */
  const created: string[] = [];

  beforeAll(async () => {
    owner = server.client();
    email = (await registerUser(owner, { name: 'Many Sessions' })).email;
    // Five more sessions of the same user, each from its own client (login ~50 ms of Argon2 each).
    for (let i = 0; i < 5; i += 1) {
      const c = server.client({ headers: { 'user-agent': `device-${i}` } });
      const res = await c.post('/v1/auth/login', { email, password: GOOD_PASSWORD });
      expect(res.status).toBe(200);
    }
    const all = await owner.get('/v1/user/sessions');
    created.push(...all.body.results.map((s: { id: string }) => s.id).reverse());
  });

  it.each(['/v1/user/sessions', '/v1/auth/sessions'])('%s answers session.readMany with results, total and nextCursor', async (path) => {
    const res = await owner.get(path);
    expectEnvelope(res, 'session.readMany');
    expect(res.body.result).toBeUndefined();
    expect(res.body.results).toHaveLength(6);
    expect(res.body.total).toBe(6);
    expect(res.body.nextCursor).toBeNull();
    for (const s of res.body.results) {
      expect(s.id).toMatch(UUID_RE);
      expect(s.createdAt).toMatch(ISO_UTC);
      expect(s.metadata.loginMethod).toBe('password');
    }
    expect(res.body.results.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    // Newest first: the owner's own (register) session is the oldest, so it comes last.
    expect(res.body.results.at(-1).current).toBe(true);
    const times = res.body.results.map((s: { createdAt: string }) => Date.parse(s.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('both list paths hold the same sessions', async () => {
    const a = (await owner.get('/v1/user/sessions')).body.results.map((s: { id: string }) => s.id);
    const b = (await owner.get('/v1/auth/sessions')).body.results.map((s: { id: string }) => s.id);
    expect(b).toEqual(a);
  });

  it('without limit a page holds 50; the next page has the rest', async () => {
    // 55 logins would cost 55 Argon2 hashes; the sessions are seeded through the server's own
    // session service instead, exactly as a login creates them.
    const crowd = server.client();
    const { user } = await registerUser(crowd);
    for (let i = 0; i < 54; i += 1) {
      await server.trove.services.sessions.create({ userId: user.id, ipAddress: '127.0.0.1', userAgent: `seed-${i}`, loginMethod: 'password' });
    }
    const p1 = await crowd.get('/v1/user/sessions');
    expectEnvelope(p1, 'session.readMany');
    expect(p1.body.results).toHaveLength(50);
    expect(p1.body.total).toBe(55);
    expect(p1.body.nextCursor).toEqual(expect.any(String));
    const p2 = await crowd.get(`/v1/auth/sessions?cursor=${encodeURIComponent(p1.body.nextCursor)}`);
    expect(p2.body.results).toHaveLength(5);
    expect(p2.body.nextCursor).toBeNull();
    const all = [...p1.body.results, ...p2.body.results].map((s: { id: string }) => s.id);
    expect(new Set(all).size).toBe(55);
  });

  it.each(['/v1/user/sessions', '/v1/auth/sessions'])('%s pages with limit=2 by nextCursor: every session once, newest first', async (path) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? 'limit=2' : `limit=2&cursor=${encodeURIComponent(cursor)}`;
      const res = await owner.get(`${path}?${query}`);
      expectEnvelope(res, 'session.readMany');
      expect(res.body.total).toBe(6);
      expect(res.body.results.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.results.map((s: { id: string }) => s.id));
      cursor = res.body.nextCursor;
      if (cursor !== null) expect(typeof cursor).toBe('string');
      pages += 1;
      expect(pages).toBeLessThanOrEqual(10);
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual([...created].reverse());
    expect(new Set(seen).size).toBe(6);
  });

  it('a session ended between pages neither repeats nor hides the others', async () => {
    const c = server.client();
    await c.post('/v1/auth/login', { email, password: GOOD_PASSWORD });
    const page1 = await owner.get('/v1/user/sessions?limit=3');
    expect(page1.body.total).toBe(7);
    const firstIds = page1.body.results.map((s: { id: string }) => s.id);
    expect((await c.post('/v1/auth/logout')).status).toBe(200); // the newest session, already on page 1
    const page2 = await owner.get(`/v1/user/sessions?limit=3&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
    expect(page2.body.total).toBe(6);
    const secondIds = page2.body.results.map((s: { id: string }) => s.id);
    expect(secondIds.filter((id: string) => firstIds.includes(id))).toEqual([]);
    const page3 = page2.body.nextCursor
      ? (await owner.get(`/v1/user/sessions?limit=3&cursor=${encodeURIComponent(page2.body.nextCursor)}`)).body.results.map((s: { id: string }) => s.id)
      : [];
    expect(new Set([...firstIds.slice(1), ...secondIds, ...page3])).toEqual(new Set(created));
  });

  it('inIds=<a>,<b> returns just those two, and total counts the matches', async () => {
    const [a, b] = [created[1]!, created[3]!];
    const res = await owner.get(`/v1/user/sessions?inIds=${a},${b}`);
    expectEnvelope(res, 'session.readMany');
    expect(res.body.results.map((s: { id: string }) => s.id)).toEqual([b, a]);
    expect(res.body.total).toBe(2);
    expect(res.body.nextCursor).toBeNull();
  });

  it('inIds may also repeat (inIds=a&inIds=b), and accepts upper-case UUIDs', async () => {
    const [a, b] = [created[0]!, created[4]!];
    const res = await owner.get(`/v1/auth/sessions?inIds=${a}&inIds=${b.toUpperCase()}`);
    expect(res.body.results.map((s: { id: string }) => s.id).sort()).toEqual([a, b].sort());
    expect(res.body.total).toBe(2);
  });

  it('inIds with a paged limit: total counts all matches, nextCursor leads to the rest', async () => {
    const ids = created.slice(0, 3);
    const p1 = await owner.get(`/v1/user/sessions?inIds=${ids.join(',')}&limit=2`);
    expect(p1.body.total).toBe(3);
    expect(p1.body.results).toHaveLength(2);
    const p2 = await owner.get(`/v1/user/sessions?inIds=${ids.join(',')}&limit=2&cursor=${encodeURIComponent(p1.body.nextCursor)}`);
    expect(p2.body.results).toHaveLength(1);
    expect(p2.body.nextCursor).toBeNull();
    expect([...p1.body.results, ...p2.body.results].map((s: { id: string }) => s.id).sort()).toEqual([...ids].sort());
  });

  it('ninIds=<a> leaves that one out', async () => {
    const a = created[2]!;
    const res = await owner.get(`/v1/user/sessions?ninIds=${a}`);
    expect(res.body.total).toBe(5);
    expect(res.body.results.map((s: { id: string }) => s.id)).not.toContain(a);
    const both = await owner.get(`/v1/user/sessions?inIds=${a},${created[0]}&ninIds=${a}`);
    expect(both.body.results.map((s: { id: string }) => s.id)).toEqual([created[0]]);
    expect(both.body.total).toBe(1);
  });

  it("ids of another user's sessions or unknown ids match nothing", async () => {
    const stranger = server.client();
    await registerUser(stranger);
    const strangerSession = (await stranger.get('/v1/user/sessions')).body.results[0].id;
    const res = await owner.get(`/v1/user/sessions?inIds=${strangerSession},${randomUUID()}`);
    expectEnvelope(res, 'session.readMany');
    expect(res.body.results).toEqual([]);
    expect(res.body.total).toBe(0);
    expect(res.body.nextCursor).toBeNull();
  });

  it('a forged or corrupted cursor is 400 naming cursor', async () => {
    const real = (await owner.get('/v1/user/sessions?limit=2')).body.nextCursor as string;
    const forged = [
      'not-a-cursor',
      Buffer.from('{"createdAt":1,"id":"x"}').toString('base64url'),
      Buffer.from('null').toString('base64url'),
      Buffer.from('"hello"').toString('base64url'),
      `${real.slice(0, -3)}!!!`,
    ];
    for (const cursor of forged) {
      expectErrorBody(await owner.get(`/v1/user/sessions?limit=2&cursor=${encodeURIComponent(cursor)}`), 400, /cursor/);
    }
  });
});

describe('request log', () => {
  it('writes one line per request as it completes, with its X-Request-Id and without the query string', async () => {
    const client = server.client();
    await registerUser(client);
    const res = await client.get('/v1/user/sessions?limit=1');
    const requestId = res.headers.get('x-request-id');
    await vi.waitFor(() => expect(server.logs.filter((l) => l.requestId === requestId)).toHaveLength(1));
    const line = server.logs.find((l) => l.requestId === requestId)!;
    expect(line).toMatchObject({ level: 30, msg: 'request completed', method: 'GET', path: '/v1/user/sessions', statusCode: 200 });
    expect(JSON.stringify(line)).not.toContain('limit=');
  });

  it('at LOG_LEVEL=warn a request that went well writes nothing, and a warning still names its request', async () => {
    const quiet = await startTrove({ LOG_LEVEL: 'warn' });
    try {
      const client = quiet.client();
      await registerUser(client);
      expect((await client.get('/v1/user/profile')).status).toBe(200);
      const moved = quiet.client({ localAddress: '127.0.0.2' });
      await moved.setSessionCookie((await client.sessionCookie())!);
      const res = await moved.get('/v1/user/profile');
      expect(res.status).toBe(200);
      await vi.waitFor(() => expect(quiet.logs.some((l) => l.msg === 'session IP changed')).toBe(true));
      expect(quiet.logs.filter((l) => l.level < 40)).toEqual([]);
      expect(quiet.logs.find((l) => l.msg === 'session IP changed')!.requestId).toBe(res.headers.get('x-request-id'));
    } finally {
      await quiet.close();
    }
  });
});
