import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation, lockForTransaction, type Dialect, type MainDatabase } from '../db/database.js';
import type { Database, Role } from '../db/tables.js';
import { EmailTakenError } from '../domain-errors.js';

export interface User {
  id: string;
  email: string;
  name: string;
  role: Role;
  createdAt: string;
}

export interface UserWithHash extends User {
  passwordHash: string;
}

/** Advisory lock id that serializes registrations (any number, fixed; "TROV" in ASCII). */
const REGISTRATION_LOCK = 0x54524f56;

const columns = ['id', 'email', 'name', 'role', 'created_at'] as const;

function toUser(row: { id: string; email: string; name: string; role: Role; created_at: string | Date }): User {
  const createdAt = row.created_at instanceof Date ? row.created_at.toISOString() : row.created_at;
  return { id: row.id, email: row.email, name: row.name, role: row.role, createdAt };
}

const RECENT_USER_MS = 250;
const RECENT_USERS_MAX = 10_000;

/** One method per query, named for its intent. Reads see live (not soft-deleted) users only. */
export class UsersRepository {
  private readonly db: Kysely<Database>;
  private readonly dialect: Dialect;
  /** Runs on every authenticated request, so it is built once. */
  private readonly liveById;
  /** The guard's reads of the last quarter second, by id (see findRecentById). */
  private readonly recent = new Map<string, { user: User; readAt: number }>();
  /** Moves on every write through this repository, so a read that raced one is not remembered. */
  private writes = 0;

  private forgetRecent(id: string): void {
    this.writes += 1;
    this.recent.delete(id);
  }

  constructor(database: MainDatabase) {
    this.db = database.db;
    this.dialect = database.dialect;
    this.liveById = database.prepare(
      this.db.selectFrom('users').select(columns).where('id', '=', '').where('deleted_at', 'is', null),
    );
  }

  /** The first account ever made on an instance becomes its admin. */
  async create(input: { email: string; name: string; passwordHash: string }): Promise<User> {
    const now = new Date().toISOString();
    try {
      return await this.db.transaction().execute(async (trx) => {
        // Without it, two first registrations racing on PostgreSQL could both see no user and both become admin.
        await lockForTransaction(trx, this.dialect, REGISTRATION_LOCK);
        const anyUser = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
        const row = {
          id: randomUUID(),
          email: input.email,
          name: input.name,
          password_hash: input.passwordHash,
          role: (anyUser ? 'user' : 'admin') as Role,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        };
        await trx.insertInto('users').values(row).execute();
        return toUser(row);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new EmailTakenError();
      throw err;
    }
  }

  async findById(input: { id: string }): Promise<User | undefined> {
    const [row] = await this.liveById([input.id]);
    return row && toUser(row);
  }

  /**
   * The guard's user lookup. A read of the main database on every request cost a fifth of the
   * profile route's throughput (measured: about 6,500 -> 8,400 requests/s without it), so a live
   * user read in the last RECENT_USER_MS is used again. Changes made in this process forget the
   * entry at once; a change made by another process (the CLI, a second Trove) is seen within
   * RECENT_USER_MS. Sessions have no such delay: ending one takes effect on the next request.
   */
  async findRecentById(input: { id: string }): Promise<User | undefined> {
    const now = Date.now();
    const hit = this.recent.get(input.id);
    if (hit && now - hit.readAt < RECENT_USER_MS) return hit.user;
    const writesBefore = this.writes;
    const user = await this.findById(input);
    if (!user || this.writes !== writesBefore) {
      this.recent.delete(input.id);
      return user;
    }
    if (this.recent.size >= RECENT_USERS_MAX) this.recent.clear();
    this.recent.set(input.id, { user, readAt: now });
    return user;
  }

  async findWithHashById(input: { id: string }): Promise<UserWithHash | undefined> {
    const row = await this.db
      .selectFrom('users')
      .select([...columns, 'password_hash'])
      .where('id', '=', input.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row && { ...toUser(row), passwordHash: row.password_hash };
  }

  async findWithHashByEmail(input: { email: string }): Promise<UserWithHash | undefined> {
    const row = await this.db
      .selectFrom('users')
      .select([...columns, 'password_hash'])
      .where('email', '=', input.email)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row && { ...toUser(row), passwordHash: row.password_hash };
  }

  async findByEmail(input: { email: string }): Promise<User | undefined> {
    const row = await this.db
      .selectFrom('users')
      .select(columns)
      .where('email', '=', input.email)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row && toUser(row);
  }

  async listAll(): Promise<User[]> {
    const rows = await this.db
      .selectFrom('users')
      .select(columns)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .execute();
    return rows.map(toUser);
  }

  async updatePasswordHash(input: { id: string; passwordHash: string }): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ password_hash: input.passwordHash, updated_at: new Date().toISOString() })
      .where('id', '=', input.id)
      .where('deleted_at', 'is', null)
      .execute();
  }

  /** Returns false when no live user has that id. */
  async setRole(input: { id: string; role: Role }): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ role: input.role, updated_at: new Date().toISOString() })
      .where('id', '=', input.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    this.forgetRecent(input.id);
    return result.numUpdatedRows > 0n;
  }

  async countAdmins(): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('role', '=', 'admin')
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Soft delete: the row stays, marked; returns false when no live user has that id. */
  async softDelete(input: { id: string }): Promise<boolean> {
    const now = new Date().toISOString();
    const result = await this.db
      .updateTable('users')
      .set({ deleted_at: now, updated_at: now })
      .where('id', '=', input.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    this.forgetRecent(input.id);
    return result.numUpdatedRows > 0n;
  }
}
