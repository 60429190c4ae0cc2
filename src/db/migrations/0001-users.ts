import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../database.js';

export function usersMigration(dialect: Dialect): Migration {
  // ISO-8601 text sorts and compares correctly in SQLite; PostgreSQL gets its native type.
  const timestamp = dialect === 'postgres' ? 'timestamptz' : 'text';
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('user').check(sql`role in ('user', 'admin')`))
        .addColumn('created_at', sql.raw(timestamp), (c) => c.notNull())
        .addColumn('updated_at', sql.raw(timestamp), (c) => c.notNull())
        .addColumn('deleted_at', sql.raw(timestamp))
        .execute();
      // Uniqueness among live accounts only: a deleted account's email can register again.
      await db.schema
        .createIndex('users_email_live')
        .on('users')
        .column('email')
        .unique()
        .where(sql.ref('deleted_at'), 'is', null)
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('users').execute();
    },
  };
}
