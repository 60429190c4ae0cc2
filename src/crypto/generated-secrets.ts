import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Development convenience: a secret made once into DATA_DIR and reused on every start,
 * so sessions and encrypted tokens survive restarts without any setup step.
 * Written with mode 0600 and the exclusive flag, so two processes starting at once agree.
 */
export function readOrCreateSecret(dataDir: string, name: string): Buffer {
  const file = path.join(dataDir, name);
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}
