import type { Migration } from 'kysely';
import type { Dialect } from '../database.js';
import { usersMigration } from './0001-users.js';
import { userIntegrationsMigration } from './0002-user-integrations.js';

/** Every migration in order; the name is stored in the database, so never rename one. */
export function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-users': usersMigration(dialect),
    '0002-user-integrations': userIntegrationsMigration(dialect),
  };
}
