import { createServicesBackend, type ServicesBackend } from '../test/helpers/backends.js';

/**
 * Each PostgreSQL + Redis scenario gets a database and a key prefix of its own, made and dropped
 * the way the services tests do it (BENCH_PG_URL and BENCH_REDIS_URL point elsewhere).
 */
export interface BenchBackend {
  /** DATABASE_URL, SESSION_STORE_URL, SESSION_STORE_PREFIX and shared secrets for the Trove process(es) of one scenario. */
  env: Record<string, string>;
  dispose(): Promise<void>;
}

const live = new Set<ServicesBackend>();

export async function createBenchBackend(): Promise<BenchBackend> {
  const backend = await createServicesBackend({ pgUrl: process.env.BENCH_PG_URL, redisUrl: process.env.BENCH_REDIS_URL });
  live.add(backend);
  return {
    env: backend.env,
    async dispose() {
      live.delete(backend);
      await backend.dispose();
    },
  };
}

/** Drops whatever the bench created and has not dropped yet (after a failure or a signal). */
export async function disposeAllBackends(): Promise<void> {
  await Promise.allSettled([...live].map((b) => b.dispose()));
}
