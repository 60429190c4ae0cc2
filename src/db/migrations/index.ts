import type { Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { usersMigration } from './0001-users.js';

/** Every migration in order; the name is stored in the database, so never rename one. */
export function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-users': usersMigration(dialect),
  };
}
