import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionConfig } from '../../src/config.js';
import {
  InvalidSessionError,
  NoSessionCookieError,
  NotYourSessionError,
  SessionExpiredError,
  SessionNotFoundError,
  SessionUserNotFoundError,
} from '../../src/domain-errors.js';
import { SessionService } from '../../src/sessions/service.js';
import { SqliteSessionStore } from '../../src/sessions/stores/sqlite.js';
import type { User } from '../../src/users/repository.js';

const SECOND = 1000;
const IP = '203.0.113.7';

let dir: string;
let store: SqliteSessionStore;
let fakeNow: number;
let users: Map<string, User>;
let warnings: Array<{ obj: object; msg: string }>;
const log = { warn: (obj: object, msg: string) => warnings.push({ obj, msg }) };

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'trove-sessions-'));
  store = new SqliteSessionStore(`sqlite:${path.join(dir, 'sessions.db')}`);
  fakeNow = Date.UTC(2030, 0, 1);
  users = new Map();
  warnings = [];
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function sessionConfig(overrides: Partial<SessionConfig> = {}): SessionConfig {
  return {
    cookieName: 'svc_session',
    secret: randomBytes(32),
    maxAge: 7 * 86_400,
    idleTimeout: 86_400,
    renewalThreshold: 0,
    secure: false,
    sameSite: 'strict',
    purgeInterval: 3_600,
    invalidateOnIpChange: false,
    ...overrides,
  };
}

function service(overrides: Partial<SessionConfig> = {}): SessionService {
  return new SessionService({ store, findUser: async ({ id }) => users.get(id), config: sessionConfig(overrides), now: () => fakeNow });
}

function addUser(): User {
  const user: User = { id: randomUUID(), email: `${randomUUID()}@example.com`, name: 'U', role: 'user', createdAt: new Date(fakeNow).toISOString() };
  users.set(user.id, user);
  return user;
}

function login(sessions: SessionService, user: User, ipAddress = IP) {
  return sessions.create({ userId: user.id, ipAddress, userAgent: 'test-agent', loginMethod: 'password' });
}

function use(sessions: SessionService, cookieValue: string | undefined, ipAddress = IP) {
  return sessions.authenticate({ cookieValue, ipAddress, log });
}

describe('the guard', () => {
  it('rejects a missing cookie, a malformed one and an unknown one', async () => {
    const sessions = service();
    await expect(use(sessions, undefined)).rejects.toBeInstanceOf(NoSessionCookieError);
    await expect(use(sessions, 'not-a-uuid')).rejects.toBeInstanceOf(InvalidSessionError);
    await expect(use(sessions, randomUUID())).rejects.toBeInstanceOf(InvalidSessionError);
  });

  it('ends the session when its user is gone', async () => {
    const sessions = service();
    const user = addUser();
    const { cookieValue } = await login(sessions, user);
    users.delete(user.id);
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(SessionUserNotFoundError);
    users.set(user.id, user);
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
  });
});

describe('absolute expiry', () => {
  it('accepts a session exactly at expiresAt and ends it one millisecond later', async () => {
    const sessions = service({ maxAge: 100 });
    const user = addUser();
    const { cookieValue, session } = await login(sessions, user);

    fakeNow = session.expiresAt;
    await expect(use(sessions, cookieValue)).resolves.toMatchObject({ user: { id: user.id } });

    fakeNow = session.expiresAt + 1;
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(SessionExpiredError);
    // Deleted, not merely refused.
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
  });

  it('is not pushed back by activity when renewal is off', async () => {
    const sessions = service({ maxAge: 100, idleTimeout: 60 });
    const { cookieValue, session } = await login(sessions, addUser());
    for (let t = 50; t <= 100; t += 50) {
      fakeNow = session.createdAt + t * SECOND;
      await use(sessions, cookieValue);
    }
    fakeNow = session.createdAt + 100 * SECOND + 1;
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(SessionExpiredError);
  });
});

describe('idle expiry', () => {
  it('accepts a session idle for exactly the timeout and ends it one millisecond later', async () => {
    const sessions = service({ idleTimeout: 60 });
    const { cookieValue, session } = await login(sessions, addUser());

    fakeNow = session.createdAt + 60 * SECOND;
    await use(sessions, cookieValue);

    // Idle time counts from the last use, not from creation.
    fakeNow += 60 * SECOND + 1;
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(SessionExpiredError);
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
  });
});

