import type { SqliteHandle } from '../../db/sqlite-file.js';
import { openSqlite } from '../../db/sqlite-file.js';
import type { PendingOAuthState, SessionMetadata, SessionStore, StoredSession } from '../store.js';

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

/** Each entry brings the file from the version before it to its own; user_version records where it is. */
const SCHEMA_STEPS = [
  `CREATE TABLE IF NOT EXISTS sessions (
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
  CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (user_id);`,
  // Pending OAuth states live with their session: ending the session discards them.
  `CREATE TABLE IF NOT EXISTS oauth_states (
    state_key TEXT PRIMARY KEY,
    session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    integration TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    binding_key TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS oauth_states_by_session ON oauth_states (session_key);`,
];

function migrate(db: SqliteHandle): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  db.transaction(() => {
    SCHEMA_STEPS.slice(version).forEach((step, i) => {
      db.exec(step);
      db.pragma(`user_version = ${version + i + 1}`);
    });
  })();
}

/** How long an access time may wait in memory before it is written. */
const ACCESS_FLUSH_MS = 1000;
/** Bounds the guard's memory of sessions (see `live`); beyond it the oldest entry goes first. */
const LIVE_SESSIONS_KEPT = 10_000;

interface StateRow {
  state_key: string;
  session_key: string;
  user_id: string;
  integration: string;
  code_verifier: string;
  binding_key: string;
  expires_at: number;
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
  /**
   * Accesses not yet written, by store key. Writing one row per request was the largest cost of
   * the guard; instead the accesses of a second are written in one transaction. The guard reads
   * through this map, so idle expiry stays exact in this process; a crash loses at most a second
   * of access times, which can only make a session expire sooner, never later.
   */
  private readonly pendingAccess = new Map<string, number>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly flushAccesses;
  /**
   * Sessions as the guard last read them, by store key. Building a row into a JS object was
   * a third of the guard's cost. An entry is only trusted while `PRAGMA data_version` (about a
   * microsecond) shows no commit by any other connection, this store's other connection and
   * other processes (the CLI) included; any such commit empties the map, so a session ended
   * anywhere is refused on the very next request. This store's own writes update it directly.
   */
  private readonly live = new Map<string, StoredSession>();
  private seenVersion = -1;

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
      renew: this.fast.prepare(`UPDATE sessions SET last_accessed_at = max(last_accessed_at, @now), expires_at = @renewTo
        WHERE key = @key AND expires_at >= @now RETURNING *`),
      recordAccess: this.fast.prepare('UPDATE sessions SET last_accessed_at = max(last_accessed_at, ?) WHERE key = ?'),
      deleteByKey: d.prepare('DELETE FROM sessions WHERE key = ?'),
      deleteByUser: d.prepare('DELETE FROM sessions WHERE user_id = ? AND key IS NOT ?'),
      purge: d.prepare('DELETE FROM sessions WHERE expires_at < ? OR last_accessed_at < ?'),
      purgeStates: d.prepare('DELETE FROM oauth_states WHERE expires_at < ?'),
      insertState: d.prepare(`INSERT INTO oauth_states (state_key, session_key, user_id, integration, code_verifier,
        binding_key, expires_at) VALUES (@state_key, @session_key, @user_id, @integration, @code_verifier,
        @binding_key, @expires_at)`),
      takeState: d.prepare('DELETE FROM oauth_states WHERE state_key = ? RETURNING *'),
      dataVersion: this.fast.prepare('PRAGMA data_version').pluck(),
    };
    this.flushAccesses = this.fast.transaction(() => {
      for (const [key, at] of this.pendingAccess) this.statements.recordAccess.run(at, key);
      this.pendingAccess.clear();
    });
  }

  /** Writes the pending access times now (before reads that show or judge them, and at close). */
  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pendingAccess.size > 0) this.flushAccesses();
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

  /** The session behind a key: from `live` while nothing else has committed, else read and kept. */
  private current(key: string): StoredSession | undefined {
    const version = this.statements.dataVersion.get() as number;
    if (version !== this.seenVersion) {
      this.live.clear();
      this.seenVersion = version;
    } else {
      const kept = this.live.get(key);
      if (kept) return kept;
    }
    const row = this.statements.byKey.get(key) as Row | undefined;
    if (!row) return undefined;
    const session = toSession(row);
    this.keep(session);
    return session;
  }

  private keep(session: StoredSession): void {
    if (this.live.size >= LIVE_SESSIONS_KEPT) this.live.delete(this.live.keys().next().value as string);
    this.live.set(session.key, session);
  }

  /**
   * Synchronous from the read to the decision, so nothing in this process interleaves; a row that
   * another process deleted meanwhile is never written back (UPDATE of a missing row does nothing).
   */
  async touchIfLive(input: {
    key: string;
    now: number;
    idleSince: number;
    renewIfExpiresBefore: number;
    renewTo: number;
  }): Promise<StoredSession | undefined> {
    const { key, now } = input;
    const session = this.current(key);
    if (!session) return undefined;
    const lastAccessedAt = Math.max(session.lastAccessedAt, this.pendingAccess.get(key) ?? 0);
    if (session.expiresAt < now || lastAccessedAt < input.idleSince) return undefined;
    if (session.expiresAt < input.renewIfExpiresBefore) {
      // Renewal is rare and re-sends the cookie, so it is written at once.
      this.pendingAccess.delete(key);
      this.live.delete(key);
      const renewed = this.statements.renew.get({ key, now, renewTo: input.renewTo }) as Row | undefined;
      if (!renewed) return undefined;
      const fresh = toSession(renewed);
      this.keep(fresh);
      return { ...fresh };
    }
    // The kept entry stays private to the store; callers get their own copy.
    session.lastAccessedAt = Math.max(now, lastAccessedAt);
    this.pendingAccess.set(key, session.lastAccessedAt);
    this.flushTimer ??= setTimeout(() => this.flush(), ACCESS_FLUSH_MS).unref();
    return { ...session };
  }

  async listByUser(input: { userId: string }): Promise<StoredSession[]> {
    this.flush();
    return (this.statements.byUser.all(input.userId) as Row[]).map(toSession);
  }

  async deleteByKey(input: { key: string }): Promise<boolean> {
    this.live.delete(input.key);
    return this.statements.deleteByKey.run(input.key).changes > 0;
  }

  async deleteByUser(input: { userId: string; exceptKey?: string }): Promise<number> {
    this.live.clear();
    return this.statements.deleteByUser.run(input.userId, input.exceptKey ?? null).changes;
  }

  async purgeExpired(input: { now: number; idleSince: number }): Promise<number> {
    this.flush();
    this.live.clear();
    this.statements.purgeStates.run(input.now);
    return this.statements.purge.run(input.now, input.idleSince).changes;
  }

  async saveOAuthState(state: PendingOAuthState): Promise<void> {
    this.statements.insertState.run({
      state_key: state.stateKey,
      session_key: state.sessionKey,
      user_id: state.userId,
      integration: state.integration,
      code_verifier: state.codeVerifier,
      binding_key: state.bindingKey,
      expires_at: state.expiresAt,
    });
  }

  async takeOAuthState(input: { stateKey: string }): Promise<PendingOAuthState | undefined> {
    const row = this.statements.takeState.get(input.stateKey) as StateRow | undefined;
    return (
      row && {
        stateKey: row.state_key,
        sessionKey: row.session_key,
        userId: row.user_id,
        integration: row.integration,
        codeVerifier: row.code_verifier,
        bindingKey: row.binding_key,
        expiresAt: row.expires_at,
      }
    );
  }

  async close(): Promise<void> {
    this.flush();
    this.fast.close();
    this.durable.close();
  }
}
