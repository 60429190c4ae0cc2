/** How a login came about (interface §2.1 metadata.loginMethod). */
export type LoginMethod = 'password' | 'oauth';

export interface SessionMetadata {
  loginMethod: LoginMethod;
  deviceName?: string;
  location?: string;
}

/**
 * A session as the central store keeps it. `key` is the HMAC of the cookie value (never the
 * value itself); `id` is the public id shown in session lists. Times are epoch milliseconds.
 */
export interface StoredSession {
  key: string;
  id: string;
  userId: string;
  createdAt: number;
  lastAccessedAt: number;
  expiresAt: number;
  ipAddress: string;
  userAgent: string;
  metadata: SessionMetadata;
  csrfToken: string;
}

/**
 * A pending OAuth authorization (interface §2.4), kept with the session that started it. The
 * store holds neither the state nor the browser-binding cookie in clear, only their HMACs, like
 * session keys. Times are epoch milliseconds.
 */
export interface PendingOAuthState {
  /** HMAC of the state value sent to the provider. */
  stateKey: string;
  /** Store key of the session that started the flow. */
  sessionKey: string;
  userId: string;
  integration: string;
  /** PKCE (RFC 7636) verifier, needed for the code exchange. */
  codeVerifier: string;
  /** HMAC of the value of the SameSite=Lax cookie set on the browser that started the flow. */
  bindingKey: string;
  expiresAt: number;
}

/**
 * The central session store, apart from the main database. One method = one round trip,
 * with every method keeping the per-user index consistent with the sessions themselves.
 */
export interface SessionStore {
  create(session: StoredSession): Promise<void>;
  findByKey(input: { key: string }): Promise<StoredSession | undefined>;
  findById(input: { id: string }): Promise<StoredSession | undefined>;
  /**
   * The guard's single round trip. When the session exists and is live (expiresAt not before
   * `now`, lastAccessedAt not before `idleSince`), it records the access, moves expiresAt to
   * `renewTo` when it falls before `renewIfExpiresBefore` (sliding renewal), and returns the
   * session as updated. Otherwise it changes nothing and returns undefined. Atomic, so a
   * session deleted meanwhile is never brought back.
   */
  touchIfLive(input: {
    key: string;
    now: number;
    idleSince: number;
    renewIfExpiresBefore: number;
    renewTo: number;
  }): Promise<StoredSession | undefined>;
  listByUser(input: { userId: string }): Promise<StoredSession[]>;
  deleteByKey(input: { key: string }): Promise<boolean>;
  /** Ends every session of a user, but `exceptKey` when given; returns how many ended. */
  deleteByUser(input: { userId: string; exceptKey?: string }): Promise<number>;
  /** Removes sessions past their absolute expiry or idle longer than allowed, and expired OAuth states. */
  purgeExpired(input: { now: number; idleSince: number }): Promise<number>;
  /** Keeps a pending OAuth state until its expiresAt; ending its session discards it. */
  saveOAuthState(state: PendingOAuthState): Promise<void>;
  /**
   * Removes and returns a pending state in one atomic step, so a state is used at most once even
   * when two callbacks race. Undefined when unknown or already taken; the caller checks expiry.
   */
  takeOAuthState(input: { stateKey: string }): Promise<PendingOAuthState | undefined>;
  close(): Promise<void>;
}