describe('sliding renewal', () => {
  it('renews only once less than the threshold remains, to now plus the full maximum age', async () => {
    const sessions = service({ maxAge: 100, renewalThreshold: 30 });
    const { cookieValue, session } = await login(sessions, addUser());

    fakeNow = session.expiresAt - 30 * SECOND; // exactly the threshold left: not less
    const atThreshold = await use(sessions, cookieValue);
    expect(atThreshold.renewed).toBe(false);
    expect(atThreshold.session.expiresAt).toBe(session.expiresAt);

    fakeNow += 1;
    const renewed = await use(sessions, cookieValue);
    expect(renewed.renewed).toBe(true);
    expect(renewed.session.expiresAt).toBe(fakeNow + 100 * SECOND);
    expect((await store.findByKey({ key: session.key }))?.expiresAt).toBe(fakeNow + 100 * SECOND);

    // Still alive after the original expiry.
    fakeNow = session.expiresAt + 10 * SECOND;
    await expect(use(sessions, cookieValue)).resolves.toMatchObject({ renewed: false });
  });

  it('never renews when the threshold is 0', async () => {
    const sessions = service({ maxAge: 100, renewalThreshold: 0 });
    const { cookieValue, session } = await login(sessions, addUser());
    fakeNow = session.expiresAt - 1;
    const last = await use(sessions, cookieValue);
    expect(last.renewed).toBe(false);
    expect(last.session.expiresAt).toBe(session.expiresAt);
    fakeNow = session.expiresAt + 1;
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(SessionExpiredError);
  });
});

