import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * Where the API suite runs: `embedded` (SQLite files in a temp DATA_DIR, the default) or
 * `services` (PostgreSQL + Redis), chosen per vitest project with TROVE_TEST_BACKEND.
 */
export const testBackend: 'embedded' | 'services' = process.env.TROVE_TEST_BACKEND === 'services' ? 'services' : 'embedded';

/** The machine's shared servers; each test run gets its own database and key prefix on them. */
export const PG_ADMIN_URL = process.env.TROVE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TROVE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface ServicesBackend {
  /** DATABASE_URL, SESSION_STORE_URL, SESSION_STORE_PREFIX and the shared secrets for a Trove (or several) on this backend. */
  env: Record<string, string>;
  databaseName: string;
  prefix: string;
  /** Drops the database and deletes every key under the prefix. */
  dispose(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function adminQuery(text: string, adminUrl = PG_ADMIN_URL): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/** Every key under a prefix, deleted in batches (SCAN, never KEYS). */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A fresh PostgreSQL database and Redis prefix of its own. */
export async function createServicesBackend(options: { redisUrl?: string; pgUrl?: string } = {}): Promise<ServicesBackend> {
  const id = randomBytes(6).toString('hex');
  const databaseName = `trove_t_${id}`;
  const prefix = `trove-t-${id}:`;
  const pgUrl = options.pgUrl ?? PG_ADMIN_URL;
  const redisUrl = options.redisUrl ?? REDIS_URL;
  await adminQuery(`CREATE DATABASE ${databaseName}`, pgUrl);
  return {
    databaseName,
    prefix,
    env: {
      // Every process of one deployment shares these, or a cookie made by one is unknown to another.
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DATABASE_URL: withDatabase(pgUrl, databaseName),
      SESSION_STORE_URL: redisUrl,
      SESSION_STORE_PREFIX: prefix,
    },
    async dispose() {
      await adminQuery(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`, pgUrl);
      await deleteKeys(redisUrl, prefix).catch(() => {});
    },
  };
}

/** Every key under a prefix with its value (hash fields, set members or string), as a thief copying Redis would get them. */
export async function redisDump(prefix: string): Promise<Record<string, Record<string, unknown>[]>> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const rows: Record<string, unknown>[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        const value =
          type === 'hash' ? await redis.hgetall(key) : type === 'set' ? await redis.smembers(key) : type === 'string' ? await redis.get(key) : null;
        rows.push({ key, key_without_prefix: key.slice(prefix.length).replace(/^[a-z]+:/, ''), type, value });
      }
    } while (cursor !== '0');
    // Flattened so each row's values are plain strings, the way the SQLite dump's are.
    return { keys: rows.map((r) => flatten(r)) };
  } finally {
    redis.disconnect();
  }
}

function flatten(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const walk = (name: string, v: unknown) => {
    if (v !== null && typeof v === 'object') for (const [k, inner] of Object.entries(v)) walk(`${name}.${k}`, inner);
    else out[name] = v;
  };
  for (const [k, v] of Object.entries(row)) walk(k, v);
  return out;
}

/** Every row of every table of a PostgreSQL database. */
export async function postgresDump(databaseUrl: string): Promise<Record<string, Record<string, unknown>[]>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    const out: Record<string, Record<string, unknown>[]> = {};
    for (const { tablename } of tables.rows) out[tablename] = (await client.query(`SELECT * FROM "${tablename}"`)).rows;
    return out;
  } finally {
    await client.end();
  }
}
