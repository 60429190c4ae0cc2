/**
 * When Redis or PostgreSQL is down, requests that need it answer 503 with a clear message instead
 * of hanging or failing with a 500, the process stays up, and it recovers by itself. The servers
 * stopped here are the test's own: a private redis-server, and a TCP proxy in front of the shared
 * PostgreSQL (the shared servers themselves are never touched).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServicesBackend, PG_ADMIN_URL, type ServicesBackend } from '../helpers/backends.js';
import { freePort, PrivateRedis } from '../helpers/redis-server.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { expectErrorBody, GOOD_PASSWORD, registerUser, sleep, startTrove, type Client, type RunningTrove } from '../helpers/trove.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Polls until the check passes; for recovery, which takes a reconnect. */
async function eventually(check: () => Promise<boolean>, attempts = 50): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await sleep(200);
  }
  throw new Error('did not recover');
}

/** An outage line in the log is one line at error level, without a stack. */
function outageLines(server: RunningTrove, what: string) {
  return server.logs.filter((l) => l.level >= 50 && l.msg.startsWith(what));
}

describe('Redis down', () => {
  let redis: PrivateRedis;
  let backend: ServicesBackend;
  let server: RunningTrove;
  let client: Client;
  let email: string;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    backend = await createServicesBackend({ redisUrl: redis.url });
    server = await startTrove({ ...backend.env, LOGIN_RATE_LIMIT_MAX: '1000' });
    client = server.client();
    ({ email } = await registerUser(client));
  });
  afterAll(async () => {
    await server?.close();
    await backend?.dispose();
    await redis?.stop();
  });

  it('answers 503 "Session store unavailable" to requests that need sessions, logs it once, and stays up', async () => {
    await redis.kill();
    const before = server.logs.length;
    for (let i = 0; i < 3; i++) expectErrorBody(await client.get('/v1/user/profile'), 503, 'Session store unavailable');
    // Login needs the shared rate limit first, which lives in Redis too.
    expectErrorBody(await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD }), 503, 'Session store unavailable');
    expectErrorBody(await client.post('/v1/auth/logout'), 503, 'Session store unavailable');
    const lines = outageLines(server, 'Session store unavailable');
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines[0])).not.toMatch(/\n\s+at /);
    expect(server.logs.slice(before).some((l) => l.level >= 50 && l.msg === 'request failed')).toBe(false);
    // Routes that need neither server still answer.
    expect((await client.get('/v1/openapi.json')).status).toBe(200);
  });

  it('answers 503 too when Redis hangs instead of refusing, rather than waiting for it', async () => {
    await redis.resume();
    await eventually(async () => (await server.client().post('/v1/auth/register', { email: `x${Date.now()}@example.com`, name: 'X', password: GOOD_PASSWORD })).status === 201);
    redis.pause();
    try {
      const res = await client.get('/v1/user/profile', {});
      expectErrorBody(res, 503, 'Session store unavailable');
    } finally {
      redis.unpause();
    }
  });

  it('recovers by itself when Redis is back', async () => {
    await redis.kill();
    expectErrorBody(await client.get('/v1/user/profile'), 503, 'Session store unavailable');
    await redis.resume();
    // This Redis keeps nothing on disk, so the old sessions are gone: a new login works, and so does its session.
    const fresh = server.client();
    await eventually(async () => (await fresh.post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status === 200);
    expect((await fresh.get('/v1/user/profile')).status).toBe(200);
  });
});

describe('PostgreSQL down', () => {
  let proxy: TcpProxy;
  let backend: ServicesBackend;
  let server: RunningTrove;
  let client: Client;
  let email: string;

  beforeAll(async () => {
    const shared = new URL(PG_ADMIN_URL);
    proxy = await TcpProxy.start({ host: shared.hostname, port: Number(shared.port || 5432) });
    const viaProxy = new URL(PG_ADMIN_URL);
    viaProxy.port = String(proxy.port);
    backend = await createServicesBackend({ pgUrl: viaProxy.toString() });
    server = await startTrove({ ...backend.env, LOGIN_RATE_LIMIT_MAX: '1000' });
    client = server.client();
    ({ email } = await registerUser(client));
  });
  afterAll(async () => {
    await server?.close();
    // The backend is reached through the proxy: let it through again to drop the database.
    await proxy?.open();
    await backend?.dispose();
    await proxy?.close();
  });

  it('answers 503 "Database unavailable" to requests that need the database, logs it once, and stays up', async () => {
    await proxy.cut();
    for (let i = 0; i < 3; i++) expectErrorBody(await client.get('/v1/user/profile'), 503, 'Database unavailable');
    expectErrorBody(await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD }), 503, 'Database unavailable');
    const lines = outageLines(server, 'Database unavailable');
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines[0])).not.toMatch(/\n\s+at /);
    expect((await client.get('/v1/openapi.json')).status).toBe(200);
  });

  it('answers 503 when the database hangs instead of refusing, rather than waiting for it', async () => {
    await proxy.stall();
    try {
      expectErrorBody(await client.get('/v1/user/profile'), 503, 'Database unavailable');
    } finally {
      await proxy.cut();
    }
  });

  it('recovers by itself when the database is back, with the data it had', async () => {
    await proxy.open();
    await eventually(async () => (await client.get('/v1/user/profile')).status === 200);
    expect((await server.client().post('/v1/auth/login', { email, password: GOOD_PASSWORD })).status).toBe(200);
  });
});

describe('starting while a server is down', () => {
  /** `node src/main.ts` with only the given environment; resolves with its exit code and stderr. */
  function startProcess(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: repoRoot,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
  }

  it('exits 1 with one line naming SESSION_STORE_URL or DATABASE_URL, no stack', { timeout: 90_000 }, async () => {
    const closed = await freePort();
    const backend = await createServicesBackend();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'trove-outage-'));
    try {
      const noRedis = await startProcess({ ...backend.env, DATA_DIR: dataDir, SESSION_STORE_URL: `redis://127.0.0.1:${closed}` });
      expect(noRedis.code).toBe(1);
      expect(noRedis.stderr).toMatch(/^Trove cannot start: SESSION_STORE_URL: cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+/);
      expect(noRedis.stderr).not.toMatch(/\n\s+at /);

      const noPg = await startProcess({ ...backend.env, DATA_DIR: dataDir, DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/trove` });
      expect(noPg.code).toBe(1);
      expect(noPg.stderr).toMatch(/^Trove cannot start: DATABASE_URL: cannot reach the database at postgres:\/\/postgres@127\.0\.0\.1:\d+\/trove/);
      expect(noPg.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await backend.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
