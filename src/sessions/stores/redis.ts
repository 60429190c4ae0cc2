import { Redis, ReplyError } from 'ioredis';
import { redactUrl } from '../../db/redact-url.js';
import { ConfigError } from '../../config.js';
import { SessionStoreUnavailableError } from '../../domain-errors.js';
import type { PendingOAuthState, SessionMetadata, SessionStore, StoredSession } from '../store.js';
import * as scripts from './redis-scripts.js';

/**
 * How long to wait for Redis before a request fails with 503. With the offline queue off, a
 * command while disconnected fails at once; these bound a server that accepts but stalls.
 */
const CONNECT_TIMEOUT_MS = 2_000;
const COMMAND_TIMEOUT_MS = 2_000;

export interface RedisStoreOptions {
  url: string;
  prefix: string;
  /** SESSION_IDLE_TIMEOUT in ms: a fresh session's key lives no longer than this without a touch. */
  idleTimeoutMs: number;
  /** How long keys outlive a session's expiry, so a late request hears "Session expired" (like SQLite until its purge). */
  expiredGraceMs: number;
}

type ScriptCommands = {
  [K in 'troveCreate' | 'troveTouch' | 'troveFindById' | 'troveList' | 'troveDeleteKey' | 'troveDeleteUser' | 'trovePurgeUser' | 'troveSaveState' | 'troveTakeState']: (
    key: string,
    ...args: (string | number)[]
  ) => Promise<unknown>;
};

/** The connection settings every Redis client of Trove uses (the session store and the login rate limit share one). */
export function createRedisClient(url: string): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    // A command sent just before the connection dropped may or may not have run; it has already failed with 503.
    autoResendUnfulfilledCommands: false,
    // Reconnects forever, at most a second apart, so the store comes back by itself.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
  // Connection errors surface on the commands that fail (answered 503 and logged there); without a
  // listener ioredis would print every reconnect attempt.
  redis.on('error', () => {});
  return redis;
}

function fromHash(key: string, flat: string[]): StoredSession {
  const h: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
  return {
    key,
    id: h.id!,
    userId: h.userId!,
    createdAt: Number(h.createdAt),
    lastAccessedAt: Number(h.lastAccessedAt),
    expiresAt: Number(h.expiresAt),
    ipAddress: h.ipAddress!,
    userAgent: h.userAgent!,
    metadata: JSON.parse(h.metadata!) as SessionMetadata,
    csrfToken: h.csrfToken!,
  };
}

/**
 * Sessions in Redis, shared by every Trove process pointed at it (SESSION_STORE_URL=redis://…).
 * Each operation is one Lua script (redis-scripts.ts), hence one round trip and atomic. Keys are
 * the HMAC store keys, never cookie values.
 */
export class RedisSessionStore implements SessionStore {
  private readonly p: string;
  private readonly commands: ScriptCommands;

  private constructor(
    readonly redis: Redis,
    private readonly options: RedisStoreOptions,
  ) {
    this.p = options.prefix;
    const define = (name: keyof ScriptCommands, lua: string) => redis.defineCommand(name, { numberOfKeys: 1, lua });
    define('troveCreate', scripts.CREATE);
    define('troveTouch', scripts.TOUCH_IF_LIVE);
    define('troveFindById', scripts.FIND_BY_ID);
    define('troveList', scripts.LIST_BY_USER);
    define('troveDeleteKey', scripts.DELETE_BY_KEY);
    define('troveDeleteUser', scripts.DELETE_BY_USER);
    define('trovePurgeUser', scripts.PURGE_USER);
    define('troveSaveState', scripts.SAVE_OAUTH_STATE);
    define('troveTakeState', scripts.TAKE_OAUTH_STATE);
    this.commands = redis as unknown as ScriptCommands;
  }

  /** Connects before the server takes requests; an unreachable Redis stops the start with a message naming the variable. */
  static async open(options: RedisStoreOptions): Promise<RedisSessionStore> {
    const redis = createRedisClient(options.url);
    try {
      await redis.connect();
    } catch (err) {
      redis.disconnect();
      throw new ConfigError(`SESSION_STORE_URL: cannot reach Redis at ${redactUrl(options.url)}: ${(err as Error).message}`);
    }
    return new RedisSessionStore(redis, options);
  }

