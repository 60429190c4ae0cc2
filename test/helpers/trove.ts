import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import BetterSqlite3 from 'better-sqlite3';
import { Cookie, CookieJar } from 'tough-cookie';
import { Agent, fetch as undiciFetch } from 'undici';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { sqlitePathFromUrl } from '../../src/db/sqlite-file.js';
import { createTrove, type Trove } from '../../src/server.js';
import { createServicesBackend, postgresDump, redisDump, testBackend, type ServicesBackend } from './backends.js';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface RunningTrove {
  baseUrl: string;
  config: Config;
  trove: Trove;
  dataDir: string;
  /** DATABASE_URL, SESSION_STORE_URL and SESSION_STORE_PREFIX when on PostgreSQL + Redis (for the CLI, a second process); empty when embedded. */
  backendEnv: Record<string, string>;
  /** Every line the server logged, parsed. */
  logs: LogLine[];
  client(options?: { localAddress?: string; headers?: Record<string, string> }): Client;
  close(): Promise<void>;
}

/**
 * Starts the real server on 127.0.0.1 on a free port, with a fresh DATA_DIR and
 * the given environment on top of the defaults. On the services backend (TROVE_TEST_BACKEND),
 * it also gets a fresh PostgreSQL database and Redis prefix, removed again by close(), unless
 * the environment already names a DATABASE_URL (several processes sharing one backend).
 */
export async function startTrove(env: Record<string, string> = {}, options: { port?: number } = {}): Promise<RunningTrove> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'trove-test-'));
  let owned: ServicesBackend | undefined;
  if (testBackend === 'services' && env.DATABASE_URL === undefined) owned = await createServicesBackend();
  const backendEnv = owned?.env ?? pick(env, ['DATABASE_URL', 'SESSION_STORE_URL', 'SESSION_STORE_PREFIX', 'SESSION_SECRET', 'ENCRYPTION_KEY']);
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', ...backendEnv, ...env });
  const logs: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  let trove: Trove;
  try {
    trove = await createTrove(config, { level: config.logLevel, stream });
  } catch (err) {
    await owned?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  await trove.app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = trove.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  return {
    baseUrl,
    config,
    trove,
    dataDir,
    backendEnv,
    logs,
    client: (options) => new Client(baseUrl, options),
    async close() {
      await trove.close();
      await owned?.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function pick(env: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => env[n] !== undefined).map((n) => [n, env[n]!]));
}

/** A store or database as raw bytes (what a copied file or memory dump would show) and as rows. */
export interface Dump {
  bytes: Buffer;
  tables: Record<string, Record<string, unknown>[]>;
}

/** A SQLite database file and its write-ahead log, as raw bytes. */
function rawBytes(file: string): Buffer {
  return Buffer.concat([file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)));
}

/** Every row of every table of a SQLite file, read on a separate read-only connection. */
function sqliteTables(file: string): Record<string, Record<string, unknown>[]> {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    return Object.fromEntries(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[]]));
  } finally {
    db.close();
  }
}

/** Everything the session store holds: the SQLite file, or every Redis key under the server's prefix. */
export async function sessionStoreDump(server: RunningTrove): Promise<Dump> {
  if (server.config.sessionStoreUrl.startsWith('sqlite:')) {
    const file = sqlitePathFromUrl(server.config.sessionStoreUrl);
    return { bytes: rawBytes(file), tables: sqliteTables(file) };
  }
  const tables = await redisDump(server.config.sessionStorePrefix);
  return { bytes: Buffer.from(JSON.stringify(tables), 'latin1'), tables };
}

/** Everything the main database holds: the SQLite file, or every row of the PostgreSQL database. */
export async function mainDatabaseDump(server: RunningTrove): Promise<Dump> {
  if (server.config.databaseUrl.startsWith('sqlite:')) {
    const file = sqlitePathFromUrl(server.config.databaseUrl);
    return { bytes: rawBytes(file), tables: sqliteTables(file) };
  }
  const tables = await postgresDump(server.config.databaseUrl);
  return { bytes: Buffer.from(JSON.stringify(tables), 'latin1'), tables };
}

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  /** Raw Set-Cookie header lines. */
  setCookies: string[];
}

