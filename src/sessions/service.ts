import { randomBytes, randomUUID } from 'node:crypto';
import type { SessionConfig } from '../config.js';
import {
  InvalidSessionError,
  NoSessionCookieError,
  NotYourSessionError,
  SessionExpiredError,
  SessionNotFoundError,
  SessionUserNotFoundError,
} from '../domain-errors.js';
import { pageOf, type Page, type PageRequest } from '../paging.js';
import type { User } from '../users/repository.js';
import type { LoginMethod, SessionMetadata, SessionStore, StoredSession } from './store.js';
import { looksLikeCookieValue, newCookieValue, storeKeyFor } from './token.js';

export interface SessionView {
  id: string;
  userId: string;
  createdAt: string;
  lastAccessedAt: string;
  expiresAt: string;
  ipAddress: string;
  userAgent: string;
  metadata: SessionMetadata;
  current: boolean;
}

export interface WarnLogger {
  warn(obj: object, msg: string): void;
}

export interface Authenticated {
  user: User;
  session: StoredSession;
  /** True when sliding renewal moved expiresAt, so the cookie must be sent again. */
  renewed: boolean;
}

interface Deps {
  store: SessionStore;
  findUser(input: { id: string }): Promise<User | undefined>;
  config: SessionConfig;
  now?: () => number;
}

/** Mobile clients hop between IPv4 and IPv4-mapped IPv6; those are one address. */
function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  const strip = (ip: string) => (ip.startsWith('::ffff:') ? ip.slice(7) : ip).toLowerCase();
  return strip(a) === strip(b);
}

/** The rules of interface §3.1: creation, the guard's checks, renewal, ownership, bulk endings. */
export class SessionService {
  private readonly now: () => number;

  constructor(private readonly deps: Deps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Store keys of recently seen cookies: an HMAC costs about as much as the session lookup
   * itself. Bounded, oldest entry out first.
   */
  private readonly keys = new Map<string, string>();

  keyOf(cookieValue: string): string {
    let key = this.keys.get(cookieValue);
    if (key === undefined) {
      key = storeKeyFor(this.deps.config.secret, cookieValue);
      if (this.keys.size >= 10_000) this.keys.delete(this.keys.keys().next().value as string);
      this.keys.set(cookieValue, key);
    }
    return key;
  }

  async create(input: {
    userId: string;
    ipAddress: string;
    userAgent: string;
    loginMethod: LoginMethod;
  }): Promise<{ cookieValue: string; session: StoredSession }> {
    const now = this.now();
    const cookieValue = newCookieValue();
    const session: StoredSession = {
      key: this.keyOf(cookieValue),
      id: randomUUID(),
      userId: input.userId,
      createdAt: now,
      lastAccessedAt: now,
      expiresAt: now + this.deps.config.maxAge * 1000,
      ipAddress: input.ipAddress,
      userAgent: input.userAgent,
      metadata: { loginMethod: input.loginMethod },
      csrfToken: randomBytes(32).toString('base64url'),
    };
    await this.deps.store.create(session);
    return { cookieValue, session };
  }

  /** The guard (interface §5.3). Throws the guard's errors; on success the session is touched. */
  async authenticate(input: { cookieValue: string | undefined; ipAddress: string; log: WarnLogger }): Promise<Authenticated> {
    const { cookieValue } = input;
    if (!cookieValue) throw new NoSessionCookieError();
    if (!looksLikeCookieValue(cookieValue)) throw new InvalidSessionError();
    const { store, config } = this.deps;
    const key = this.keyOf(cookieValue);
    const now = this.now();
    const renewTo = now + config.maxAge * 1000;
    const session = await store.touchIfLive({
      key,
      now,
      idleSince: now - config.idleTimeout * 1000,
      renewIfExpiresBefore: config.renewalThreshold > 0 ? now + config.renewalThreshold * 1000 : 0,
      renewTo,
    });
    if (!session) {
      // The rare path: find out whether it never existed or has expired (absolute or idle).
      if (!(await store.findByKey({ key }))) throw new InvalidSessionError();
      await store.deleteByKey({ key });
      throw new SessionExpiredError();
    }

    const user = await this.deps.findUser({ id: session.userId });
    if (!user) {
      await store.deleteByKey({ key });
      throw new SessionUserNotFoundError();
    }

    if (!sameAddress(session.ipAddress, input.ipAddress)) {
      input.log.warn(
        { sessionId: session.id, userId: session.userId, sessionIp: session.ipAddress, requestIp: input.ipAddress },
        config.invalidateOnIpChange ? 'session IP changed; session ended' : 'session IP changed',
      );
      if (config.invalidateOnIpChange) {
        await store.deleteByKey({ key });
        throw new InvalidSessionError();
      }
    }

    // expiresAt equals renewTo only when this request renewed it (or the session was made in this
    // very millisecond, when sending the same cookie again is harmless).
    return { user, session, renewed: config.renewalThreshold > 0 && session.expiresAt === renewTo };
  }

  /** Ends the session behind a cookie, if there is one (logout, and fixation protection at login). */
  async endByCookie(cookieValue: string | undefined): Promise<void> {
    if (cookieValue && looksLikeCookieValue(cookieValue)) await this.deps.store.deleteByKey({ key: this.keyOf(cookieValue) });
  }

  /** Whether the session with this store key exists and is within both its expiries; records no access. */
  async isLive(input: { key: string }): Promise<boolean> {
    const session = await this.deps.store.findByKey(input);
    const now = this.now();
    return !!session && session.expiresAt >= now && session.lastAccessedAt >= now - this.deps.config.idleTimeout * 1000;
  }

  async end(input: { key: string }): Promise<void> {
    await this.deps.store.deleteByKey(input);
  }

  /** Live sessions of one user, newest first. */
  async list(input: { userId: string; currentKey: string } & PageRequest): Promise<Page<SessionView>> {
    const now = this.now();
    const idleSince = now - this.deps.config.idleTimeout * 1000;
    const live = (await this.deps.store.listByUser({ userId: input.userId })).filter(
      (s) => s.expiresAt >= now && s.lastAccessedAt >= idleSince,
    );
    const page = pageOf(live, input);
    return { ...page, results: page.results.map((s) => this.view(s, input.currentKey)) };
  }

  /** Ends one of the caller's sessions by its public id; returns it so the caller can tell if it was the current one. */
  async endById(input: { callerId: string; id: string }): Promise<StoredSession> {
    const session = await this.deps.store.findById({ id: input.id });
    if (!session) throw new SessionNotFoundError();
    if (session.userId !== input.callerId) throw new NotYourSessionError();
    await this.deps.store.deleteByKey({ key: session.key });
    return session;
  }

  /** Every session of the user but `exceptKey` (logout-all), or every one (force-logout, password change). */
  endAllOfUser(input: { userId: string; exceptKey?: string }): Promise<number> {
    return this.deps.store.deleteByUser(input);
  }

  purgeExpired(): Promise<number> {
    const now = this.now();
    return this.deps.store.purgeExpired({ now, idleSince: now - this.deps.config.idleTimeout * 1000 });
  }

  view(s: StoredSession, currentKey: string): SessionView {
    return {
      id: s.id,
      userId: s.userId,
      createdAt: new Date(s.createdAt).toISOString(),
      lastAccessedAt: new Date(s.lastAccessedAt).toISOString(),
      expiresAt: new Date(s.expiresAt).toISOString(),
      ipAddress: s.ipAddress,
      userAgent: s.userAgent,
      metadata: s.metadata,
      current: s.key === currentKey,
    };
  }
}
