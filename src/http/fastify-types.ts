import type { Config } from '../config.js';
import type { StoredSession } from '../sessions/store.js';
import type { User } from '../users/repository.js';

declare module 'fastify' {
  interface FastifyInstance {
    troveConfig: Config;
  }
  interface FastifyRequest {
    /** Set by the session guard on protected routes. */
    user: User | null;
    session: StoredSession | null;
    /** The `csrfToken` body field, lifted out before validation. */
    csrfTokenField: string | undefined;
  }
}
