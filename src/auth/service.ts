import { InvalidCredentialsError, WeakPasswordError } from '../domain-errors.js';
import { burnPasswordCheck, hashPassword, verifyPassword } from '../crypto/passwords.js';
import type { SessionService } from '../sessions/service.js';
import type { StoredSession } from '../sessions/store.js';
import type { User, UsersRepository } from '../users/repository.js';
import { passwordWeakness } from './password-policy.js';

export interface ClientInfo {
  ipAddress: string;
  userAgent: string;
  /** The session cookie the client came with, if any: it is ended (fixation protection). */
  previousCookie: string | undefined;
  /** Aborted when the client hangs up: queued password hashing is then skipped. */
  signal?: AbortSignal;
}

export interface SignedIn {
  user: User;
  cookieValue: string;
  session: StoredSession;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function assertStrong(password: string, email: string): void {
  const weakness = passwordWeakness({ password, email });
  if (weakness) throw new WeakPasswordError(weakness);
}

/** Register, login, password change: the account rules of interface §3.1 and §4 rules 1–2. */
export class AuthService {
  constructor(private readonly deps: { users: UsersRepository; sessions: SessionService }) {}

  async register(input: { email: string; name: string; password: string } & ClientInfo): Promise<SignedIn> {
    const email = normalizeEmail(input.email);
    assertStrong(input.password, email);
    const user = await this.deps.users.create({
      email,
      name: input.name.trim(),
      passwordHash: await hashPassword(input.password, input.signal),
    });
    return this.startSession(user, input);
  }

  async login(input: { email: string; password: string } & ClientInfo): Promise<SignedIn> {
    const found = await this.deps.users.findWithHashByEmail({ email: normalizeEmail(input.email) });
    if (!found) {
      await burnPasswordCheck(input.password, input.signal);
      throw new InvalidCredentialsError();
    }
    if (!(await verifyPassword(found.passwordHash, input.password, input.signal))) throw new InvalidCredentialsError();
    const { passwordHash: _, ...user } = found;
    return this.startSession(user, input);
  }

  /** Every session of the user ends, the caller's too; the caller gets a fresh one. */
  async changePassword(input: { userId: string; currentPassword: string; newPassword: string } & ClientInfo): Promise<SignedIn> {
    const found = await this.deps.users.findWithHashById({ id: input.userId });
    if (!found || !(await verifyPassword(found.passwordHash, input.currentPassword, input.signal))) {
      throw new InvalidCredentialsError();
    }
    assertStrong(input.newPassword, found.email);
    await this.deps.users.updatePasswordHash({ id: found.id, passwordHash: await hashPassword(input.newPassword, input.signal) });
    await this.deps.sessions.endAllOfUser({ userId: found.id });
    const { passwordHash: _, ...user } = found;
    return this.startSession(user, { ...input, previousCookie: undefined });
  }

  private async startSession(user: User, client: ClientInfo): Promise<SignedIn> {
    await this.deps.sessions.endByCookie(client.previousCookie);
    const { cookieValue, session } = await this.deps.sessions.create({
      userId: user.id,
      ipAddress: client.ipAddress,
      userAgent: client.userAgent,
      loginMethod: 'password',
    });
    return { user, cookieValue, session };
  }
}
