import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Client, GOOD_PASSWORD, registerUser, sleep, uniqueEmail, type LogLine } from '../helpers/trove.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
// Every test starts `node src/main.ts`, loading the whole app: seconds apiece on a busy 2-core machine.
const SLOW = 90_000;

interface TroveProcess {
  child: ChildProcess;
  logs: LogLine[];
  stderr: () => string;
  exited: Promise<number | null>;
  baseUrl: string;
}

const children = new Set<ChildProcess>();
const dirs: string[] = [];

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'trove-start-'));
  dirs.push(dir);
  return dir;
}

/** A port nobody listens on right now; the server is told it up front, so the test knows where to connect. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** `node src/main.ts` as an operator runs it, with nothing in the environment but what is given. */
function spawnTrove(env: Record<string, string>): TroveProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const logs: LogLine[] = [];
  let stderr = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // Not a log line; the assertions only look at log lines.
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, logs, stderr: () => stderr, exited, baseUrl: `http://127.0.0.1:${env.PORT ?? 3000}` };
}

async function waitForLog(trove: TroveProcess, msg: string): Promise<void> {
  let gone = false;
  void trove.exited.then(() => (gone = true));
  while (!trove.logs.some((l) => l.msg === msg)) {
    if (gone) throw new Error(`Trove exited before logging "${msg}": ${trove.stderr()}`);
    await sleep(25);
  }
}

async function startTroveProcess(env: Record<string, string>): Promise<TroveProcess> {
  const trove = spawnTrove({ PORT: String(await freePort()), ...env });
  await waitForLog(trove, 'Trove is ready');
  return trove;
}

describe('production checks', () => {
  const productionEnv = () => ({
    NODE_ENV: 'production',
    DATA_DIR: tempDir(),
    SESSION_SECRET: randomBytes(32).toString('base64'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    OAUTH_REDIRECT_BASE_URL: 'https://trove.example.com',
  });

  it('refuses to start, naming the variable, when a required setting is missing or unsafe', { timeout: SLOW }, async () => {
    const cases: Array<[string, Record<string, string | undefined>]> = [
      ['SESSION_SECRET', { SESSION_SECRET: undefined }],
      ['OAUTH_REDIRECT_BASE_URL', { OAUTH_REDIRECT_BASE_URL: 'http://trove.example.com' }],
      ['ENCRYPTION_KEY', { ENCRYPTION_KEY: undefined }],
    ];
    await Promise.all(
      cases.map(async ([name, change]) => {
        const env = Object.fromEntries(
          Object.entries({ ...productionEnv(), ...change }).filter((e): e is [string, string] => e[1] !== undefined),
        );
        const trove = spawnTrove(env);
        expect(await trove.exited, name).not.toBe(0);
        expect(trove.stderr()).toContain(name);
        expect(trove.stderr(), 'an expected error, so no stack trace').not.toMatch(/\n\s+at /);
        expect(readdirSync(env.DATA_DIR!), 'nothing written before the check').toEqual([]);
      }),
    );
  });

  it('starts when every required setting is given, and stops on SIGTERM', { timeout: SLOW }, async () => {
    const trove = await startTroveProcess(productionEnv());
    const res = await fetch(`${trove.baseUrl}/v1/user/profile`);
    expect(res.status).toBe(401);
    trove.child.kill('SIGTERM');
    expect(await trove.exited).toBe(0);
  });
});

/**
 * A register request whose body arrives in two parts, the second only when `finish` is called.
 * `received` resolves once the server has parsed the headers and taken the request on: it asks
 * for `100 Continue`, which Node answers just before handing the request to Fastify.
 */
function slowRegister(baseUrl: string, body: object) {
  const json = JSON.stringify(body);
  const half = Math.floor(json.length / 2);
  const req = request(`${baseUrl}/v1/auth/register`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', expect: '100-continue' },
  });
  const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      res.on('error', reject);
    });
  });
  const received = new Promise<void>((resolve) =>
    req.once('continue', () => {
      req.write(json.slice(0, half));
      resolve();
    }),
  );
  req.flushHeaders();
  return { received, response, finish: () => req.end(json.slice(half)) };
}

describe('development defaults and graceful shutdown (one DATA_DIR, in order)', () => {
  const dataDir = tempDir();
  let running: TroveProcess;
  let firstCookie: string;
  const second = { email: uniqueEmail('slow'), password: GOOD_PASSWORD, name: 'Slow Sender' };

  it('starts with only DATA_DIR set, keeping the databases and the generated secrets there', { timeout: SLOW }, async () => {
    running = await startTroveProcess({ DATA_DIR: dataDir });
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['trove.db', 'sessions.db', 'session-secret', 'encryption-key']));

    const client = new Client(running.baseUrl);
    await registerUser(client);
    firstCookie = (await client.sessionCookie())!;
    expect(firstCookie).toBeTruthy();
  });

  it('on SIGTERM it finishes a request in flight, then exits 0', { timeout: SLOW }, async () => {
    const register = slowRegister(running.baseUrl, second);
    await register.received;
    await sleep(100); // lets the first half of the body reach the server
    running.child.kill('SIGTERM');
    await waitForLog(running, 'shutting down: finishing requests in flight');
    register.finish();

    const res = await register.response;
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ email: second.email, name: second.name });
    expect(await running.exited).toBe(0);
    expect(running.logs.map((l) => l.msg)).toContain('stopped cleanly');
  });

  it('after a restart on the same DATA_DIR, earlier sessions and accounts still work; SIGINT exits 0', { timeout: SLOW }, async () => {
    running = await startTroveProcess({ DATA_DIR: dataDir });

    const returning = new Client(running.baseUrl);
    await returning.setSessionCookie(firstCookie);
    expect((await returning.get('/v1/user/profile')).status).toBe(200);
    const login = await new Client(running.baseUrl).post('/v1/auth/login', { email: second.email, password: second.password });
    expect(login.status).toBe(200);

    running.child.kill('SIGINT');
    expect(await running.exited).toBe(0);
  });
});
