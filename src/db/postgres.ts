import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, type CompiledQuery, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { DatabaseUnavailableError } from '../domain-errors.js';
import { isPgConnectionFailure } from './connection-failure.js';
import type { MainDatabase, PreparedQuery } from './database.js';
import { preparedQuery } from './prepared.js';
import type { Database } from './tables.js';

/**
 * Bounds on waiting for PostgreSQL, so a request fails within a few seconds when it is down
 * (503) instead of hanging: connecting, and each query on the client side. The server-side
 * statement_timeout matches, so the server does not keep working on an answer nobody waits for.
 */
const CONNECT_TIMEOUT_MS = 2_000;
const QUERY_TIMEOUT_MS = 5_000;
const POOL_SIZE = 10;

function translate(err: unknown): unknown {
  return isPgConnectionFailure(err) ? new DatabaseUnavailableError({ cause: err }) : err;
}

/**
 * A pg Pool as Kysely's dialect wants it, with connection failures turned into the domain
 * error the HTTP layer answers 503, and broken connections dropped instead of reused.
 */
function guardedPool(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw translate(err);
      }
      let broken: Error | undefined;
      return {
        query: (async (sqlText: string, parameters: readonly unknown[]) => {
          try {
            return await client.query(sqlText, parameters as unknown[]);
          } catch (err) {
            if (isPgConnectionFailure(err)) broken = err as Error;
            throw translate(err);
          }
        }) as unknown as PostgresPoolClient['query'],
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}

export function openPostgres(url: string): MainDatabase {
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    statement_timeout: QUERY_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
  });
  // An idle pooled connection that dies (server restart) is reported here; without a listener
  // the process would crash. The pool drops it and connects afresh on the next request.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool) }) });
  return {
    db,
    dialect: 'postgres',
    prepare<Row>(query: { compile(): CompiledQuery<Row> }): PreparedQuery<Row> {
      const compiled = query.compile();
      // A named statement is parsed and planned once per connection, then only bound and run.
      const name = `trove_${createHash('sha256').update(compiled.sql).digest('hex').slice(0, 16)}`;
      return preparedQuery(compiled, async (parameters) => {
        try {
          const result = await pool.query({ name, text: compiled.sql, values: parameters as unknown[] });
          return result.rows as Row[];
        } catch (err) {
          throw translate(err);
        }
      });
    },
    close: () => db.destroy(),
  };
}
