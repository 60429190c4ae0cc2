import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteSessionStore } from '../../src/sessions/stores/sqlite.js';
import { oauthStateContract } from '../helpers/oauth-state-contract.js';

let dir = '';
oauthStateContract(
  'SQLite session store',
  async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'trove-store-'));
    return new SqliteSessionStore(`sqlite:${path.join(dir, 'sessions.db')}`);
  },
  async () => rmSync(dir, { recursive: true, force: true }),
);

describe('SQLite session store file', () => {
  it('keeps the sessions of a file made before OAuth states existed, and adds the states table', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'trove-store-'));
    const file = path.join(folder, 'sessions.db');
    try {
      const old = new BetterSqlite3(file);
      old.exec(`CREATE TABLE sessions (key TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL,
        created_at INTEGER NOT NULL, last_accessed_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        ip_address TEXT NOT NULL, user_agent TEXT NOT NULL, metadata TEXT NOT NULL, csrf_token TEXT NOT NULL) WITHOUT ROWID;
        CREATE INDEX sessions_by_user ON sessions (user_id);
        INSERT INTO sessions VALUES ('k', 'i', 'u', 1, 1, 9999999999999, 'ip', 'ua', '{"loginMethod":"password"}', 'c');
        PRAGMA user_version = 1;`);
      old.close();

      const store = new SqliteSessionStore(`sqlite:${file}`);
      expect((await store.findByKey({ key: 'k' }))?.userId).toBe('u');
      await store.saveOAuthState({ stateKey: 's', sessionKey: 'k', userId: 'u', integration: 'gmail', codeVerifier: 'v', bindingKey: 'b', expiresAt: 5 });
      await store.purgeExpired({ now: 10, idleSince: 0 });
      expect(await store.takeOAuthState({ stateKey: 's' })).toBeUndefined();
      await store.close();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
