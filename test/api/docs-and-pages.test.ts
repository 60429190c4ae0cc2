import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOD_PASSWORD, registerUser, startTrove, type Client, type Response, type RunningTrove } from '../helpers/trove.js';

// The API description (/v1/openapi.json, /docs) and the two web pages (/login, /).
let server: RunningTrove;
beforeAll(async () => { server = await startTrove(); });
afterAll(async () => { await server.close(); });

/** GET that follows up to five redirects on this server, like a browser would. */
async function browse(c: Client, path: string): Promise<Response & { finalPath: string }> {
  let current = path;
  for (let hop = 0; hop < 5; hop += 1) {
    const res = await c.get(current);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) return { ...res, finalPath: current };
    const next = new URL(location, server.baseUrl + current);
    expect(next.origin).toBe(server.baseUrl);
    current = next.pathname + next.search;
  }
  throw new Error(`too many redirects from ${path}`);
}

/** Same-origin script and stylesheet addresses a page loads. */
function assetsOf(html: string, pagePath: string): string[] {
  const refs = [...html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  return refs
    .map((ref) => new URL(ref, server.baseUrl + pagePath))
    .filter((url) => url.origin === server.baseUrl)
    .map((url) => url.pathname);
}

describe('GET /v1/openapi.json', () => {
  const expected: Array<[string, string]> = [
    ['post', '/v1/auth/register'],
    ['post', '/v1/auth/login'],
    ['post', '/v1/auth/logout'],
    ['post', '/v1/auth/logout-all'],
    ['post', '/v1/auth/password'],
    ['get', '/v1/auth/csrf'],
    ['get', '/v1/auth/sessions'],
    ['delete', '/v1/auth/sessions/{sessionId}'],
    ['get', '/v1/user/sessions'],
    ['delete', '/v1/user/sessions/{sessionId}'],
    ['get', '/v1/user/profile'],
    ['post', '/v1/admin/users/{userId}/force-logout'],
  ];

  it('is an OpenAPI 3 document, readable without signing in', async () => {
    const res = await server.client().get('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(res.body.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(typeof res.body.paths).toBe('object');
  });

  it.each(expected)('lists %s %s', async (method, path) => {
    const { body } = await server.client().get('/v1/openapi.json');
    expect(Object.keys(body.paths)).toContain(path);
    expect(Object.keys(body.paths[path])).toContain(method);
    expect(body.paths[path][method].responses).toEqual(expect.any(Object));
  });

  it('documents the 503 a route answers when the session store or database is out of reach', async () => {
    const { body } = await server.client().get('/v1/openapi.json');
    for (const [path, method] of [['/v1/user/profile', 'get'], ['/v1/auth/login', 'post'], ['/v1/auth/register', 'post']] as const) {
      expect(Object.keys(body.paths[path][method].responses)).toContain('503');
    }
    expect(body.info.description).toContain('Session store unavailable');
    expect(body.info.description).toContain('Database unavailable');
  });

  it('documents only /v1 routes: the web pages and the description itself are not in it', async () => {
    const { body } = await server.client().get('/v1/openapi.json');
    for (const path of Object.keys(body.paths)) expect(path.startsWith('/v1/')).toBe(true);
    expect(Object.keys(body.paths)).not.toContain('/v1/openapi.json');
  });

  it('documents the request fields a client must send', async () => {
    const { body } = await server.client().get('/v1/openapi.json');
    const schemaOf = (path: string) => body.paths[path].post.requestBody.content['application/json'].schema;
    expect(schemaOf('/v1/auth/register').required).toEqual(expect.arrayContaining(['email', 'password', 'name']));
    expect(schemaOf('/v1/auth/login').required).toEqual(expect.arrayContaining(['email', 'password']));
    expect(schemaOf('/v1/auth/password').required).toEqual(expect.arrayContaining(['currentPassword', 'newPassword']));
  });
});

describe('GET /docs', () => {
  it('answers a 200 HTML page (following redirects, with or without the trailing slash)', async () => {
    for (const path of ['/docs', '/docs/']) {
      const res = await browse(server.client(), path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.body).toMatch(/<html/i);
    }
  });

  it('loads its scripts and stylesheets from this server', async () => {
    const page = await browse(server.client(), '/docs/');
    const assets = assetsOf(page.body, page.finalPath);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) expect([asset, (await server.client().get(asset)).status]).toEqual([asset, 200]);
  });
});

describe('GET /login', () => {
  it('is a 200 HTML page with a form holding email and password inputs', async () => {
    const res = await server.client().get('/login');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = res.body as string;
    const form = html.match(/<form\b[^>]*>[\s\S]*?<\/form>/i)?.[0] ?? '';
    expect(form).toMatch(/<input\b[^>]*\bname="email"[^>]*>/);
    expect(form).toMatch(/<input\b[^>]*\btype="email"[^>]*>/);
    expect(form).toMatch(/<input\b[^>]*\bname="password"[^>]*\btype="password"[^>]*>/);
    expect(form).toMatch(/<button\b[^>]*type="submit"/);
  });

  it('needs no session, and its scripts load', async () => {
    const res = await server.client().get('/login');
    const assets = assetsOf(res.body, '/login');
    expect(assets).toContain('/login.js');
    for (const asset of assets) {
      const script = await server.client().get(asset);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toMatch(/javascript/);
    }
  });
});

describe('GET / (home)', () => {
  it('after login answers 200 HTML showing the user name', async () => {
    const { email } = await registerUser(server.client(), { name: 'Grace Hopper' });
    const c = server.client();
    expect((await c.post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
    const res = await c.get('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.body).toContain('Grace Hopper');
    expect(res.body).toContain(email);
  });

  it('shows a name with HTML characters as text, not markup', async () => {
    const name = `Zoë <img src=x onerror=alert(1)> O'Brien & "Co"`;
    const c = server.client();
    await registerUser(c, { name });
    const res = await c.get('/');
    expect(res.status).toBe(200);
    expect(res.body).not.toContain('<img src=x');
    expect(res.body).toContain('Zoë &lt;img src=x onerror=alert(1)&gt; O&#39;Brien &amp; &quot;Co&quot;');
  });

  it('after logout it sends the browser back to /login', async () => {
    const c = server.client();
    await registerUser(c);
    expect((await c.get('/')).status).toBe(200);
    expect((await c.post('/v1/auth/logout')).status).toBe(200);
    const res = await browse(c, '/');
    expect(res.finalPath).toBe('/login');
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/<form\b/);
  });
});
