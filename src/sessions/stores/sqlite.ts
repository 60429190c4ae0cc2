import type { SqliteHandle } from '../../db/sqlite-file.js';
import { openSqlite } from '../../db/sqlite-file.js';
import type { SessionMetadata, SessionStore, StoredSession } from '../store.js';

interface Row {
  key: string;
  id: string;
  user_id: string;
  created_at: number;
  last_accessed_at: number;
  expires_at: number;
  ip_address: string;
  user_agent: string;
  metadata: string;
  csrf_token: string;
}

const SCHEMA_VERSION = 1;

function migrate(db: SqliteHandle): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version >= SCHEMA_VERSION) return;
  db.exec(`
    CREATE TABLE IF NOT EXISTS sessions (
      key TEXT PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      user_id TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_accessed_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      ip_address TEXT NOT NULL,
      user_agent TEXT NOT NULL,
      metadata TEXT NOT NULL,
      csrf_token TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (user_id);
    PRAGMA user_version = ${SCHEMA_VERSION};
  `);
}

function toSession(row: Row): StoredSession {
  return {
    key: row.key,
    id: row.id,
    userId: row.user_id,
    createdAt: row.created_at,
    lastAccessedAt: row.last_accessed_at,
    expiresAt: row.expires_at,
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    metadata: JSON.parse(row.metadata) as SessionMetadata,
    csrfToken: row.csrf_token,
  };
}

/**
 * Sessions in their own SQLite file (default `DATA_DIR/sessions.db`).
 *
 * Two connections to the one file: creations and deletions commit with synchronous=FULL, so a
 * logout survives a power cut; the per-request activity update commits with NORMAL, which only
 * fsyncs at checkpoints. A FULL commit flushes the whole WAL, earlier NORMAL commits included.
 * A process owns its session file: several Trove processes share sessions through Redis instead.
 */
export class SqliteSessionStore implements SessionStore {
  private readonly durable: SqliteHandle;
  private readonly fast: SqliteHandle;
  private readonly statements;

  constructor(url: string) {
    this.durable = openSqlite(url, 'FULL');
    migrate(this.durable);
    this.fast = openSqlite(url, 'NORMAL');
    const d = this.durable;
    this.statements = {
      insert: d.prepare(`INSERT INTO sessions (key, id, user_id, created_at, last_accessed_at, expires_at,
        ip_address, user_agent, metadata, csrf_token) VALUES (@key, @id, @user_id, @created_at, @last_accessed_at,
        @expires_at, @ip_address, @user_agent, @metadata, @csrf_token)`),
      byKey: this.fast.prepare('SELECT * FROM sessions WHERE key = ?'),
      byId: this.fast.prepare('SELECT * FROM sessions WHERE id = ?'),
      byUser: this.fast.prepare('SELECT * FROM sessions WHERE user_id = ? ORDER BY created_at DESC, id DESC'),
      touchIfLive: this.fast.prepare(`UPDATE sessions SET last_accessed_at = @now,
        expires_at = CASE WHEN expires_at < @renewIfExpiresBefore THEN @renewTo ELSE expires_at END
        WHERE key = @key AND expires_at >= @now AND last_accessed_at >= @idleSince RETURNING *`),
      deleteByKey: d.prepare('DELETE FROM sessions WHERE key = ?'),
      deleteByUser: d.prepare('DELETE FROM sessions WHERE user_id = ? AND key IS NOT ?'),
      purge: d.prepare('DELETE FROM sessions WHERE expires_at < ? OR last_accessed_at < ?'),
    };
  }

  async create(s: StoredSession): Promise<void> {
    this.statements.insert.run({
      key: s.key,
      id: s.id,
      user_id: s.userId,
      created_at: s.createdAt,
      last_accessed_at: s.lastAccessedAt,
      expires_at: s.expiresAt,
      ip_address: s.ipAddress,
      user_agent: s.userAgent,
      metadata: JSON.stringify(s.metadata),
      csrf_token: s.csrfToken,
    });
  }

  async findByKey(input: { key: string }): Promise<StoredSession | undefined> {
    const row = this.statements.byKey.get(input.key) as Row | undefined;
    return row && toSession(row);
  }

  async findById(input: { id: string }): Promise<StoredSession | undefined> {
    const row = this.statements.byId.get(input.id) as Row | undefined;
    return row && toSession(row);
  }

  async touchIfLive(input: {
    key: string;
    now: number;
    idleSince: number;
    renewIfExpiresBefore: number;
    renewTo: number;
  }): Promise<StoredSession | undefined> {
    const row = this.statements.touchIfLive.get(input) as Row | undefined;
    return row && toSession(row);
  }

  async listByUser(input: { userId: string }): Promise<StoredSession[]> {
    return (this.statements.byUser.all(input.userId) as Row[]).map(toSession);
  }

  async deleteByKey(input: { key: string }): Promise<boolean> {
    return this.statements.deleteByKey.run(input.key).changes > 0;
  }

  async deleteByUser(input: { userId: string; exceptKey?: string }): Promise<number> {
    return this.statements.deleteByUser.run(input.userId, input.exceptKey ?? null).changes;
  }

  async purgeExpired(input: { now: number; idleSince: number }): Promise<number> {
    return this.statements.purge.run(input.now, input.idleSince).changes;
  }

  async close(): Promise<void> {
    this.fast.close();
    this.durable.close();
  }
}
