import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/feeds/${name}`, import.meta.url));

export const FEED_USER = 'reader';
export const FEED_PASSWORD = 'Hedgehog-Lantern-Nine-22';

/**
 * A real HTTP server on loopback serving feeds: RSS and Atom files, a broken file, a 404, a web
 * page, and an RSS file behind basic authentication.
 */
export async function startFeedServer(): Promise<{ url(path: string): string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const send = (type: string, body: Buffer | string) => res.writeHead(200, { 'content-type': type }).end(body);
    switch (req.url) {
      case '/rss.xml':
        return send('application/rss+xml', fixture('rss2.xml'));
      case '/atom.xml':
        return send('application/atom+xml', fixture('atom.xml'));
      case '/broken.xml':
        return send('application/rss+xml', fixture('broken.xml'));
      case '/page.html':
        return send('text/html', fixture('page.html'));
      case '/private.xml': {
        const expected = `Basic ${Buffer.from(`${FEED_USER}:${FEED_PASSWORD}`).toString('base64')}`;
        if (req.headers.authorization !== expected) {
          return res.writeHead(401, { 'www-authenticate': 'Basic realm="feeds"' }).end();
        }
        return send('application/rss+xml', fixture('rss2.xml'));
      }
      default:
        return res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
