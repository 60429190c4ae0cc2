/**
 * The integrations API of decisions §7: the catalog, connecting a credentials integration (the
 * feed) against a real HTTP server on loopback, listing and disconnecting.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_PASSWORD, FEED_USER, startFeedServer } from '../helpers/feed-server.js';
import { expectErrorBody, registerUser, startTrove, UUID_RE, type Client, type RunningTrove } from '../helpers/trove.js';

let server: RunningTrove;
let feeds: Awaited<ReturnType<typeof startFeedServer>>;

beforeAll(async () => {
  feeds = await startFeedServer();
  server = await startTrove({ LOGIN_RATE_LIMIT_MAX: '1000' });
});
afterAll(async () => {
  await server?.close();
  await feeds?.close();
});

async function signedIn(trove = server): Promise<Client> {
  const client = trove.client();
  await registerUser(client);
  return client;
}

const connectFeed = (client: Client, credentials: Record<string, unknown>) =>
  client.post('/v1/user-integrations', { integration: 'feed', credentials });

describe('GET /v1/integrations', () => {
  it('lists the installed integrations with their manifests and whether the server can use them', async () => {
    const client = await signedIn();
    const res = await client.get('/v1/integrations');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ operation: 'integration.readMany', total: 2, nextCursor: null });
    const byName: Record<string, any> = Object.fromEntries((res.body.results as Array<{ name: string }>).map((i) => [i.name, i]));
    expect(byName.gmail).toMatchObject({ title: 'Gmail', kinds: ['email'], auth: 'oauth', configured: false });
    expect(byName.feed).toMatchObject({ kinds: ['feed'], auth: 'credentials', configured: true });
    expect(byName.feed.credentialsSchema).toMatchObject({ required: ['url'] });
    expect(byName.feed.credentialFields.map((f: { name: string }) => f.name)).toEqual(['url', 'username', 'password']);
  });

  it('says an OAuth integration is configured once its client id and secret are set', async () => {
    const trove = await startTrove({ GMAIL_OAUTH_CLIENT_ID: 'client-id-7', GMAIL_OAUTH_CLIENT_SECRET: 'client-secret-value-7' });
    try {
      const res = await (await signedIn(trove)).get('/v1/integrations');
      expect(res.body.results.find((i: { name: string }) => i.name === 'gmail').configured).toBe(true);
      expect(JSON.stringify(res.body)).not.toContain('client-secret-value-7');
    } finally {
      await trove.close();
    }
  });

  it('needs a session', async () => {
    expectErrorBody(await server.client().get('/v1/integrations'), 401, 'No session cookie');
  });
});

describe('POST /v1/user-integrations', () => {
  it('connects a feed that can be fetched and parsed: 201 with the connection, never the credentials', async () => {
    const client = await signedIn();
    const res = await connectFeed(client, { url: feeds.url('/rss.xml') });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ operation: 'userIntegration.readOne', requestId: res.headers.get('x-request-id') });
    expect(res.body.result).toEqual({
      id: expect.stringMatching(UUID_RE),
      integration: 'feed',
      status: 'connected',
      lastError: null,
      itemCount: 0,
      lastSyncAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const list = await client.get('/v1/user-integrations');
    expect(list.body.results).toEqual([res.body.result]);
  });

  it('connects an Atom feed and a feed behind basic authentication, keeping the password out of answers and the database', async () => {
    const client = await signedIn();
    expect((await connectFeed(client, { url: feeds.url('/atom.xml') })).status).toBe(201);
    const other = await signedIn();
    const res = await connectFeed(other, { url: feeds.url('/private.xml'), username: FEED_USER, password: FEED_PASSWORD });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const list = await other.get('/v1/user-integrations');
    expect(JSON.stringify([res.body, list.body])).not.toContain(FEED_PASSWORD);
    for (const file of readdirSync(server.dataDir).filter((f) => f.startsWith('trove.db'))) {
      expect(readFileSync(path.join(server.dataDir, file)).toString('latin1').includes(FEED_PASSWORD), file).toBe(false);
    }
    const stored = await server.trove.services.userIntegrations.credentialsOf({ id: res.body.result.id });
    expect(stored).toEqual({ url: feeds.url('/private.xml'), username: FEED_USER, password: FEED_PASSWORD });
  });

  it('answers 400 with the reason when the feed cannot be fetched or parsed, and stores nothing', async () => {
    const client = await signedIn();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ url: feeds.url('/missing.xml') }, /^Credentials rejected: .*404/],
      [{ url: feeds.url('/broken.xml') }, /^Credentials rejected: Not an RSS or Atom feed/],
      [{ url: feeds.url('/page.html') }, /^Credentials rejected: .*web page/],
      [{ url: feeds.url('/private.xml'), username: FEED_USER, password: 'wrong-password-here' }, /^Credentials rejected: .*401/],
    ];
    for (const [credentials, message] of cases) {
      expectErrorBody(await connectFeed(client, credentials), 400, message);
    }
    expect((await client.get('/v1/user-integrations')).body.results).toEqual([]);
  });

  it("answers 400 naming the field when the credentials do not fit the integration's schema, before fetching anything", async () => {
    const client = await signedIn();
    const before = feeds.requests.length;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /body\/credentials\/url is required/],
      [{ url: 42 }, /body\/credentials\/url/],
      [{ url: 'file:///etc/passwd' }, /body\/credentials\/url/],
      [{ url: feeds.url('/rss.xml'), colour: 'blue' }, /body\/credentials\/colour is not an allowed field/],
      [{ url: feeds.url('/rss.xml'), password: 'x' }, /body\/credentials/],
    ];
    for (const [credentials, message] of cases) {
      expectErrorBody(await connectFeed(client, credentials), 400, message);
    }
    expectErrorBody(await client.post('/v1/user-integrations', { integration: 'feed' }), 400, /body\/credentials is required/);
    expect(feeds.requests.length).toBe(before);
  });

  it('answers 404 for an unknown integration and 400 for one that connects through OAuth', async () => {
    const client = await signedIn();
    expectErrorBody(
      await client.post('/v1/user-integrations', { integration: '../feed', credentials: { url: feeds.url('/rss.xml') } }),
      404,
      'Integration not found',
    );
    expectErrorBody(await client.post('/v1/user-integrations', { integration: 'gmail', credentials: {} }), 400, /connects through OAuth/);
  });

  it('answers 409 when the integration is already connected; after a disconnect it connects again', async () => {
    const client = await signedIn();
    const first = await connectFeed(client, { url: feeds.url('/rss.xml') });
    expect(first.status).toBe(201);
    expectErrorBody(await connectFeed(client, { url: feeds.url('/atom.xml') }), 409, 'Integration already connected');
    expect((await client.delete(`/v1/user-integrations/${first.body.result.id}`)).body).toEqual({ success: true });
    const again = await connectFeed(client, { url: feeds.url('/atom.xml') });
    expect(again.status).toBe(201);
    expect(again.body.result.id).not.toBe(first.body.result.id);
  });

  it('needs a session', async () => {
    expectErrorBody(await connectFeed(server.client(), { url: feeds.url('/rss.xml') }), 401, 'No session cookie');
  });
});

describe('GET /v1/user-integrations and DELETE /v1/user-integrations/:id', () => {
  it("shows only the caller's connections, filters by inIds/ninIds and pages", async () => {
    const client = await signedIn();
    const feed = (await connectFeed(client, { url: feeds.url('/rss.xml') })).body.result;
    const stranger = await signedIn();
    await connectFeed(stranger, { url: feeds.url('/atom.xml') });

    const all = await client.get('/v1/user-integrations');
    expect(all.body).toMatchObject({ operation: 'userIntegration.readMany', total: 1, nextCursor: null });
    expect(all.body.results.map((r: { id: string }) => r.id)).toEqual([feed.id]);
    expect((await client.get(`/v1/user-integrations?inIds=${feed.id}`)).body.total).toBe(1);
    expect((await client.get(`/v1/user-integrations?inIds=${randomUUID()}`)).body.total).toBe(0);
    expect((await client.get(`/v1/user-integrations?ninIds=${feed.id}`)).body.total).toBe(0);
    expectErrorBody(await client.get('/v1/user-integrations?inIds=not-a-uuid'), 400, /inIds/);
    expectErrorBody(await client.get('/v1/user-integrations?limit=501'), 400, /limit/);
  });

  it("disconnects with a soft delete; another user's id and an unknown id are 404", async () => {
    const owner = await signedIn();
    const other = await signedIn();
    const { id } = (await connectFeed(owner, { url: feeds.url('/rss.xml') })).body.result;

    expectErrorBody(await other.delete(`/v1/user-integrations/${id}`), 404, 'Integration connection not found');
    expect((await owner.get('/v1/user-integrations')).body.total).toBe(1);
    expectErrorBody(await owner.delete(`/v1/user-integrations/${randomUUID()}`), 404, 'Integration connection not found');

    expect((await owner.delete(`/v1/user-integrations/${id}`)).body).toEqual({ success: true });
    expect((await owner.get('/v1/user-integrations')).body.total).toBe(0);
    expectErrorBody(await owner.delete(`/v1/user-integrations/${id}`), 404, 'Integration connection not found');

    // Soft: the row is still there, marked, and its credentials are no longer handed out.
    const row = await server.trove.services.database.db
      .selectFrom('user_integrations')
      .select(['deleted_at', 'status'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
    expect(row.status).toBe('disconnected');
    expect(await server.trove.services.userIntegrations.credentialsOf({ id })).toBeUndefined();
  });
});

describe('with CSRF_ENABLED=true', () => {
  it('connecting and disconnecting need the anti-forgery token', async () => {
    const trove = await startTrove({ CSRF_ENABLED: 'true' });
    try {
      const client = trove.client();
      await registerUser(client);
      const token = (await client.get('/v1/auth/csrf')).body.csrfToken as string;
      expectErrorBody(await connectFeed(client, { url: feeds.url('/rss.xml') }), 403, 'Invalid CSRF token');
      const ok = await client.post('/v1/user-integrations', { integration: 'feed', credentials: { url: feeds.url('/rss.xml') }, csrfToken: token });
      expect(ok.status).toBe(201);
      expectErrorBody(await client.delete(`/v1/user-integrations/${ok.body.result.id}`), 403, 'Invalid CSRF token');
      expect((await client.delete(`/v1/user-integrations/${ok.body.result.id}`, { 'x-csrf-token': token })).status).toBe(200);
    } finally {
      await trove.close();
    }
  });
});
