import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clearsSessionCookie,
  expectErrorBody,
  GOOD_PASSWORD,
  registerUser,
  startTrove,
  uniqueEmail,
  UUID_RE,
  type Client,
  type RunningTrove,
} from '../helpers/trove.js';

// Errors of interface §7 and decisions §2: exact statuses and messages, one error shape.
// Every login here comes from 127.0.0.1; the limit is raised so this file never meets it
// (login-rate-limit.test.ts covers the limit itself).
let server: RunningTrove;
let admin: Client;
let member: Client;
let memberId: string;

beforeAll(async () => {
  server = await startTrove({ LOGIN_RATE_LIMIT_MAX: '1000' });
  admin = server.client();
  await registerUser(admin, { name: 'First Admin' }); // the first account is the admin
  member = server.client();
  memberId = (await registerUser(member, { name: 'Plain Member' })).user.id;
});
afterAll(async () => { await server.close(); });

const validRegistration = () => ({ email: uniqueEmail('reg'), password: GOOD_PASSWORD, name: 'Reg User' });

describe('register: invalid bodies are 400 naming the field', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['bad email format', { email: 'not-an-email' }, /email/],
    ['email without a domain dot', { email: 'someone@localhost' }, /email/],
    ['email as a number', { email: 12345 }, /email/],
    ['password as a number', { password: 12345678901234 }, /password/],
    ['name as an object', { name: { first: 'A' } }, /name/],
    ['unknown extra field', { role: 'admin' }, /role/],
  ];
  it.each(cases)('%s', async (_label, change, field) => {
    const body = { ...validRegistration(), ...change };
    const res = await server.client().post('/v1/auth/register', body);
    expectErrorBody(res, 400, field);
    expect(res.setCookies.some((l) => l.startsWith('svc_session=') && !l.startsWith('svc_session=;'))).toBe(false);
  });

  it.each(['email', 'password', 'name'])('missing %s', async (field) => {
    const body: Record<string, unknown> = validRegistration();
    delete body[field];
    const res = await server.client().post('/v1/auth/register', body);
    expectErrorBody(res, 400, new RegExp(field));
  });

  it('a rejected registration creates no account: the same email registers fine afterwards', async () => {
    const body = validRegistration();
    expectErrorBody(await server.client().post('/v1/auth/register', { ...body, role: 'admin' }), 400, /role/);
    expectErrorBody(await server.client().post('/v1/auth/login', { email: body.email, password: body.password }), 401, 'Invalid email or password');
    const ok = await server.client().post('/v1/auth/register', body);
    expect(ok.status).toBe(201);
    expect(ok.body.user).toEqual({ id: expect.any(String), email: body.email, name: body.name });
  });
});

describe('register: password strength', () => {
  const cases: Array<[string, string, string]> = [
    ['too short', 'x7#Qp2!', 'shorty@example.com'],
    ['9 characters', 'x7#Qp2!zk', 'nine@example.com'],
    ['a common password', 'password123', 'common1@example.com'],
    ['a common digit run', '1234567890', 'common2@example.com'],
    ['containing the email local part', 'xx-Margaret-2024!', 'margaret@example.com'],
    ['containing the local part in other case', 'HILLTOP-walker-88', 'hilltop@example.com'],
  ];
  it.each(cases)('%s → 400 Password too weak', async (_label, password, email) => {
    const res = await server.client().post('/v1/auth/register', { email, password, name: 'Weak' });
    expectErrorBody(res, 400, /^Password too weak: \S.*/);
  });

  it('a weak password leaves the email free for a later registration with a good one', async () => {
    const email = uniqueEmail('retry');
    expectErrorBody(await server.client().post('/v1/auth/register', { email, password: 'password123', name: 'R' }), 400, /^Password too weak: /);
    expect((await server.client().post('/v1/auth/register', { email, password: GOOD_PASSWORD, name: 'R' })).status).toBe(201);
  });

  it('a password over 256 characters is 400 naming password; 256 is accepted', async () => {
    const tooLong = 'Qz7!'.repeat(64) + 'k'; // 257
    const res = await server.client().post('/v1/auth/register', { email: uniqueEmail('long'), password: tooLong, name: 'L' });
    expectErrorBody(res, 400, /password/);
    expect(res.body.message).not.toMatch(/^Password too weak/);

    const longest = 'Qz7!'.repeat(64); // 256
    const c = server.client();
    const email = uniqueEmail('longest');
    expect((await c.post('/v1/auth/register', { email, password: longest, name: 'L' })).status).toBe(201);
    expect((await server.client().post('/v1/auth/login', { email, password: longest })).status).toBe(200);
  });
});

