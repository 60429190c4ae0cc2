import type { Redis } from 'ioredis';
import type { SessionStore } from '../store.js';
import { SqliteSessionStore } from './sqlite.js';

export interface OpenedStore {
  store: SessionStore;
  /** Set when the store is Redis: the login rate limit counts in the same Redis, under the same prefix. */
  rateLimit?: { redis: Redis; nameSpace: string };
}

/** Picks the session store from SESSION_STORE_URL's scheme; ioredis is loaded only for Redis, sparing its memory otherwise. */
export async function openSessionStore(options: {
  url: string;
  prefix: string;
  idleTimeoutMs: number;
  expiredGraceMs: number;
}): Promise<OpenedStore> {
  if (options.url.startsWith('sqlite:')) return { store: new SqliteSessionStore(options.url) };
  const { RedisSessionStore } = await import('./redis.js');
  const store = await RedisSessionStore.open(options);
  return { store, rateLimit: { redis: store.redis, nameSpace: `${options.prefix}rl:` } };
}
