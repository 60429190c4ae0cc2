import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation, type MainDatabase } from '../db/database.js';
import type { Database, UserIntegrationStatus } from '../db/tables.js';

/** A connection as the API shows it: never the credentials. */
export interface UserIntegration {
  id: string;
  userId: string;
  integration: string;
  status: UserIntegrationStatus;
  lastError: string | null;
  itemCount: number;
  lastSyncAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A row's sealed credentials, for the few callers that must open them. */
export interface SealedRecord {
  id: string;
  userId: string;
  integration: string;
  credentials: string;
}

const columns = [
  'id',
  'user_id',
  'integration',
  'status',
  'last_error',
  'item_count',
  'last_sync_at',
  'created_at',
  'updated_at',
] as const;

type Timestamp = string | Date;
const iso = (value: Timestamp): string => (value instanceof Date ? value.toISOString() : value);

function toUserIntegration(row: {
  id: string;
  user_id: string;
  integration: string;
  status: UserIntegrationStatus;
  last_error: string | null;
  item_count: number | string;
  last_sync_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}): UserIntegration {
  return {
    id: row.id,
    userId: row.user_id,
    integration: row.integration,
    status: row.status,
    lastError: row.last_error,
    itemCount: Number(row.item_count),
    lastSyncAt: row.last_sync_at === null ? null : iso(row.last_sync_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** Thrown by insertLive when the user already has a live connection to that integration. */
export class LiveConnectionExistsError extends Error {
  override name = 'LiveConnectionExistsError';
}

/**
 * The user_integrations table. Reads see live (not soft-deleted) rows only. Credentials go in
 * and out sealed: `seal(id)` is called with the row id once it is known, because the id is
 * the associated data of the encryption (a sealed value cannot be moved to another row).
 */
export class UserIntegrationsRepository {
  private readonly db: Kysely<Database>;

  constructor(database: MainDatabase) {
    this.db = database.db;
  }

  async insertLive(input: { userId: string; integration: string; seal: (id: string) => string }): Promise<UserIntegration> {
    const now = new Date().toISOString();
    const row = {
      id: randomUUID(),
      user_id: input.userId,
      integration: input.integration,
      status: 'connected' as const,
      last_error: null,
      item_count: 0,
      last_sync_at: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    try {
      await this.db.insertInto('user_integrations').values({ ...row, credentials: input.seal(row.id) }).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new LiveConnectionExistsError();
      throw err;
    }
    return toUserIntegration(row);
  }

  /** A reconnect: the live row of (user, integration) gets the new credentials, else a new row is made. */
  async upsertLive(input: { userId: string; integration: string; seal: (id: string) => string }): Promise<UserIntegration> {
    for (let attempt = 0; ; attempt++) {
      const live = await this.findLive({ userId: input.userId, integration: input.integration });
      if (live) {
        const now = new Date().toISOString();
        const result = await this.db
          .updateTable('user_integrations')
          .set({ credentials: input.seal(live.id), status: 'connected', last_error: null, updated_at: now })
          .where('id', '=', live.id)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (result.numUpdatedRows > 0n) return { ...live, status: 'connected', lastError: null, updatedAt: now };
      } else {
        try {
          return await this.insertLive(input);
        } catch (err) {
          if (!(err instanceof LiveConnectionExistsError)) throw err;
        }
      }
      // Lost a race with a concurrent connect or disconnect: look again, a bounded number of times.
      if (attempt >= 2) throw new Error('could not store the connection: it kept changing underneath');
    }
  }

  async findLive(input: { userId: string; integration: string }): Promise<UserIntegration | undefined> {
    const row = await this.db
      .selectFrom('user_integrations')
      .select(columns)
      .where('user_id', '=', input.userId)
      .where('integration', '=', input.integration)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row && toUserIntegration(row);
  }

  /** One user's live connections; few per user, so paging happens in memory (paging.ts). */
  async listLiveByUser(input: { userId: string }): Promise<UserIntegration[]> {
    const rows = await this.db
      .selectFrom('user_integrations')
      .select(columns)
      .where('user_id', '=', input.userId)
      .where('deleted_at', 'is', null)
      .execute();
    return rows.map(toUserIntegration);
  }

  async findSealed(input: { id: string }): Promise<SealedRecord | undefined> {
    const row = await this.db
      .selectFrom('user_integrations')
      .select(['id', 'user_id', 'integration', 'credentials'])
      .where('id', '=', input.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row && { id: row.id, userId: row.user_id, integration: row.integration, credentials: row.credentials };
  }

  async findSealedIncludingDeleted(input: { id: string }): Promise<SealedRecord | undefined> {
    const row = await this.db
      .selectFrom('user_integrations')
      .select(['id', 'user_id', 'integration', 'credentials'])
      .where('id', '=', input.id)
      .executeTakeFirst();
    return row && { id: row.id, userId: row.user_id, integration: row.integration, credentials: row.credentials };
  }

  /** Every row, soft-deleted ones included: re-encryption must leave nothing under a retired key. */
  async listAllSealed(): Promise<SealedRecord[]> {
    const rows = await this.db.selectFrom('user_integrations').select(['id', 'user_id', 'integration', 'credentials']).execute();
    return rows.map((row) => ({ id: row.id, userId: row.user_id, integration: row.integration, credentials: row.credentials }));
  }

  /**
   * Stores re-sealed credentials. With `ifCurrently`, only when the row still holds that sealed
   * value: a re-encryption must not overwrite a token the server refreshed meanwhile.
   */
  async replaceSealed(input: { id: string; credentials: string; ifCurrently?: string }): Promise<boolean> {
    let query = this.db
      .updateTable('user_integrations')
      // Not a change a person made, so updated_at stays.
      .set({ credentials: input.credentials })
      .where('id', '=', input.id);
    if (input.ifCurrently !== undefined) query = query.where('credentials', '=', input.ifCurrently);
    const result = await query.executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Soft delete of one of the user's live connections; false when there is none with that id. */
  async softDelete(input: { id: string; userId: string }): Promise<boolean> {
    const now = new Date().toISOString();
    const result = await this.db
      .updateTable('user_integrations')
      .set({ deleted_at: now, updated_at: now, status: 'disconnected' })
      .where('id', '=', input.id)
      .where('user_id', '=', input.userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
