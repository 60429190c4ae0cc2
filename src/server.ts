import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { buildApp } from './app.js';
import { AuthService } from './auth/service.js';
import type { Config } from './config.js';
import { InFlight } from './http/in-flight.js';
import { openServices, type Services } from './services.js';
import { startSessionPurge } from './sessions/purge.js';

export { openServices, type Services } from './services.js';

export interface Trove {
  app: FastifyInstance;
  services: Services;
  /** Stops taking requests, lets those in flight finish, then closes the databases. */
  close(): Promise<void>;
}

export async function createTrove(config: Config, logger: FastifyServerOptions['logger']): Promise<Trove> {
  const services = await openServices(config);
  const auth = new AuthService({ users: services.users, sessions: services.sessions });
  const inFlight = new InFlight();
  const app = await buildApp({
    config,
    users: services.users,
    sessions: services.sessions,
    auth,
    logger,
    inFlight,
    rateLimit: services.rateLimit,
  });
  const stopPurge = startSessionPurge(services.sessions, config.session.purgeInterval, app.log);
  let closing: Promise<void> | undefined;
  return {
    app,
    services,
    close() {
      closing ??= (async () => {
        stopPurge();
        await app.close();
        // Handlers of clients that already hung up are not waited for by close(); they still use the databases.
        await inFlight.drained();
        await services.close();
      })();
      return closing;
    },
  };
}
