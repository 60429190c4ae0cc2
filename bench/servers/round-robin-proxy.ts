import { Agent, createServer, request } from 'node:http';
import { portFromEnv } from './envelope.js';

/**
 * Scenario (e)'s load balancer: a plain HTTP reverse proxy handing requests to the upstreams in
 * turn (BENCH_UPSTREAMS, comma-separated origins), over kept-alive connections. Nothing more,
 * so what it costs is the forwarding itself.
 */
const upstreams = (process.env.BENCH_UPSTREAMS ?? '')
  .split(',')
  .filter(Boolean)
  .map((origin) => new URL(origin));
if (upstreams.length === 0) throw new Error('BENCH_UPSTREAMS must list at least one origin');

const agent = new Agent({ keepAlive: true, maxSockets: 128 });
let next = 0;

const server = createServer((req, res) => {
  const target = upstreams[next]!;
  next = (next + 1) % upstreams.length;
  const upstream = request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('upstream failed');
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(portFromEnv(), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
