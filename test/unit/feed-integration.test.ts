import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CredentialsRejectedError,
  type IntegrationClass,
  type IntegrationRuntime,
  type TaskOutput,
} from '../../src/integrations/contract.js';
import FeedIntegration, { FeedFetchError, type FeedRuntime } from '../../src/integrations/feed/index.js';
import { DEFAULT_TIMEOUT_MS, formatSeconds, mayReceiveLogin } from '../../src/integrations/feed/fetch.js';
import { htmlToText } from '../../src/integrations/feed/text.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

// The registry loads the default export as an IntegrationClass: this line fails to compile otherwise.
const asRegistered: IntegrationClass = FeedIntegration;

const fixture = (name: string) => readFileSync(new URL(`../fixtures/feeds/${name}`, import.meta.url));
const settings: IntegrationRuntime['settings'] = { envPrefix: 'FEED' };
const runtime: FeedRuntime = { settings, timeoutMs: 300, maxBytes: 64 * 1024 };

let server: Server;
let other: Server;
let base: string;
let otherBase: string;
let closedPortUrl: string;
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

function send(res: ServerResponse, type: string, body: Buffer | string, status = 200) {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
}

// Writes until the client goes away, without a content-length: only a counted read stops it.
function endless(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/rss+xml' });
  const chunk = Buffer.alloc(16 * 1024, 'a');
  let open = true;
  res.on('close', () => (open = false));
  const pump = () => {
    while (open && res.write(chunk));
    if (open) res.once('drain', pump);
  };
  res.write('<?xml version="1.0"?><rss version="2.0"><channel><title>');
  pump();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push({ path, headers: req.headers });
    const rss = 'application/rss+xml; charset=utf-8';
    switch (path) {
      case '/rss.xml':
        return send(res, rss, fixture('rss2.xml'));
      case '/atom.xml':
        return send(res, 'application/atom+xml', fixture('atom.xml'));
      case '/feed.json':
        return send(res, 'application/feed+json', fixture('feed.json'));
      case '/rdf.xml':
        return send(res, 'application/rdf+xml', fixture('rdf.xml'));
      case '/latin1.xml':
        return send(res, 'text/xml', fixture('latin1.xml'));
      case '/utf16.xml': {
        // Says ISO-8859-1 in its declaration, but the byte order mark is what holds.
        const xml = fixture('rss2.xml').toString('utf8').replace('encoding="UTF-8"', 'encoding="ISO-8859-1"');
        return send(res, 'application/xml', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]));
      }
      case '/broken.xml':
        return send(res, 'application/xml', fixture('broken.xml'));
      case '/page.html':
        return send(res, 'text/html', fixture('page.html'));
      case '/private.xml': {
        const expected = `Basic ${Buffer.from('alice:s3cret pass').toString('base64')}`;
        if (req.headers.authorization === expected) return send(res, rss, fixture('rss2.xml'));
        res.setHeader('www-authenticate', 'Basic realm="feeds"');
        return send(res, 'text/plain', 'unauthorized', 401);
      }
      case '/redirect':
        res.writeHead(302, { location: '/rss.xml' });
        return res.end();
      case '/to-private':
        res.writeHead(307, { location: '/private.xml' });
        return res.end();
      case '/to-other-origin':
        res.writeHead(302, { location: `${otherBase}/rss.xml` });
        return res.end();
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        return res.end();
      case '/forbidden':
        return send(res, 'text/plain', 'no robots', 403);
      case '/stall-body':
        res.writeHead(200, { 'content-type': rss });
        return res.write('<?xml version="1.0"?><rss version="2.0"><channel>');
      case '/redirect-ftp':
        res.writeHead(301, { location: 'ftp://127.0.0.1/feed.xml' });
        return res.end();
      case '/slow':
        return; // never answers
      case '/endless':
        return endless(res);
      case '/declared-huge':
        res.writeHead(200, { 'content-type': rss, 'content-length': String(50 * 1024 * 1024) });
        return res.write('<rss>');
      case '/empty.xml':
        return send(res, rss, '<?xml version="1.0"?><rss version="2.0"><channel><title>Quiet</title></channel></rss>');
      default:
        return send(res, 'text/plain', 'not found', 404);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  other = createServer((req, res) => {
    seen.push({ path: `other${req.url}`, headers: req.headers });
    send(res, 'application/rss+xml', fixture('rss2.xml'));
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;

  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPortUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/feed.xml`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});

afterAll(async () => {
  for (const s of [server, other]) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

const feed = (path: string, extra: Record<string, unknown> = {}, rt: FeedRuntime = runtime) =>
  new FeedIntegration({ url: `${base}${path}`, ...extra }, undefined, rt);

async function rejection(integration: FeedIntegration): Promise<CredentialsRejectedError> {
  const error = await integration.validateAuthentication().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CredentialsRejectedError);
  return error as CredentialsRejectedError;
}

async function start(integration: FeedIntegration): Promise<TaskOutput[]> {
  const result = await integration.runTask({ type: 'start', payload: {} });
  expect(result.tasks ?? []).toEqual([]);
  return result.output;
}

describe('feed manifest and credentials schema', () => {
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  const validate = ajv.compile(FeedIntegration.manifest.credentialsSchema);
  const errorsOf = (input: unknown) => {
    validate(input);
    return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.keyword} ${JSON.stringify(e.params)}`);
  };

  it('describes a credentials integration without OAuth', () => {
    expect(asRegistered.manifest).toMatchObject({ name: 'feed', kinds: ['feed'], auth: 'credentials' });
    expect(FeedIntegration.manifest.credentialFields.map((f) => [f.name, f.type, f.required, f.secret])).toEqual([
      ['url', 'url', true, false],
      ['username', 'string', false, false],
      ['password', 'password', false, true],
    ]);
    expect('generateAuthorizationUrl' in FeedIntegration).toBe(false);
  });

  it('accepts an http(s) address, with or without a login', () => {
    expect(validate({ url: 'https://example.org/feed.xml' })).toBe(true);
    expect(validate({ url: 'HTTP://example.org/rss?page=1' })).toBe(true);
    expect(validate({ url: 'https://example.org/feed', username: 'alice', password: 'pw' })).toBe(true);
    expect(validate({ url: 'https://example.org/feed', username: 'alice' })).toBe(true);
  });

  it('rejects bad input, naming the field', () => {
    expect(errorsOf({})).toEqual(['/ required {"missingProperty":"url"}']);
    expect(errorsOf({ url: 'ftp://example.org/feed.xml' })).toEqual(['/url pattern {"pattern":"^[Hh][Tt][Tt][Pp][Ss]?://[^\\\\s/?#]+"}']);
    expect(errorsOf({ url: 'javascript:alert(1)' })[0]).toMatch(/^\/url pattern/);
    expect(errorsOf({ url: 'not a url' })).toContain('/url format {"format":"uri"}');
    expect(errorsOf({ url: `https://example.org/${'a'.repeat(2048)}` })[0]).toMatch(/^\/url maxLength/);
    expect(errorsOf({ url: 42 })[0]).toMatch(/^\/url type/);
    expect(errorsOf({ url: 'https://example.org/', password: 'pw' })).toEqual([
      '/ dependencies {"property":"password","missingProperty":"username","depsCount":1,"deps":"username"}',
    ]);
    expect(errorsOf({ url: 'https://example.org/', token: 'x' })).toEqual([
      '/ additionalProperties {"additionalProperty":"token"}',
    ]);
    expect(errorsOf({ url: 'https://example.org/', username: '' })[0]).toMatch(/^\/username minLength/);
  });
});

