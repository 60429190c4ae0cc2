/** The same migrations on PostgreSQL, run by the CLI before any server, with PostgreSQL's own types. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServicesBackend, type ServicesBackend } from '../helpers/backends.js';
import { registerUser, startTrove } from '../helpers/trove.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

let backend: ServicesBackend;
let dataDir: string;
beforeAll(async () => {
  backend = await createServicesBackend();
  dataDir = mkdtempSync(path.join(tmpdir(), 'trove-migrate-'));
});
afterAll(async () => {
  await backend?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

function migrate(): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, ...backend.env };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], { cwd: repoRoot, env, timeout: 50_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

it('trove migrate brings an empty PostgreSQL database up to date, once; a server then starts on it', { timeout: 90_000 }, async () => {
  const first = await migrate();
  expect(first.stderr).toBe('');
  expect(first.stdout.trim()).toBe('Applied 2 migrations: 0001-users, 0002-user-integrations');
  expect((await migrate()).stdout.trim()).toBe('Database schema already up to date.');

  const client = new pg.Client({ connectionString: backend.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema = 'public' AND column_name IN ('created_at', 'deleted_at', 'last_sync_at') ORDER BY 1, 2`,
    );
    expect(rows.length).toBe(5);
    for (const row of rows) expect(row.data_type).toBe('timestamp with time zone');
  } finally {
    await client.end();
  }

  const server = await startTrove({ ...backend.env });
  try {
    const client = server.client();
    await registerUser(client);
    const profile = await client.get('/v1/user/profile');
    expect(profile.body.result.role).toBe('admin');
    expect(Date.parse(profile.body.result.createdAt)).not.toBeNaN();
  } finally {
    await server.close();
  }
});
