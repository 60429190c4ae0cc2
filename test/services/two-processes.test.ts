/**
 * Two Trove instances on one PostgreSQL database and one Redis prefix, as behind a load
 * balancer: whatever one of them does to a session, the other sees on the very next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServicesBackend, type ServicesBackend } from '../helpers/backends.js';
import { Client, GOOD_PASSWORD, registerUser, startTrove, uniqueEmail, type RunningTrove } from '../helpers/trove.js';

const NEW_PASSWORD = 'Quartz-Meadow-92-violin';

/** The same cookie jar used against another instance: a browser behind a round-robin proxy. */
async function onOther(client: Client, other: RunningTrove): Promise<Client> {
  const moved = other.client();
  const cookie = await client.sessionCookie();
  if (cookie) await moved.setSessionCookie(cookie);
  return moved;
}

describe('two processes on one PostgreSQL and one Redis', () => {
  let backend: ServicesBackend;
  let a: RunningTrove;
  let b: RunningTrove;
  let admin: { client: Client; user: { id: string } };

  beforeAll(async () => {
    backend = await createServicesBackend();
    // Started together on an empty database: both run the migrations at once.
    [a, b] = await Promise.all([
      startTrove({ ...backend.env, LOGIN_RATE_LIMIT_MAX: '1000' }),
      startTrove({ ...backend.env, LOGIN_RATE_LIMIT_MAX: '1000' }),
    ]);
    const client = a.client();
    const { user } = await registerUser(client);
    admin = { client, user };
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await backend?.dispose();
  });

  it('a session created through one works through the other, and its list is the same on both', async () => {
    const client = a.client();
    const { user } = await registerUser(client);
    const there = await onOther(client, b);
    const profile = await there.get('/v1/user/profile');
    expect(profile.status).toBe(200);
    expect(profile.body.result.id).toBe(user.id);
    const here = (await client.get('/v1/user/sessions')).body.results;
    const other = (await there.get('/v1/user/sessions')).body.results;
    expect(other.map((s: { id: string }) => s.id)).toEqual(here.map((s: { id: string }) => s.id));
  });

  it('a logout through one is refused through the other on the very next request', async () => {
    const client = b.client();
    await registerUser(client);
    const there = await onOther(client, a);
    expect((await there.get('/v1/user/profile')).status).toBe(200);
    expect((await client.post('/v1/auth/logout')).status).toBe(200);
    const next = await there.get('/v1/user/profile');
    expect(next.status).toBe(401);
    expect(next.body.message).toBe('Invalid session');
  });

  it('logout-all through one ends the other sessions on the other, even with their requests in flight', async () => {
    const first = a.client();
    const { email } = await registerUser(first);
    const others = await Promise.all(
      [1, 2, 3].map(async () => {
        const c = b.client();
        expect((await c.post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
        return c;
      }),
    );
    const inFlight = others.flatMap((c) => [1, 2, 3, 4].map(() => c.get('/v1/user/profile')));
    const ended = await first.post('/v1/auth/logout-all');
    expect(ended.status).toBe(200);
    await Promise.all(inFlight);
    // Their own in-flight requests may have been refused already (clearing the cookie); either way, none gets in.
    for (const c of others) expect((await c.get('/v1/user/profile')).status).toBe(401);
    expect((await (await onOther(first, b)).get('/v1/user/profile')).status).toBe(200);
  });

  it('a force-logout through one ends every session of the user on the other', async () => {
    const target = b.client();
    const { user, email } = await registerUser(target);
    const second = b.client();
    expect((await second.post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
    expect((await admin.client.post(`/v1/admin/users/${user.id}/force-logout`)).status).toBe(200);
    for (const c of [target, second]) expect((await c.get('/v1/user/profile')).status).toBe(401);
  });

  it('a password change through one ends the old sessions on the other; the new cookie works on both', async () => {
    const changer = a.client();
    const { email } = await registerUser(changer);
    const elsewhere = b.client();
    expect((await elsewhere.post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
    const old = await onOther(changer, b);
    expect((await changer.post('/v1/auth/password', { currentPassword: GOOD_PASSWORD, newPassword: NEW_PASSWORD })).status).toBe(200);
    expect((await elsewhere.get('/v1/user/profile')).status).toBe(401);
    expect((await old.get('/v1/user/profile')).status).toBe(401);
    expect((await (await onOther(changer, b)).get('/v1/user/profile')).status).toBe(200);
    expect((await b.client().post('/v1/auth/login', { email, password: NEW_PASSWORD })).status).toBe(200);
  });
});

describe('two processes sharing the login rate limit', () => {
  let backend: ServicesBackend;
  let a: RunningTrove;
  let b: RunningTrove;

  beforeAll(async () => {
    backend = await createServicesBackend();
    a = await startTrove({ ...backend.env, LOGIN_RATE_LIMIT_MAX: '5' });
    b = await startTrove({ ...backend.env, LOGIN_RATE_LIMIT_MAX: '5' });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await backend?.dispose();
  });

  it('counts attempts across both: the 6th wrong password is refused, whichever process gets it', async () => {
    const email = uniqueEmail('limit');
    const wrong = { email, password: 'not-the-password-123' };
    for (const server of [a, b, a, b, a]) expect((await server.client().post('/v1/auth/login', wrong)).status).toBe(401);
    for (const server of [b, a]) {
      const res = await server.client().post('/v1/auth/login', wrong);
      expect(res.status).toBe(429);
      expect(res.body.message).toBe('Too many login attempts');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
});

describe('first registrations racing on two processes', () => {
  let backend: ServicesBackend;
  let a: RunningTrove;
  let b: RunningTrove;

  beforeAll(async () => {
    backend = await createServicesBackend();
    [a, b] = await Promise.all([startTrove({ ...backend.env }), startTrove({ ...backend.env })]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await backend?.dispose();
  });

  it('make exactly one admin', async () => {
    const clients = [a, b, a, b, a, b].map((s) => s.client());
    await Promise.all(clients.map((c) => registerUser(c)));
    const roles = await Promise.all(clients.map(async (c) => (await c.get('/v1/user/profile')).body.result.role as string));
    expect(roles.filter((r) => r === 'admin')).toHaveLength(1);
    expect(roles.filter((r) => r === 'user')).toHaveLength(5);
  });
});
