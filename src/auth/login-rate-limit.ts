import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { SessionStoreUnavailableError, TooManyLoginAttemptsError } from '../domain-errors.js';
import { normalizeEmail } from './service.js';

/**
 * Login attempts are counted twice, per client IP and per email, so neither one address trying
 * many accounts nor many addresses trying one account gets more than the limit (decisions §1).
 * Password changes are counted the same way, by the account's email, as they also guess a password.
 * Needs @fastify/rate-limit registered on the app (see app.ts).
 */
export function loginRateLimit(app: FastifyInstance, emailOf: (request: FastifyRequest) => string): preHandlerAsyncHookHandler {
  const { max, windowMs } = app.troveConfig.loginRateLimit;
  const byIp = app.createRateLimit({ max, timeWindow: windowMs, keyGenerator: (req) => `ip:${req.ip}` });
  const byEmail = app.createRateLimit({
    max,
    timeWindow: windowMs,
    keyGenerator: (req) => `email:${normalizeEmail(emailOf(req))}`,
  });
  return async (request) => {
    let results;
    try {
      results = [await byIp(request), await byEmail(request)];
    } catch (err) {
      // Only the Redis counters can fail (the in-process ones cannot): the shared store is out of reach.
      throw new SessionStoreUnavailableError({ cause: err });
    }
    const exceeded = results.filter((r) => !r.isAllowed && r.isExceeded);
    if (exceeded.length > 0) {
      const wait = Math.max(1, ...exceeded.map((r) => (r.isAllowed ? 0 : r.ttlInSeconds)));
      request.log.warn({ keys: exceeded.map((r) => (r.key.startsWith('ip:') ? r.key : 'email')) }, 'login rate limit exceeded');
      throw new TooManyLoginAttemptsError(wait);
    }
  };
}
