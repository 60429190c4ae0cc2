import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

/** Where the PostgreSQL + Redis scenarios run; each gets a database and a key prefix of its own. */
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface BenchBackend {
  /** DATABASE_URL, SESSION_STORE_URL, SESSION_STORE_PREFIX for the Trove process(es) of one scenario. */
  env: Record<string, string>;
  dispose(): Promise<void>;
}

async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const live = new Set<BenchBackend>();

export async function createBenchBackend(): Promise<BenchBackend> {
  const id = randomBytes(6).toString('hex');
  const database = `trove_bench_${id}`;
  const prefix = `trove-bench-${id}:`;
  await admin(`CREATE DATABASE ${database}`);
  const url = new URL(PG_URL);
  url.pathname = `/${database}`;
  const backend: BenchBackend = {
    env: { DATABASE_URL: url.toString(), SESSION_STORE_URL: REDIS_URL, SESSION_STORE_PREFIX: prefix },
    async dispose() {
      live.delete(backend);
      await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      try {
        let cursor = '0';
        do {
          const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = nextCursor;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    },
  };
  live.add(backend);
  return backend;
}

/** Drops whatever the bench created and has not dropped yet (after a failure or a signal). */
export async function disposeAllBackends(): Promise<void> {
  await Promise.allSettled([...live].map((b) => b.dispose()));
}
