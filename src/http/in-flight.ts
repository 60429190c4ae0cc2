import type { FastifyInstance } from 'fastify';

/**
 * Counts route handlers still running. A handler whose client hung up keeps running, and
 * Fastify's close() does not wait for it; shutdown waits here before closing the databases.
 */
export class InFlight {
  private count = 0;
  private waiters: Array<() => void> = [];

  track<T>(work: PromiseLike<T>): Promise<T> {
    this.count++;
    return Promise.resolve(work).finally(() => {
      this.count--;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    });
  }

  drained(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Wraps every async handler registered after this call. */
  attach(app: FastifyInstance): void {
    const tracker = this;
    app.addHook('onRoute', (route) => {
      const handler = route.handler;
      route.handler = function (this: FastifyInstance, request, reply) {
        const result = handler.call(this, request, reply) as unknown;
        return result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function'
          ? tracker.track(result as PromiseLike<unknown>)
          : result;
      } as typeof handler;
    });
  }
}
