import type { Config } from './config.js';
import { SecretBox } from './crypto/secret-box.js';
import { migrateToLatest, openDatabase, type MainDatabase } from './db/database.js';
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
  close(): Promise<void>;
}

/**
 * Opens the main database (migrated) and the session store. Shared by the server and the CLI;
 * kept apart from the HTTP app so the CLI starts without loading it.
 */
export async function openServices(config: Config): Promise<Services> {
  const database = openDatabase(config.databaseUrl);
  try {
    await migrateToLatest(database);
  } catch (err) {
    await database.close();
    throw err;
  }
  const store = openSessionStore(config.sessionStoreUrl);
  const users = new UsersRepository(database);
  const sessions = new SessionService({ store, findUser: (input) => users.findById(input), config: config.session });
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
    async close() {
      await store.close();
      await database.close();
    },
  };
}