/** An HTTP client with a cookie jar, the way a browser keeps cookies. */
export class Client {
  readonly jar = new CookieJar();

  constructor(
    readonly baseUrl: string,
    private readonly options: { localAddress?: string; headers?: Record<string, string> } = {},
  ) {}

  async request<T = any>(method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response<T>> {
    const url = this.baseUrl + urlPath;
    const cookie = await this.jar.getCookieString(url);
    const init: RequestInit = {
      method,
      redirect: 'manual',
      headers: {
        ...this.options.headers,
        ...(cookie ? { cookie } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    };
    // A client on another loopback address (127.0.0.2) looks to the server like another network.
    const res = this.options.localAddress
      ? ((await undiciFetch(url, { ...(init as object), dispatcher: agentFor(this.options.localAddress) })) as unknown as globalThis.Response)
      : await fetch(url, init as RequestInit);
    const setCookies = res.headers.getSetCookie();
    for (const line of setCookies) await this.jar.setCookie(line, url);
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, setCookies };
  }

  get<T = any>(p: string, headers?: Record<string, string>) { return this.request<T>('GET', p, undefined, headers); }
  post<T = any>(p: string, body?: unknown, headers?: Record<string, string>) { return this.request<T>('POST', p, body, headers); }
  delete<T = any>(p: string, headers?: Record<string, string>) { return this.request<T>('DELETE', p, undefined, headers); }

  /** The session cookie's value in the jar, if any. */
  async sessionCookie(): Promise<string | undefined> {
    const cookies = await this.jar.getCookies(this.baseUrl);
    return cookies.find((c: Cookie) => c.key === 'svc_session')?.value;
  }

  async setSessionCookie(value: string): Promise<void> {
    await this.jar.setCookie(`svc_session=${value}; Path=/`, this.baseUrl);
  }

  async forgetCookies(): Promise<void> {
    await this.jar.removeAllCookies();
  }
}

const agents = new Map<string, Agent>();
function agentFor(localAddress: string): Agent {
  let agent = agents.get(localAddress);
  // The Client option, not `connect.localAddress`: undici overrides the latter with the former (null).
  if (!agent) agents.set(localAddress, (agent = new Agent({ localAddress })));
  return agent;
}

/**
 * A port free right now, for a server whose own URL must be in its configuration before it
 * listens (OAUTH_REDIRECT_BASE_URL); pass it to startTrove's `port`.
 */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

let counter = 0;
/** A unique email per call, so tests never collide. */
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}${counter}.${process.pid}@example.com`;
}

export const GOOD_PASSWORD = 'plum-Harbor-47-lantern';

export async function registerUser(client: Client, overrides: { email?: string; name?: string; password?: string } = {}) {
  const email = overrides.email ?? uniqueEmail();
  const res = await client.post('/v1/auth/register', {
    email,
    name: overrides.name ?? 'Test User',
    password: overrides.password ?? GOOD_PASSWORD,
  });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { email, password: overrides.password ?? GOOD_PASSWORD, user: res.body.user as { id: string; email: string; name: string } };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Checks the error answer of decisions §2: `{ statusCode, error, message, requestId }`, JSON,
 * `error` the reason phrase, `requestId` equal to the X-Request-Id header. `message` is exact
 * when a string, matched when a RegExp.
 */
export function expectErrorBody(res: Response, status: number, message?: string | RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toMatch(UUID_RE);
  expect(res.body).toEqual({
    statusCode: status,
    error: STATUS_CODES[status],
    message: expect.any(String),
    requestId,
  });
  if (typeof message === 'string') expect(res.body.message).toBe(message);
  else if (message) expect(res.body.message).toMatch(message);
}

/** True when a Set-Cookie line deletes the session cookie (empty value, expiry in the past). */
export function clearsSessionCookie(res: Response): boolean {
  return res.setCookies.some((line) => {
    const cookie = Cookie.parse(line);
    if (!cookie || cookie.key !== 'svc_session') return false;
    const expires = cookie.expires instanceof Date ? cookie.expires.getTime() : Infinity;
    return cookie.value === '' && (cookie.maxAge === 0 || expires <= Date.now());
  });
}