describe('feed integration: reading feeds', () => {
  it('maps RSS 2.0 items to outputs a person can search', async () => {
    const output = await start(feed('/rss.xml'));
    expect(output).toEqual([
      {
        externalId: 'garden-42',
        kind: 'feed',
        title: 'Tomatoes & basil',
        from: 'Ada Gardener',
        date: '2026-03-03T07:30:00.000Z',
        url: 'https://garden.example/posts/tomatoes',
        text: 'Planted six seedlings today — "San Marzano". water daily stake at 30 cm',
      },
      {
        externalId: 'https://garden.example/posts/compost',
        kind: 'feed',
        title: 'Compost, week two',
        from: 'Bob Digger',
        date: '2026-03-01T18:00:00.000Z',
        url: 'https://garden.example/posts/compost',
        text: 'The heap is warm at last. 5 < 7 & rising.',
      },
      {
        externalId: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        kind: 'feed',
        title: 'A note without link or guid',
        text: 'Just text.',
      },
    ]);
    // The id without guid or link is stable between syncs.
    expect((await start(feed('/rss.xml')))[2]!.externalId).toBe(output[2]!.externalId);
  });

  it('maps Atom entries, with HTML titles and the feed author as fallback', async () => {
    expect(await start(feed('/atom.xml'))).toEqual([
      {
        externalId: 'tag:workshop.example,2026:entry-7',
        kind: 'feed',
        title: 'Sanding oak & pine',
        from: 'Dev Joiner',
        date: '2026-02-09T09:15:00.000Z',
        url: 'https://workshop.example/entries/7',
        text: 'Grit Start at 80, end at 240 grit.',
      },
      {
        externalId: 'tag:workshop.example,2026:entry-6',
        kind: 'feed',
        title: 'Glue-up tips',
        from: 'Cleo Maker',
        date: '2026-02-01T08:00:00.000Z',
        url: 'https://workshop.example/entries/6',
        text: 'Clamp evenly, wipe squeeze-out & wait.',
      },
      {
        externalId: 'tag:workshop.example,2026:entry-5',
        kind: 'feed',
        title: 'Dovetails, by hand',
        from: 'Cleo Maker',
        date: '2026-01-20T21:45:00.000Z',
        text: 'Mark & saw. Chisel the <waste>.',
      },
    ]);
  });

  it('maps JSON Feed items too', async () => {
    expect(await start(feed('/feed.json'))).toEqual([
      {
        externalId: 'kitchen-3',
        kind: 'feed',
        title: 'Sourdough, again',
        from: 'Fay Baker',
        date: '2026-04-02T05:00:00.000Z',
        url: 'https://kitchen.example/3',
        text: 'Starter at day 5.',
      },
    ]);
  });

  it('maps RSS 1.0 (RDF) items', async () => {
    expect(await start(feed('/rdf.xml'))).toEqual([
      {
        externalId: 'https://radio.example/1',
        kind: 'feed',
        title: 'Shortwave at dawn',
        from: 'Eve Listener',
        date: '2026-01-05T06:00:00.000Z',
        url: 'https://radio.example/1',
        text: 'Heard three stations.',
      },
    ]);
  });

  it('decodes the encoding the XML declares, or its byte order mark', async () => {
    const [entry] = await start(feed('/latin1.xml'));
    expect(entry).toMatchObject({ title: 'Café crème', text: 'Déjà vu à Zürich.' });
    const [first] = await start(feed('/utf16.xml'));
    expect(first).toMatchObject({ title: 'Tomatoes & basil', text: expect.stringContaining('today — "San Marzano"') });
  });

  it('skips entries already stored, asking by external id', async () => {
    const asked: string[] = [];
    const integration = new FeedIntegration(
      { url: `${base}/rss.xml` },
      async ({ externalId }) => {
        asked.push(externalId);
        return externalId === 'garden-42';
      },
      runtime,
    );
    const output = await start(integration);
    expect(output.map((o) => o.title)).toEqual(['Compost, week two', 'A note without link or guid']);
    expect(asked.slice(0, 2)).toEqual(['garden-42', 'https://garden.example/posts/compost']);
  });

  it('follows a redirect, and sends a descriptive User-Agent and feed Accept types', async () => {
    expect(await feed('/redirect').validateAuthentication()).toBe(true);
    const request = seen.filter((r) => r.path === '/rss.xml').at(-1)!;
    expect(request.headers['user-agent']).toMatch(/^Trove\//);
    expect(request.headers.accept).toContain('application/rss+xml');
    expect(request.headers.accept).toContain('application/atom+xml');
    expect(request.headers.authorization).toBeUndefined();
  });

  it('logs in with basic authentication when a username and password are given', async () => {
    const integration = feed('/private.xml', { username: 'alice', password: 's3cret pass' });
    expect(await integration.validateAuthentication()).toBe(true);
    expect(await start(integration)).toHaveLength(3);
    expect(await feed('/to-private', { username: 'alice', password: 's3cret pass' }).validateAuthentication()).toBe(true);
  });

  it('does not send the login to another origin a redirect points to', async () => {
    expect(await feed('/to-other-origin', { username: 'alice', password: 's3cret pass' }).validateAuthentication()).toBe(
      true,
    );
    const first = seen.filter((r) => r.path === '/to-other-origin').at(-1)!;
    const redirected = seen.filter((r) => r.path === 'other/rss.xml').at(-1)!;
    expect(first.headers.authorization).toMatch(/^Basic /);
    expect(redirected.headers.authorization).toBeUndefined();
  });

  it('keeps the login for the same origin and its https upgrade only', () => {
    const given = new URL('http://feeds.example/a.xml');
    expect(mayReceiveLogin(given, new URL('http://feeds.example/b.xml'))).toBe(true);
    expect(mayReceiveLogin(given, new URL('https://feeds.example/a.xml'))).toBe(true);
    expect(mayReceiveLogin(given, new URL('https://cdn.example/a.xml'))).toBe(false);
    expect(mayReceiveLogin(given, new URL('http://feeds.example:8080/a.xml'))).toBe(false);
    expect(mayReceiveLogin(new URL('https://feeds.example/a.xml'), new URL('http://feeds.example/a.xml'))).toBe(false);
  });

  it('accepts a valid feed with no entries', async () => {
    const integration = feed('/empty.xml');
    expect(await integration.validateAuthentication()).toBe(true);
    expect(await start(integration)).toEqual([]);
  });

  it('has no task but start', async () => {
    await expect(feed('/rss.xml').runTask({ type: 'downloadEmail', payload: {} })).rejects.toThrow(
      'The feed integration has no task "downloadEmail"; its only task is "start"',
    );
  });

  it('initializes and shuts down without a connection to manage', async () => {
    const integration = feed('/rss.xml');
    await expect(integration.initialize()).resolves.toBeUndefined();
    await expect(integration.shutdown()).resolves.toBeUndefined();
  });
});

describe('feed integration: reasons a person can act on', () => {
  it.each([
    ['/missing.xml', {}, 'Feed could not be fetched: HTTP 404'],
    ['/private.xml', {}, 'Feed requires a username and password (HTTP 401)'],
    ['/private.xml', { username: 'alice', password: 'wrong-Pa55' }, 'Feed did not accept the username and password (HTTP 401)'],
    ['/broken.xml', {}, 'Not an RSS or Atom feed'],
    ['/page.html', {}, 'Not an RSS or Atom feed: the address is a web page; use the address of its feed'],
    ['/slow', {}, 'Feed did not answer within 0.3 s'],
    ['/endless', {}, 'Feed is larger than 64 KiB'],
    ['/declared-huge', {}, 'Feed is larger than 64 KiB'],
    ['/forbidden', {}, 'Feed refused access (HTTP 403)'],
    ['/stall-body', {}, 'Feed did not answer within 0.3 s'],
    ['/redirect-ftp', {}, 'Feed redirected to an address that is not http or https'],
    ['/loop', {}, 'Feed redirected more than 5 times'],
  ])('%s %j -> "%s"', async (path, extra, reason) => {
    const error = await rejection(feed(path, extra));
    expect(error.message).toBe(reason);
    expect(error.message).not.toContain('Pa55');
  });

  it('names the network error when nothing listens', async () => {
    const error = await rejection(new FeedIntegration({ url: closedPortUrl }, undefined, runtime));
    expect(error.message).toBe('Feed could not be reached: ECONNREFUSED (connection refused)');
  });

  it('states the limits in force: 10 MiB by default, the runtime timeout', async () => {
    const big = feed('/declared-huge', {}, { settings });
    expect((await rejection(big)).message).toBe('Feed is larger than 10 MiB');
    const slow = feed('/slow', {}, { settings, timeoutMs: 200 });
    expect((await rejection(slow)).message).toBe('Feed did not answer within 0.2 s');
    expect(formatSeconds(DEFAULT_TIMEOUT_MS)).toBe('15 s');
  });

  it.each([
    [{ url: 'ftp://127.0.0.1/feed.xml' }, 'The feed address must start with http:// or https://'],
    [{ url: 'nonsense' }, 'The feed address is not a valid URL'],
    [{}, 'The feed address is missing'],
    [{ url: 'http://bob:Pa55@127.0.0.1/feed.xml' }, 'Put the username and password in their own fields, not in the feed address'],
    [{ url: 'http://127.0.0.1/feed.xml', password: 'Pa55' }, 'A password was given without a username'],
  ])('refuses credentials %j before fetching', async (credentials, reason) => {
    const error = await rejection(new FeedIntegration(credentials, undefined, runtime));
    expect(error.message).toBe(reason);
  });

  it('fails a sync with CredentialsRejectedError only when the login is refused', async () => {
    await expect(start(feed('/private.xml'))).rejects.toBeInstanceOf(CredentialsRejectedError);
    await expect(start(feed('/forbidden', { username: 'alice' }))).rejects.toBeInstanceOf(CredentialsRejectedError);
    await expect(start(feed('/forbidden'))).rejects.not.toBeInstanceOf(CredentialsRejectedError);
    await expect(start(new FeedIntegration({ url: 'ftp://x/' }, undefined, runtime))).rejects.toBeInstanceOf(
      CredentialsRejectedError,
    );
    const error = await start(feed('/missing.xml')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FeedFetchError);
    expect(error).not.toBeInstanceOf(CredentialsRejectedError);
    expect((error as Error).message).toBe('Feed could not be fetched: HTTP 404');
  });

  it('shutdown aborts a fetch in flight', async () => {
    const integration = feed('/slow', {}, { settings, timeoutMs: 10_000 });
    const pending = integration.validateAuthentication().catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await integration.shutdown();
    const error = await pending;
    expect(error).toBeInstanceOf(CredentialsRejectedError);
    expect((error as Error).message).toBe('Feed fetch was cancelled because Trove is shutting down');
  });
});

describe('htmlToText', () => {
  it('drops markup, scripts and styles, decodes entities and collapses whitespace', () => {
    expect(htmlToText('<p>a</p><p>b&amp;c&nbsp;&#x263A;</p>')).toBe('a b&c ☺');
    expect(htmlToText('<a title="x>y" href="#">link</a>  <script>var s = "<p>";</script><style>p{}</style>end')).toBe(
      'link end',
    );
    expect(htmlToText('<!-- hidden --><b>bold</b> <i>unclosed')).toBe('bold unclosed');
    expect(htmlToText('5 < 7 and 8 > 6')).toBe('5 < 7 and 8 > 6');
  });
});
