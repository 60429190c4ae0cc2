import { availableParallelism } from 'node:os';
import { hash, verify, type Options } from '@node-rs/argon2';

// OWASP's argon2id setting: 19 MiB, 2 passes, 1 lane. (2 is Algorithm.Argon2id, a const enum that
// cannot be imported under verbatimModuleSyntax.)
const options: Options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/**
 * Hashing runs on libuv's thread pool. Left alone, a burst of logins would take every core and
 * starve the event loop; one core is always kept free for requests that need no hashing.
 */
const maxConcurrent = Math.max(1, availableParallelism() - 1);
let running = 0;
const waiting: Array<() => void> = [];

/** Raised instead of hashing for a client that hung up while its turn was coming. */
export class HashingAbandonedError extends Error {
  override name = 'HashingAbandonedError';
}

async function limited<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  if (running >= maxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    // A burst of abandoned logins must not keep the cores busy long after their clients left.
    if (signal?.aborted) throw new HashingAbandonedError();
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

export function hashPassword(password: string, signal?: AbortSignal): Promise<string> {
  return limited(() => hash(password, options), signal);
}

export function verifyPassword(passwordHash: string, password: string, signal?: AbortSignal): Promise<boolean> {
  return limited(() => verify(passwordHash, password).catch(() => false), signal);
}

let dummyHash: Promise<string> | undefined;

/** Spends the same time as a real check, so a login for an unknown email cannot be told apart by timing. */
export async function burnPasswordCheck(password: string, signal?: AbortSignal): Promise<void> {
  dummyHash ??= hash('trove-dummy-password-for-timing', options);
  await verifyPassword(await dummyHash, password, signal);
}
