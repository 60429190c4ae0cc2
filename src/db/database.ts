import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { ConfigError } from '../config.js';
import { migrations } from './migrations/index.js';
import { openSqlite } from './sqlite-file.js';
import { withStatementCache } from './statement-cache.js';
import type { Database } from './tables.js';

export type Dialect = 'sqlite' | 'postgres';

export interface MainDatabase {
  db: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

export function openDatabase(url: string): MainDatabase {
  if (url.startsWith('sqlite:')) {
    const handle = openSqlite(url, 'FULL');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(handle) }) });
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  throw new ConfigError('DATABASE_URL: PostgreSQL is not supported yet; use sqlite:<path>');
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