  /** Runs one command; a connection problem becomes the 503 domain error, a Redis reply error stays a bug. */
  private async run<T>(work: () => Promise<unknown>): Promise<T> {
    try {
      return (await work()) as T;
    } catch (err) {
      if (err instanceof ReplyError && !/^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN)/.test((err as Error).message)) throw err;
      throw new SessionStoreUnavailableError({ cause: err });
    }
  }

  async create(s: StoredSession): Promise<void> {
    const expireAt = Math.min(s.expiresAt, s.lastAccessedAt + this.options.idleTimeoutMs) + this.options.expiredGraceMs;
    await this.run(() =>
      this.commands.troveCreate(`${this.p}s:${s.key}`, this.p, s.key, s.id, s.userId, s.createdAt, s.lastAccessedAt, s.expiresAt,
        s.ipAddress, s.userAgent, JSON.stringify(s.metadata), s.csrfToken, expireAt),
    );
  }

  async findByKey(input: { key: string }): Promise<StoredSession | undefined> {
    const flat = await this.run<string[]>(() => this.redis.call('HGETALL', `${this.p}s:${input.key}`));
    return flat.length > 0 ? fromHash(input.key, flat) : undefined;
  }

  async findById(input: { id: string }): Promise<StoredSession | undefined> {
    const found = await this.run<string[] | null>(() => this.commands.troveFindById(`${this.p}id:${input.id}`, this.p));
    return found ? fromHash(found[0]!, found.slice(1)) : undefined;
  }

  async touchIfLive(input: { key: string; now: number; idleSince: number; renewIfExpiresBefore: number; renewTo: number }): Promise<StoredSession | undefined> {
    const { key, now, idleSince, renewIfExpiresBefore, renewTo } = input;
    const flat = await this.run<string[] | null>(() =>
      this.commands.troveTouch(`${this.p}s:${key}`, this.p, now, idleSince, renewIfExpiresBefore, renewTo, now - idleSince, this.options.expiredGraceMs),
    );
    return flat ? fromHash(key, flat) : undefined;
  }

  async listByUser(input: { userId: string }): Promise<StoredSession[]> {
    const rows = await this.run<string[][]>(() => this.commands.troveList(`${this.p}u:${input.userId}`, this.p));
    return rows
      .map((row) => fromHash(row[0]!, row.slice(1)))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  async deleteByKey(input: { key: string }): Promise<boolean> {
    return (await this.run<number>(() => this.commands.troveDeleteKey(`${this.p}s:${input.key}`, this.p, input.key))) > 0;
  }

  async deleteByUser(input: { userId: string; exceptKey?: string }): Promise<number> {
    return this.run<number>(() => this.commands.troveDeleteUser(`${this.p}u:${input.userId}`, this.p, input.exceptKey ?? ''));
  }

  /** Keys expire by themselves; this ends expired sessions before their grace runs out and prunes the user index. */
  async purgeExpired(input: { now: number; idleSince: number }): Promise<number> {
    let purged = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.run<[string, string[]]>(() => this.redis.scan(cursor, 'MATCH', `${escapeGlob(this.p)}u:*`, 'COUNT', 500));
      cursor = next;
      for (const userKey of keys) {
        purged += await this.run<number>(() => this.commands.trovePurgeUser(userKey, this.p, input.now, input.idleSince));
      }
    } while (cursor !== '0');
    return purged;
  }

  async saveOAuthState(state: PendingOAuthState): Promise<void> {
    await this.run(() =>
      this.commands.troveSaveState(`${this.p}o:${state.stateKey}`, this.p, JSON.stringify(state), state.expiresAt, state.sessionKey, state.stateKey, Date.now()),
    );
  }

  async takeOAuthState(input: { stateKey: string }): Promise<PendingOAuthState | undefined> {
    const json = await this.run<string | null>(() => this.commands.troveTakeState(`${this.p}o:${input.stateKey}`, this.p, input.stateKey));
    return json ? (JSON.parse(json) as PendingOAuthState) : undefined;
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      // Already disconnected (Redis is down): nothing left to close gracefully.
      this.redis.disconnect();
    }
  }
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
