import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../database.js';

export function userIntegrationsMigration(dialect: Dialect): Migration {
  const timestamp = dialect === 'postgres' ? 'timestamptz' : 'text';
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('user_integrations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('integration', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().defaultTo('connected').check(sql`status in ('connected', 'syncing', 'error', 'disconnected')`),
        )
        // The whole credentials object, sealed with AES-256-GCM (crypto/secret-box.ts).
        .addColumn('credentials', 'text', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('item_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_sync_at', sql.raw(timestamp))
        .addColumn('created_at', sql.raw(timestamp), (c) => c.notNull())
        .addColumn('updated_at', sql.raw(timestamp), (c) => c.notNull())
        .addColumn('deleted_at', sql.raw(timestamp))
        .execute();
      // One live connection per user per integration; a disconnected one may be connected again.
      await db.schema
        .createIndex('user_integrations_live')
        .on('user_integrations')
        .columns(['user_id', 'integration'])
        .unique()
        .where(sql.ref('deleted_at'), 'is', null)
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('user_integrations').execute();
    },
  };
}
