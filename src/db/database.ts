import { Kysely, Migrator, SqliteDialect, sql, type CompiledQuery, type Transaction } from 'kysely';
import { migrations } from './migrations/index.js';
import { preparedQuery } from './prepared.js';
import { openSqlite } from './sqlite-file.js';
import { withStatementCache } from './statement-cache.js';
import type { Database } from './tables.js';

export type Dialect = 'sqlite' | 'postgres';

/** Runs a query built once, with new parameter values in the order the built query holds them. */
export type PreparedQuery<Row> = (parameters: readonly unknown[]) => Promise<Row[]>;

export interface MainDatabase {
  db: Kysely<Database>;
  dialect: Dialect;
  /**
   * For the request hot path: Kysely builds and compiles the query once; each call only binds
   * values and runs it. Building a query costs far more than running a point lookup on SQLite.
   */
  prepare<Row>(query: { compile(): CompiledQuery<Row> }): PreparedQuery<Row>;
  close(): Promise<void>;
}

/** Opens the main database named by DATABASE_URL. pg is loaded only when it is PostgreSQL, sparing its memory on a Pi. */
export async function openDatabase(url: string): Promise<MainDatabase> {
  if (url.startsWith('sqlite:')) {
    const handle = openSqlite(url, 'FULL');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(handle) }) });
    return {
      db,
      dialect: 'sqlite',
      prepare<Row>(query: { compile(): CompiledQuery<Row> }): PreparedQuery<Row> {
        const compiled = query.compile();
        const statement = handle.prepare(compiled.sql);
        return preparedQuery(compiled, (parameters) => statement.all(...parameters) as Row[]);
      },
      close: () => db.destroy(),
    };
  }
  const { openPostgres } = await import('./postgres.js');
  return openPostgres(url);
}

/**
 * Makes transactions that take the same lock run one after the other, across processes.
 * SQLite needs nothing: one connection writes at a time. PostgreSQL takes a transaction-scoped
 * advisory lock, released at commit or rollback.
 */
export async function lockForTransaction(trx: Transaction<Database>, dialect: Dialect, lockId: number): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${lockId})`.execute(trx);
}

/** Brings the schema to the newest version; safe to run on every start and from several processes. */
export async function migrateToLatest(database: MainDatabase): Promise<string[]> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations(database.dialect) },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when a write failed on a unique index, on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
