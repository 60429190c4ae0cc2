import type { FastifyBaseLogger } from 'fastify';
import { ServiceUnavailableError } from '../domain-errors.js';
import type { SessionService } from './service.js';

/** Removes expired sessions every `intervalSeconds`; returns the function that stops it. */
export function startSessionPurge(sessions: SessionService, intervalSeconds: number, log: FastifyBaseLogger): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sessions
      .purgeExpired()
      .then((purged) => purged > 0 && log.info({ purged }, 'expired sessions purged'))
      .catch((err: unknown) =>
        err instanceof ServiceUnavailableError
          ? log.error({ outage: err.message }, 'session purge skipped: the session store is out of reach; next try at the next interval')
          : log.error({ err }, 'session purge failed'),
      )
      .finally(() => {
        running = false;
      });
  }, intervalSeconds * 1000);
  timer.unref();
  return () => clearInterval(timer);
}
