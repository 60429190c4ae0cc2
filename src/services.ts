import type { Redis } from 'ioredis';
import { ConfigError, type Config } from './config.js';
import { SecretBox } from './crypto/secret-box.js';
import { migrateToLatest, openDatabase, type MainDatabase } from './db/database.js';
import { redactUrl } from './db/redact-url.js';
import { DatabaseUnavailableError } from './domain-errors.js';
import { SessionService } from './sessions/service.js';
import type { SessionStore } from './sessions/store.js';
import { openSessionStore } from './sessions/stores/open.js';
import { UserIntegrationsRepository } from './integrations/repository.js';
import { UserIntegrationsService } from './integrations/service.js';
import { UsersRepository } from './users/repository.js';

export interface Services {
  database: MainDatabase;
  store: SessionStore;
  users: UsersRepository;
  sessions: SessionService;
  userIntegrations: UserIntegrationsService;
  /** Set when sessions live in Redis: the login rate limit then counts there too, shared by every process. */
  rateLimit?: { redis: Redis; nameSpace: string };
  close(): Promise<void>;
}

/** Migrates, turning "the database is not there" into a one-line message naming DATABASE_URL. */
export async function openMigratedDatabase(url: string): Promise<{ database: MainDatabase; ran: string[] }> {
  const database = await openDatabase(url);
  try {
    return { database, ran: await migrateToLatest(database) };
  } catch (err) {
    await database.close().catch(() => {});
    if (err instanceof DatabaseUnavailableError) {
      const reason = err.cause instanceof Error ? err.cause.message : String(err.cause);
      throw new ConfigError(`DATABASE_URL: cannot reach the database at ${redactUrl(url)}: ${reason}`);
    }
    throw err;
  }
}

/**
 * Opens the main database (migrated) and the session store. Shared by the server and the CLI;
 * kept apart from the HTTP app so the CLI starts without loading it.
 */
export async function openServices(config: Config): Promise<Services> {
  const { database } = await openMigratedDatabase(config.databaseUrl);
  let opened;
  try {
    opened = await openSessionStore({
      url: config.sessionStoreUrl,
      prefix: config.sessionStorePrefix,
      idleTimeoutMs: config.session.idleTimeout * 1000,
      expiredGraceMs: config.session.purgeInterval * 1000,
    });
  } catch (err) {
    await database.close();
    throw err;
  }
  const { store } = opened;
  const users = new UsersRepository(database);
  const sessions = new SessionService({ store, findUser: (input) => users.findRecentById(input), config: config.session });
  const userIntegrations = new UserIntegrationsService({
    repository: new UserIntegrationsRepository(database),
    box: new SecretBox(config.encryptionKeys),
    config,
  });
  return {
    database,
    store,
    users,
    sessions,
    userIntegrations,
    ...(opened.rateLimit ? { rateLimit: opened.rateLimit } : {}),
    async close() {
      await store.close();
      await database.close();
    },
  };
}