describe('register: duplicate email', () => {
  it('is 409 Email already registered, also when cased differently or padded with spaces', async () => {
    const email = uniqueEmail('dup');
    expect((await server.client().post('/v1/auth/register', { email, password: GOOD_PASSWORD, name: 'One' })).status).toBe(201);
    for (const variant of [email, email.toUpperCase(), `  ${email}  `, `\t${email.replace(/^./, (c) => c.toUpperCase())} `]) {
      const res = await server.client().post('/v1/auth/register', { email: variant, password: 'another-Good-pass-99', name: 'Two' });
      expectErrorBody(res, 409, 'Email already registered');
    }
    // The original account is untouched: its password still works, the second one does not.
    expect((await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
    expectErrorBody(await server.client().post('/v1/auth/login', { email, password: 'another-Good-pass-99' }), 401, 'Invalid email or password');
  });
});

describe('login failures', () => {
  it('unknown email and wrong password get the same 401 Invalid email or password', async () => {
    const { email } = await registerUser(server.client());
    const unknown = await server.client().post('/v1/auth/login', { email: uniqueEmail('ghost'), password: GOOD_PASSWORD });
    const wrong = await server.client().post('/v1/auth/login', { email, password: 'wrong-Password-123' });
    expectErrorBody(unknown, 401, 'Invalid email or password');
    expectErrorBody(wrong, 401, 'Invalid email or password');
    const { requestId: _a, ...u } = unknown.body;
    const { requestId: _b, ...w } = wrong.body;
    expect(u).toEqual(w);
    expect(unknown.setCookies.concat(wrong.setCookies).some((l) => /^svc_session=[^;]/.test(l))).toBe(false);
  });

  it('login with a missing or mistyped field is 400 naming it', async () => {
    expectErrorBody(await server.client().post('/v1/auth/login', { email: uniqueEmail() }), 400, /password/);
    expectErrorBody(await server.client().post('/v1/auth/login', { email: ['a@b.co'], password: GOOD_PASSWORD }), 400, /email/);
  });
});

describe('password change failures', () => {
  it('wrong current password is 401 Invalid email or password; a weak new one is 400 Password too weak', async () => {
    const c = server.client();
    const { email } = await registerUser(c);
    expectErrorBody(
      await c.post('/v1/auth/password', { currentPassword: 'not-my-Password-1', newPassword: 'fresh-Meadow-2025' }),
      401,
      'Invalid email or password',
    );
    expectErrorBody(
      await c.post('/v1/auth/password', { currentPassword: GOOD_PASSWORD, newPassword: `${email.split('@')[0]}-Xy-77` }),
      400,
      /^Password too weak: /,
    );
    // Neither attempt changed anything: the old password still signs in.
    expect((await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
  });
});

describe('malformed and oversized bodies', () => {
  it('malformed JSON is 400', async () => {
    for (const raw of ['{bad', '{"email": "a@b.co",}', '{"email": "a@b.co"', "{'email': 'a@b.co'}"]) {
      expectErrorBody(await server.client().post('/v1/auth/register', raw), 400);
    }
  });

  it('an empty body sent as JSON is 400', async () => {
    expectErrorBody(await server.client().post('/v1/auth/login', ''), 400);
  });

  it('a body over BODY_LIMIT (1 MiB) is 413; one just under it is validated as usual', async () => {
    const big = { email: uniqueEmail('big'), name: 'Big', password: 'x'.repeat(1_048_576) };
    expectErrorBody(await server.client().post('/v1/auth/register', big), 413);
    const under = { email: uniqueEmail('under'), name: 'Under', password: 'x'.repeat(1_048_000) };
    expectErrorBody(await server.client().post('/v1/auth/register', under), 400, /password/);
  });

  it('headers too large for the HTTP parser get 431 in the same error shape', async () => {
    const res = await server.client().get(`/v1/user/sessions?inIds=${'a'.repeat(20_000)}`);
    expectErrorBody(res, 431, 'Request headers are too large');
  });
});

describe('paths, queries and routes', () => {
  it('a session id that is not a UUID is 400 naming sessionId, on both paths', async () => {
    expectErrorBody(await member.delete('/v1/user/sessions/not-a-uuid'), 400, /sessionId/);
    expectErrorBody(await member.delete('/v1/auth/sessions/not-a-uuid'), 400, /sessionId/);
    expect((await member.get('/v1/user/profile')).status).toBe(200);
  });

  it('deleting a session id that does not exist is 404 Session not found', async () => {
    expectErrorBody(await member.delete(`/v1/user/sessions/${randomUUID()}`), 404, 'Session not found');
    expectErrorBody(await member.delete(`/v1/auth/sessions/${randomUUID()}`), 404, 'Session not found');
  });

  it("deleting another user's session is 403 Not your session, and that session lives on", async () => {
    const adminSessionId = (await admin.get('/v1/user/sessions')).body.results.find((s: { current: boolean }) => s.current).id;
    expectErrorBody(await member.delete(`/v1/user/sessions/${adminSessionId}`), 403, 'Not your session');
    expectErrorBody(await member.delete(`/v1/auth/sessions/${adminSessionId}`), 403, 'Not your session');
    expect((await admin.get('/v1/user/profile')).status).toBe(200);
  });

  it('force-logout: a non-admin is 403 Admin role required; an unknown user is 404 User not found', async () => {
    expectErrorBody(await member.post(`/v1/admin/users/${memberId}/force-logout`), 403, 'Admin role required');
    expect((await member.get('/v1/user/profile')).status).toBe(200);
    expectErrorBody(await admin.post(`/v1/admin/users/${randomUUID()}/force-logout`), 404, 'User not found');
    expect((await admin.get('/v1/user/profile')).status).toBe(200);
  });

  it('an unknown route is 404 Not found, under /v1 and outside, for any method', async () => {
    const c = server.client();
    expectErrorBody(await c.get('/v1/nothing-here'), 404, 'Not found');
    expectErrorBody(await c.get('/nothing-here'), 404, 'Not found');
    expectErrorBody(await c.post('/v1/auth/nothing', {}), 404, 'Not found');
    expectErrorBody(await c.request('PUT', '/v1/user/profile', {}), 404, 'Not found');
    expectErrorBody(await c.delete('/v1/user/profile'), 404, 'Not found');
  });

  it.each([['0'], ['501'], ['-1'], ['abc'], ['1.5'], ['']])('limit=%s is 400 naming limit', async (limit) => {
    expectErrorBody(await member.get(`/v1/user/sessions?limit=${limit}`), 400, /limit/);
    expectErrorBody(await member.get(`/v1/auth/sessions?limit=${limit}`), 400, /limit/);
  });

  it('limit=1 and limit=500 are accepted', async () => {
    expect((await member.get('/v1/user/sessions?limit=1')).status).toBe(200);
    expect((await member.get('/v1/user/sessions?limit=500')).status).toBe(200);
  });

  it.each([
    ['inIds', 'not-a-uuid'],
    ['inIds', `${randomUUID()},nope`],
    ['ninIds', 'nope'],
    ['inIds', "1' OR '1'='1"],
  ])('%s=%s is 400 naming the filter', async (name, value) => {
    expectErrorBody(await member.get(`/v1/user/sessions?${name}=${encodeURIComponent(value)}`), 400, new RegExp(name));
  });
});

describe('the session guard', () => {
  it('under /v1 a missing or bogus cookie is JSON 401 and the cookie is cleared', async () => {
    const none = await server.client().get('/v1/user/profile');
    expectErrorBody(none, 401, 'No session cookie');
    const c = server.client();
    await c.setSessionCookie('bogus-value');
    const bogus = await c.get('/v1/user/profile');
    expectErrorBody(bogus, 401, 'Invalid session');
    expect(clearsSessionCookie(bogus)).toBe(true);
    await c.setSessionCookie(randomUUID());
    const unknown = await c.get('/v1/user/profile');
    expectErrorBody(unknown, 401, 'Invalid session');
    expect(clearsSessionCookie(unknown)).toBe(true);
  });

  it('a web page outside /v1 redirects to /login instead, clearing a cookie that was sent', async () => {
    const none = await server.client().get('/');
    expect(none.status).toBe(302);
    expect(none.headers.get('location')).toBe('/login');

    for (const value of ['bogus-value', randomUUID()]) {
      const c = server.client();
      await c.setSessionCookie(value);
      const res = await c.get('/');
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('/login');
      expect(clearsSessionCookie(res)).toBe(true);
      expect(await c.sessionCookie()).toBeUndefined();
    }
  });
});

describe('garbage input never causes a 500', () => {
  const huge = 'A'.repeat(600_000);
  const deepArray = '['.repeat(50_000) + ']'.repeat(50_000);
  const deepObject = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
  type Case = { label: string; method: string; path: string; raw?: string; type?: string; authed?: boolean; status?: number };
  const cases: Case[] = [
    { label: 'array body', method: 'POST', path: '/v1/auth/register', raw: '[1,2,3]' },
    { label: 'null body', method: 'POST', path: '/v1/auth/register', raw: 'null' },
    { label: 'number body', method: 'POST', path: '/v1/auth/login', raw: '42' },
    { label: 'string body', method: 'POST', path: '/v1/auth/login', raw: '"hello"' },
    { label: 'boolean body', method: 'POST', path: '/v1/auth/login', raw: 'true' },
    { label: 'nested objects as fields', method: 'POST', path: '/v1/auth/register', raw: JSON.stringify({ email: { $ne: '' }, password: { a: [1] }, name: [[]] }) },
    { label: 'null fields', method: 'POST', path: '/v1/auth/login', raw: JSON.stringify({ email: null, password: null }) },
    { label: 'huge strings', method: 'POST', path: '/v1/auth/register', raw: JSON.stringify({ email: `${huge}@example.com`, password: huge, name: huge }) },
    { label: 'huge email on login', method: 'POST', path: '/v1/auth/login', raw: JSON.stringify({ email: `${huge}@x.io`, password: 'x' }) },
    { label: 'deeply nested array', method: 'POST', path: '/v1/auth/login', raw: deepArray },
    { label: 'deeply nested object', method: 'POST', path: '/v1/auth/login', raw: deepObject },
    { label: '__proto__ key', method: 'POST', path: '/v1/auth/login', raw: '{"__proto__":{"admin":true},"email":"a@b.co","password":"x"}' },
    { label: 'constructor.prototype key', method: 'POST', path: '/v1/auth/register', raw: '{"constructor":{"prototype":{"x":1}}}' },
    { label: 'text/plain body', method: 'POST', path: '/v1/auth/register', raw: JSON.stringify(validRegistration()), type: 'text/plain', status: 415 },
    { label: 'text/plain on login', method: 'POST', path: '/v1/auth/login', raw: 'email=a@b.co', type: 'text/plain', status: 415 },
    { label: 'form body', method: 'POST', path: '/v1/auth/login', raw: 'email=a%40b.co&password=x', type: 'application/x-www-form-urlencoded', status: 415 },
    { label: 'XML body', method: 'POST', path: '/v1/auth/login', raw: '<login/>', type: 'application/xml', status: 415 },
    { label: 'octet-stream body', method: 'POST', path: '/v1/auth/register', raw: '\u0000\u0001\u0002', type: 'application/octet-stream', status: 415 },
    { label: 'text/plain on an authed route', method: 'POST', path: '/v1/auth/logout-all', raw: 'x', type: 'text/plain', authed: true, status: 415 },
    { label: 'garbage on password change', method: 'POST', path: '/v1/auth/password', raw: '{"currentPassword":[],"newPassword":{}}', authed: true },
    { label: 'bad %-encoding in the path', method: 'GET', path: '/v1/user/sessions/%E0%A4%A' },
    { label: 'lone % in the path', method: 'GET', path: '/%' },
    { label: 'over-long path parameter', method: 'POST', path: `/v1/admin/users/${'x'.repeat(300)}/force-logout`, authed: true },
    { label: 'NUL in a path parameter', method: 'POST', path: '/v1/admin/users/%00/force-logout', authed: true },
    { label: 'repeated limit', method: 'GET', path: '/v1/user/sessions?limit=1&limit=2', authed: true },
    { label: 'enormous limit', method: 'GET', path: '/v1/user/sessions?limit=99999999999999999999999', authed: true },
    { label: 'unknown query field', method: 'GET', path: '/v1/user/sessions?where=1', authed: true },
    { label: 'too many repeated inIds', method: 'GET', path: `/v1/user/sessions?${Array.from({ length: 60 }, () => `inIds=${randomUUID()}`).join('&')}`, authed: true },
    { label: 'long inIds list with one bad id', method: 'GET', path: `/v1/user/sessions?inIds=${[...Array.from({ length: 300 }, () => randomUUID()), 'junk'].join(',')}`, authed: true },
    { label: 'garbage cursor', method: 'GET', path: '/v1/user/sessions?cursor=%FF%FE', authed: true },
    { label: 'over-long cursor', method: 'GET', path: `/v1/user/sessions?cursor=${'a'.repeat(700)}`, authed: true },
    { label: 'repeated cursor', method: 'GET', path: '/v1/user/sessions?cursor=a&cursor=b', authed: true },
  ];

  it.each(cases)('$label', async ({ method, path, raw, type, authed, status }) => {
    const c = authed ? member : server.client();
    const headers: Record<string, string> = raw === undefined ? {} : { 'content-type': type ?? 'application/json' };
    const res = await c.request(method, path, raw, headers);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    if (status !== undefined) expect(res.status).toBe(status);
    expectErrorBody(res, res.status);
  });

  it('the authed client used above still works (nothing it sent broke its session)', async () => {
    expect((await member.get('/v1/user/profile')).status).toBe(200);
  });
});

describe('X-Request-Id', () => {
  it('every response carries a fresh UUID, success or error, API or page', async () => {
    const c = server.client();
    const responses = [
      await c.post('/v1/auth/register', validRegistration()), // 201
      await c.get('/v1/user/profile'), // 200
      await c.get('/v1/user/sessions'), // 200 list
      await c.get('/'), // 200 page
      await c.get('/login'), // 200 page
      await server.client().get('/'), // 302
      await c.get('/v1/openapi.json'),
      await c.get('/v1/nope'), // 404
      await c.post('/v1/auth/register', '{'), // 400
      await server.client().get('/v1/user/profile'), // 401
      await c.post('/v1/auth/logout'), // 200 success
    ];
    const ids = responses.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(UUID_RE);
    expect(new Set(ids).size).toBe(ids.length);
    expect(responses.map((r) => r.status)).toEqual([201, 200, 200, 200, 200, 302, 200, 404, 400, 401, 200]);
  });
});
