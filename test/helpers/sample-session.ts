import { randomUUID } from 'node:crypto';
import type { StoredSession } from '../../src/sessions/store.js';

/** A live session of an hour, as a store test hands it to `create`. */
export function sampleSession(overrides: Partial<StoredSession> = {}): StoredSession {
  const now = Date.now();
  return {
    key: randomUUID(),
    id: randomUUID(),
    userId: randomUUID(),
    createdAt: now,
    lastAccessedAt: now,
    expiresAt: now + 3_600_000,
    ipAddress: '127.0.0.1',
    userAgent: 'test',
    metadata: { loginMethod: 'password' },
    csrfToken: 'csrf',
    ...overrides,
  };
}
