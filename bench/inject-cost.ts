/**
 * Per-request cost of the profile route without sockets: Fastify's inject() in a tight loop,
 * next to a bare route answering the same JSON. Useful to see what the app itself adds,
 * apart from HTTP parsing and the load generator sharing the cores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { loadConfig } from '../src/config.js';
import { createTrove } from '../src/server.js';

async function time(label: string, n: number, run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 2000; i++) await run();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await run();
  const us = Number(process.hrtime.bigint() - start) / n / 1000;
  console.log(`${label.padEnd(28)} ${us.toFixed(1)} µs/request`);
  return us;
}

const n = Number(process.env.BENCH_INJECT_N ?? 20000);
const dataDir = mkdtempSync(path.join(tmpdir(), 'trove-inject-'));
try {
  const trove = await createTrove(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }), { level: 'warn' });
  const reg = await trove.app.inject({
    method: 'POST',
    url: '/v1/auth/register',
    payload: { email: 'bench@example.com', password: 'plum-Harbor-47-lantern', name: 'Bench' },
  });
  const cookie = `svc_session=${reg.cookies.find((c) => c.name === 'svc_session')?.value}`;
  const bare = Fastify();
  const body = { requestId: 'x', timestamp: new Date().toISOString(), duration: 0, operation: 'user.readOne', result: reg.json().user };
  bare.get('/profile', async () => body);
  await bare.ready();

  const a = await time('bare Fastify', n, () => bare.inject({ method: 'GET', url: '/profile' }));
  const b = await time('Trove GET /v1/user/profile', n, () => trove.app.inject({ method: 'GET', url: '/v1/user/profile', headers: { cookie } }));
  await time('Trove 404', n, () => trove.app.inject({ method: 'GET', url: '/nope' }));
  console.log(`Trove adds ${(b - a).toFixed(1)} µs per profile request`);
  await bare.close();
  await trove.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
