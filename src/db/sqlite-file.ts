import { mkdirSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

export type SqliteHandle = BetterSqlite3.Database;

/** `sqlite:<path>` (relative paths from the working directory) or `sqlite::memory:`. */
export function sqlitePathFromUrl(url: string): string {
  const rest = url.replace(/^sqlite:(\/\/)?/, '');
  return rest === ':memory:' ? rest : path.resolve(rest);
}

/**
 * Opens a SQLite file in WAL mode, making its folder first.
 * `synchronous` FULL makes every commit durable across power loss; NORMAL only across crashes.
 */
export function openSqlite(url: string, synchronous: 'FULL' | 'NORMAL'): SqliteHandle {
  const file = sqlitePathFromUrl(url);
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}
