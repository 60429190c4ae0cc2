import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type { SqliteHandle } from './sqlite-file.js';

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running the
 * small indexed queries on the request path, so prepared statements are kept by SQL text.
 * Safe because Kysely runs one query at a time per connection and never leaves an iterator open
 * across queries; SQLite re-prepares a statement itself after a schema change.
 */
export function withStatementCache(db: SqliteHandle, capacity = 256): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sql: string): SqliteStatement {
      let statement = cache.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql) as unknown as SqliteStatement;
        if (cache.size >= capacity) cache.delete(cache.keys().next().value as string);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}
