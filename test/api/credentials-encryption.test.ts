/**
 * Credentials at rest (issue 4, point 4): sealed with AES-256-GCM under the newest key of
 * ENCRYPTION_KEYS; older keys still open old records; `trove integrations reencrypt` moves every
 * record to the newest key, after which the old key can be dropped.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keyIdOf } from '../../src/crypto/secret-box.js';
import { FEED_PASSWORD, FEED_USER, startFeedServer } from '../helpers/feed-server.js';
import { createServicesBackend, testBackend, type ServicesBackend } from '../helpers/backends.js';
import { mainDatabaseDump, registerUser, startTrove, type RunningTrove } from '../helpers/trove.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const b64 = (key: Buffer) => key.toString('base64');

let feeds: Awaited<ReturnType<typeof startFeedServer>>;
let dataDir: string;
/** On PostgreSQL + Redis, the one database every Trove and CLI run of this test shares, as DATA_DIR does embedded. */
let backend: ServicesBackend | undefined;
let backendEnv: Record<string, string> = {};

beforeAll(async () => {
  feeds = await startFeedServer();
  dataDir = mkdtempSync(path.join(tmpdir(), 'trove-keys-'));
  if (testBackend === 'services') {
    backend = await createServicesBackend();
    const { ENCRYPTION_KEY: _keysComeFromTheTest, ...rest } = backend.env;
    backendEnv = rest;
  }
});
afterAll(async () => {
  await feeds?.close();
  await backend?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A Trove on the shared data directory (or database) with the given keys. */
function troveWith(keys: Record<string, string>): Promise<RunningTrove> {
  return startTrove({ DATA_DIR: dataDir, LOGIN_RATE_LIMIT_MAX: '1000', ...backendEnv, ...keys });
}

function cli(keys: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, ...backendEnv, ...keys };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: repoRoot, env, timeout: 50_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

async function sealedKeyIds(trove: RunningTrove): Promise<string[]> {
  const rows = await trove.trove.services.database.db.selectFrom('user_integrations').select('credentials').execute();
  return rows.map((r) => r.credentials.split('.')[1]!);
}

const credentials = { username: FEED_USER, password: FEED_PASSWORD };

it('rotates keys: old records stay readable, new ones use the newest key, reencrypt lets the old key go', { timeout: 60_000 }, async () => {
  // 1. Everything sealed under the old key, nothing in clear on disk.
  let trove = await troveWith({ ENCRYPTION_KEY: b64(oldKey) });
  const client = trove.client();
  const { email, password } = await registerUser(client);
  const first = await client.post('/v1/user-integrations', { integration: 'feed', credentials: { url: feeds.url('/private.xml'), ...credentials } });
  expect(first.status, JSON.stringify(first.body)).toBe(201);
  const firstId = first.body.result.id as string;
  expect(await sealedKeyIds(trove)).toEqual([keyIdOf(oldKey)]);
  const { bytes } = await mainDatabaseDump(trove);
  expect(bytes.length).toBeGreaterThan(0);
  expect(bytes.toString('latin1').includes(FEED_PASSWORD), 'the main database holds the password in clear').toBe(false);
  expect(bytes.toString('latin1').includes(FEED_USER), 'the main database holds the user name in clear').toBe(false);
  await trove.close();

  // 2. A new key first: the old record still opens; a new record is sealed under the new key.
  const both = { ENCRYPTION_KEYS: `${b64(newKey)},${b64(oldKey)}` };
  trove = await troveWith(both);
  expect(await trove.trove.services.userIntegrations.credentialsOf({ id: firstId })).toMatchObject(credentials);
  const again = trove.client();
  expect((await again.post('/v1/auth/login', { email, password })).status).toBe(200);
  await again.delete(`/v1/user-integrations/${firstId}`);
  const second = await again.post('/v1/user-integrations', { integration: 'feed', credentials: { url: feeds.url('/private.xml'), ...credentials } });
  expect(second.status).toBe(201);
  expect((await sealedKeyIds(trove)).sort()).toEqual([keyIdOf(oldKey), keyIdOf(newKey)].sort());
  await trove.close();

  // 3. Without the old key, the record sealed under it cannot be opened…
  trove = await troveWith({ ENCRYPTION_KEY: b64(newKey) });
  await expect(trove.trove.services.userIntegrations.reencryptAll()).rejects.toThrow(/ENCRYPTION_KEYS/);
  await trove.close();

  const refused = await cli({ ENCRYPTION_KEY: b64(newKey) }, 'integrations', 'reencrypt');
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`key id ${keyIdOf(oldKey)}, which is not in ENCRYPTION_KEYS`);

  // 4. …so the operator re-seals with both keys configured, then drops the old one.
  const run = await cli(both, 'integrations', 'reencrypt');
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout.trim()).toBe('Re-encrypted 1 integration record (1 already under the newest key).');
  expect((await cli(both, 'integrations', 'reencrypt')).stdout.trim()).toBe('Re-encrypted 0 integration records (2 already under the newest key).');

  trove = await troveWith({ ENCRYPTION_KEY: b64(newKey) });
  expect(await sealedKeyIds(trove)).toEqual([keyIdOf(newKey), keyIdOf(newKey)]);
  expect(await trove.trove.services.userIntegrations.credentialsOf({ id: second.body.result.id })).toMatchObject(credentials);
  await trove.close();
});