describe('recording activity', () => {
  it('never brings back a session that was ended while a request was being checked', async () => {
    const user = addUser();
    let racingLogout: (() => Promise<void>) | undefined;
    // The logout lands during the user lookup, after the session was found live and touched.
    const sessions = new SessionService({
      store,
      findUser: async ({ id }) => {
        await racingLogout?.();
        return users.get(id);
      },
      config: sessionConfig(),
      now: () => fakeNow,
    });
    const { cookieValue, session } = await login(sessions, user);
    racingLogout = () => sessions.end({ key: session.key });

    // That request was authenticated before the logout and may finish; nothing after it may.
    await use(sessions, cookieValue);
    racingLogout = undefined;
    expect(await store.findByKey({ key: session.key })).toBeUndefined();
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
  });

  it('a session ended before the check is refused at once', async () => {
    const user = addUser();
    const sessions = new SessionService({ store, findUser: async ({ id }) => users.get(id), config: sessionConfig(), now: () => fakeNow });
    const { cookieValue, session } = await login(sessions, user);
    await sessions.end({ key: session.key });
    await expect(use(sessions, cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
  });

  it('a session in use, ended through another connection to the file (as the CLI does), is refused on the next request', async () => {
    const user = addUser();
    const sessions = service();
    const one = await login(sessions, user);
    const other = await login(sessions, user);
    await use(sessions, one.cookieValue);
    await use(sessions, other.cookieValue);

    const cli = new SqliteSessionStore(`sqlite:${path.join(dir, 'sessions.db')}`);
    try {
      expect(await cli.deleteByKey({ key: one.session.key })).toBe(true);
      await expect(use(sessions, one.cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
      await use(sessions, other.cookieValue);

      expect(await cli.deleteByUser({ userId: user.id })).toBe(1);
      await expect(use(sessions, other.cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
    } finally {
      await cli.close();
    }
  });
});

/**
 * With a 90 s maximum age and a 60 s idle timeout, seen at +100 s: one session of each kind,
 * the two boundaries included, and another user's session.
 */
async function mixedSessions(sessions: SessionService) {
  const user = addUser();
  const start = fakeNow;
  const at = (seconds: number) => (fakeNow = start + seconds * SECOND);
  const expired = await login(sessions, user); // expires at +90
  at(10);
  const atExpiry = await login(sessions, user); // expires at +100, exactly "now"
  at(30);
  const idle = await login(sessions, user); // idle for 70 s at +100
  at(40);
  const atIdleLimit = await login(sessions, user); // idle for exactly 60 s at +100
  for (const seconds of [50, 85]) {
    at(seconds); // kept in use, so only their absolute expiry counts
    await use(sessions, expired.cookieValue);
    await use(sessions, atExpiry.cookieValue);
  }
  const fresh = await login(sessions, user);
  const someoneElses = await login(sessions, addUser());
  at(100);
  return { user, expired, atExpiry, idle, atIdleLimit, fresh, someoneElses };
}

describe('listing', () => {
  it('shows only live sessions of the user, newest first, marking the current one', async () => {
    const sessions = service({ maxAge: 90, idleTimeout: 60 });
    const s = await mixedSessions(sessions);

    const page = await sessions.list({ userId: s.user.id, currentKey: s.atIdleLimit.session.key, limit: 50 });
    expect(page.total).toBe(3);
    expect(page.results.map((v) => [v.id, v.current])).toEqual([
      [s.fresh.session.id, false],
      [s.atIdleLimit.session.id, true],
      [s.atExpiry.session.id, false],
    ]);
    expect(JSON.stringify(page.results)).not.toContain(s.atIdleLimit.cookieValue);
  });
});

describe('ending sessions', () => {
  it('by public id: unknown is "not found", another user\'s is "not yours" and stays, one\'s own ends', async () => {
    const sessions = service();
    const me = addUser();
    const mine = await login(sessions, me);
    const myOther = await login(sessions, me);
    const theirs = await login(sessions, addUser());

    await expect(sessions.endById({ callerId: me.id, id: randomUUID() })).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(sessions.endById({ callerId: me.id, id: theirs.session.id })).rejects.toBeInstanceOf(NotYourSessionError);
    await expect(use(sessions, theirs.cookieValue)).resolves.toBeTruthy();

    const ended = await sessions.endById({ callerId: me.id, id: myOther.session.id });
    expect(ended.key).toBe(myOther.session.key);
    await expect(use(sessions, myOther.cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
    await expect(use(sessions, mine.cookieValue)).resolves.toBeTruthy();
  });

  it('all of a user\'s, optionally but one, leaving other users alone', async () => {
    const sessions = service();
    const me = addUser();
    const [a, b, c] = [await login(sessions, me), await login(sessions, me), await login(sessions, me)];
    const theirs = await login(sessions, addUser());

    expect(await sessions.endAllOfUser({ userId: me.id, exceptKey: a.session.key })).toBe(2);
    await expect(use(sessions, a.cookieValue)).resolves.toBeTruthy();
    for (const gone of [b, c]) await expect(use(sessions, gone.cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);

    expect(await sessions.endAllOfUser({ userId: me.id })).toBe(1);
    await expect(use(sessions, a.cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
    await expect(use(sessions, theirs.cookieValue)).resolves.toBeTruthy();
  });
});

describe('purging', () => {
  it('removes exactly the sessions past their absolute expiry or idle too long', async () => {
    const sessions = service({ maxAge: 90, idleTimeout: 60 });
    const s = await mixedSessions(sessions);

    expect(await sessions.purgeExpired()).toBe(2);
    for (const gone of [s.expired, s.idle]) expect(await store.findByKey({ key: gone.session.key })).toBeUndefined();
    for (const kept of [s.atExpiry, s.atIdleLimit, s.fresh, s.someoneElses]) {
      expect(await store.findByKey({ key: kept.session.key })).toBeDefined();
    }
  });
});

describe('hijack detection', () => {
  it('treats an IPv4 address and its IPv4-mapped IPv6 form as the same address', async () => {
    const sessions = service({ invalidateOnIpChange: true });
    const { cookieValue } = await login(sessions, addUser(), '198.51.100.4');
    await expect(use(sessions, cookieValue, '::ffff:198.51.100.4')).resolves.toBeTruthy();
    expect(warnings).toEqual([]);
  });

  it('only logs a real IP change by default, and ends the session when told to', async () => {
    const lenient = service();
    const first = await login(lenient, addUser(), '198.51.100.4');
    await expect(use(lenient, first.cookieValue, '192.0.2.9')).resolves.toBeTruthy();
    expect(warnings).toHaveLength(1);

    const strict = service({ invalidateOnIpChange: true });
    const second = await login(strict, addUser(), '198.51.100.4');
    await expect(use(strict, second.cookieValue, '192.0.2.9')).rejects.toBeInstanceOf(InvalidSessionError);
    await expect(use(strict, second.cookieValue, '198.51.100.4')).rejects.toBeInstanceOf(InvalidSessionError);
    expect(warnings).toHaveLength(2);
  });
});

describe('what the store holds', () => {
  it('never the cookie value: a copy of the store file yields no usable cookie', async () => {
    const sessions = service();
    const { cookieValue, session } = await login(sessions, addUser());
    expect(session.key).not.toBe(cookieValue);
    expect(session.id).not.toBe(cookieValue);
    expect(await store.findByKey({ key: cookieValue })).toBeUndefined();

    const files = readdirSync(dir).map((f) => readFileSync(path.join(dir, f)).toString('latin1'));
    expect(files.join('')).toContain(session.id); // the bytes are there to search
    expect(files.join('')).not.toContain(cookieValue);

    // Under another SESSION_SECRET the same cookie maps to nothing.
    await expect(use(service(), cookieValue)).rejects.toBeInstanceOf(InvalidSessionError);
  });
});
