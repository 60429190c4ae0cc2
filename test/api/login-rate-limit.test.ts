import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectErrorBody,
  GOOD_PASSWORD,
  registerUser,
  sleep,
  startTrove,
  uniqueEmail,
  type Client,
  type Response,
  type RunningTrove,
} from '../helpers/trove.js';

// Login rate limit (decisions §1–2): LOGIN_RATE_LIMIT_MAX attempts per window, counted per client
// IP and, separately, per email; the next one is 429 `Too many login attempts` with Retry-After.
// TRUST_PROXY=true lets each client present its own address in X-Forwarded-For; every request
// still goes to 127.0.0.1.

/** A client that looks, to the server behind its "proxy", like it comes from `ip`. */
const from = (server: RunningTrove, ip: string): Client => server.client({ headers: { 'x-forwarded-for': ip } });

function expectThrottled(res: Response, windowSeconds: number): void {
  expectErrorBody(res, 429, 'Too many login attempts');
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(windowSeconds);
  // A throttled attempt never signs anyone in.
  expect(res.setCookies.some((line) => /^svc_session=[^;]/.test(line))).toBe(false);
}

describe('with the default limit (5 per 60 s)', () => {
  let server: RunningTrove;
  beforeAll(async () => { server = await startTrove({ TRUST_PROXY: 'true' }); });
  afterAll(async () => { await server.close(); });

  it('per IP: one client trying 6 different emails is throttled on the 6th, even with a right password', async () => {
    const victim = await registerUser(server.client()); // registering is not a login attempt
    const c = server.client(); // no X-Forwarded-For: the server sees 127.0.0.1
    for (let i = 0; i < 5; i += 1) {
      expectErrorBody(await c.post('/v1/auth/login', { email: uniqueEmail('scan'), password: GOOD_PASSWORD }), 401, 'Invalid email or password');
    }
    expectThrottled(await c.post('/v1/auth/login', { email: uniqueEmail('scan'), password: GOOD_PASSWORD }), 60);
    expectThrottled(await c.post('/v1/auth/login', { email: victim.email, password: victim.password }), 60);
    expect(await c.sessionCookie()).toBeUndefined();

    // Someone elsewhere is not affected: the same account signs in from another address.
    const elsewhere = from(server, '10.9.9.9');
    expect((await elsewhere.post('/v1/auth/login', { email: victim.email, password: victim.password })).status).toBe(200);
    expect((await elsewhere.get('/v1/user/profile')).body.result.email).toBe(victim.email);
  });

  it('per email: six addresses trying one email are throttled on the 6th; other emails are not', async () => {
    const target = await registerUser(server.client());
    for (let i = 1; i <= 5; i += 1) {
      const res = await from(server, `10.0.0.${i}`).post('/v1/auth/login', { email: target.email, password: `wrong-Guess-${i}-xyz` });
      expectErrorBody(res, 401, 'Invalid email or password');
    }
    expectThrottled(await from(server, '10.0.0.6').post('/v1/auth/login', { email: target.email, password: 'wrong-Guess-6-xyz' }), 60);
    // The email is counted however it is written.
    expectThrottled(await from(server, '10.0.0.7').post('/v1/auth/login', { email: ` ${target.email.toUpperCase()} `, password: 'x-wrong-Guess-7' }), 60);
    // Even the right password is refused for that email until the window ends.
    expectThrottled(await from(server, '10.0.0.8').post('/v1/auth/login', { email: target.email, password: target.password }), 60);

    // Another account, from a fresh address, signs in normally.
    const other = await registerUser(server.client());
    expect((await from(server, '10.0.0.9').post('/v1/auth/login', { email: other.email, password: other.password })).status).toBe(200);
  });
});

describe('with a short window (LOGIN_RATE_LIMIT_WINDOW_MS=1500)', () => {
  const windowMs = 1500;
  let server: RunningTrove;
  beforeAll(async () => { server = await startTrove({ TRUST_PROXY: 'true', LOGIN_RATE_LIMIT_WINDOW_MS: String(windowMs) }); });
  afterAll(async () => { await server.close(); });

  // The six attempts are sent together so that all of them surely fall inside one short window
  // however slow the machine is (each hit is counted before the password is checked). Which one is
  // refused then depends on arrival order, so the tests look for exactly one refusal.

  it('attempts are allowed again after the window', async () => {
    const { email, password } = await registerUser(server.client());
    const c = from(server, '10.1.0.1');
    const burst = await Promise.all(
      Array.from({ length: 6 }, (_, i) => c.post('/v1/auth/login', { email, password: `wrong-Guess-${i}-abc` })),
    );
    const refused = burst.filter((r) => r.status === 429);
    expect(refused).toHaveLength(1);
    expectThrottled(refused[0]!, Math.ceil(windowMs / 1000));
    for (const res of burst.filter((r) => r.status !== 429)) expectErrorBody(res, 401, 'Invalid email or password');

    await sleep(windowMs + 300);
    expectErrorBody(await c.post('/v1/auth/login', { email, password: 'wrong-Guess-7-abc' }), 401, 'Invalid email or password');
    expect((await c.post('/v1/auth/login', { email, password })).status).toBe(200);
    expect((await c.get('/v1/user/profile')).body.result.email).toBe(email);
  });

  it('correct logins count too, and a blocked user signs in after the window', async () => {
    const { email, password } = await registerUser(server.client());
    const devices = Array.from({ length: 6 }, (_, i) => from(server, `10.2.0.${i + 1}`));
    const burst = await Promise.all(devices.map((d) => d.post('/v1/auth/login', { email, password })));
    expect(burst.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429]);
    const lateIndex = burst.findIndex((r) => r.status === 429);
    const late = devices[lateIndex]!;
    const signedIn = devices.filter((_, i) => i !== lateIndex);
    expectThrottled(burst[lateIndex]!, Math.ceil(windowMs / 1000));
    expect((await late.get('/v1/user/profile')).status).toBe(401);
    // The sessions that did start are unaffected by the throttling.
    for (const d of signedIn) expect((await d.get('/v1/user/profile')).status).toBe(200);

    await sleep(windowMs + 300);
    const res = await late.post('/v1/auth/login', { email, password });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(email);
    expect((await late.get('/v1/user/profile')).status).toBe(200);
  });
});
