import type { FastifyBaseLogger } from 'fastify';
import type { ServiceUnavailableError } from '../domain-errors.js';

/** While an outage lasts, one error line per server every this many ms, however many requests fail. */
const REPEAT_MS = 30_000;

/** Rate-limits the log of an outage: the first failure is logged at error level, then one line per REPEAT_MS. */
export class OutageLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  report(log: FastifyBaseLogger, err: ServiceUnavailableError): void {
    const what = err.message;
    const entry = this.last.get(what);
    const now = this.now();
    if (entry && now - entry.at < REPEAT_MS) {
      entry.suppressed += 1;
      return;
    }
    const cause = err.cause instanceof Error ? err.cause.message : String(err.cause ?? 'unknown');
    log.error({ outage: what, cause, failedSinceLastLine: entry?.suppressed ?? 0 }, `${what}: answering 503 until it is back`);
    this.last.set(what, { at: now, suppressed: 0 });
  }
}
