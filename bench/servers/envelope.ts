import { randomUUID } from 'node:crypto';

/** Trove's user record as the profile route answers it. */
export interface ProfileUser {
  id: string;
  email: string;
  name: string;
  role: 'user' | 'admin';
  createdAt: string;
}

/** Trove's read-one envelope (decisions §3), so every server under test serialises the same shape. */
export function readOne<T>(operation: string, durationMs: number, result: T) {
  return {
    requestId: randomUUID(),
    timestamp: new Date().toISOString(),
    duration: Math.round(durationMs * 1000) / 1000,
    operation,
    result,
  };
}

export function portFromEnv(): number {
  const port = Number(process.env.PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be set to a free port');
  return port;
}
