import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { buildApp } from './app.js';
import { AuthService } from './auth/service.js';
import type { Config } from './config.js';
import { migrateToLatest, openDatabase, type MainDatabase } from './db/database.js';
import { startSessionPurge } from './sessions/purge.js';
import { SessionService } from './sessions/service.js';
import type { SessionStore } from './sessions/store.js';
import { openSessionStore } from './sessions/stores/open.js';
import { UsersRepository } from './users/repository.js';

export interface Services {
  database: MainDatabase;
  store: SessionStore;
  users: UsersRepository;
  sessions: SessionService;
  close(): Promise<void>;
}

/** Opens the main database (migrated) and the session store; shared by the server and the CLI. */
export async function openServices(config: Config): Promise<Services> {
  const database = openDatabase(config.databaseUrl);
  try {
    await migrateToLatest(database);
  } catch (err) {
    await database.close();
    throw err;
  }
  const store = openSessionStore(config.sessionStoreUrl);
  const users = new UsersRepository(database.db);
  const sessions = new SessionService({ store, findUser: (input) => users.findById(input), config: config.session });
  return {
    database,
    store,
    users,
    sessions,
    async close() {
      await store.close();
      await database.close();
    },
  };
}

export interface Trove {
  app: FastifyInstance;
  services: Services;
  /** Stops taking requests, lets those in flight finish, then closes the databases. */
  close(): Promise<void>;
}

export async function createTrove(config: Config, logger: FastifyServerOptions['logger']): Promise<Trove> {
  const services = await openServices(config);
  const auth = new AuthService({ users: services.users, sessions: services.sessions });
  const app = await buildApp({ config, users: services.users, sessions: services.sessions, auth, logger });
  const stopPurge = startSessionPurge(services.sessions, config.session.purgeInterval, app.log);
  let closing: Promise<void> | undefined;
  return {
    app,
    services,
    close() {
      closing ??= (async () => {
        stopPurge();
        await app.close();
        await services.close();
      })();
      return closing;
    },
  };
}
