import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOD_PASSWORD, registerUser, sleep, startTrove, type Client, type RunningTrove } from '../helpers/trove.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
// Each CLI run is a fresh node process loading the server's modules: seconds apiece on a busy 2-core machine.
const SLOW = { timeout: 60_000 };

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the admin CLI as an operator would, in its own process, on the data (directory or servers) of a running Trove. */
function cli(server: RunningTrove, ...args: string[]): Promise<CliResult> {
  return cliWithEnv({}, server, ...args);
}

function cliWithEnv(extraEnv: Record<string, string>, server: RunningTrove, ...args: string[]): Promise<CliResult> {
  // Only what node needs plus where the data is, so a developer's own Trove variables cannot leak in.
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: server.dataDir, ...server.backendEnv, ...extraEnv };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: repoRoot, env, timeout: 50_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function roleOf(client: Client): Promise<string> {
  const res = await client.get('/v1/user/profile');
  expect(res.status).toBe(200);
  return res.body.result.role;
}

describe('admin CLI on the data directory of a running server', SLOW, () => {
  let server: RunningTrove;
  let first: { client: Client; email: string };
  let second: { client: Client; email: string };

  beforeAll(async () => {
    server = await startTrove();
    const makeUser = async () => {
      const client = server.client();
      const { email } = await registerUser(client);
      return { client, email };
    };
    first = await makeUser();
    second = await makeUser();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('users list shows every user with their role', async () => {
    const res = await cli(server, 'users', 'list');
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+EMAIL\s+NAME\s+ROLE\s+CREATED$/);
    expect(lines.find((l) => l.includes(first.email))).toMatch(/\badmin\b/);
    expect(lines.find((l) => l.includes(second.email))).toMatch(/\buser\b/);
  });

  it('grant-admin and revoke-admin change the role the server sees, whatever the email case', async () => {
    const granted = await cli(server, 'users', 'grant-admin', `  ${second.email.toUpperCase()} `);
    expect(granted).toMatchObject({ code: 0, stderr: '' });
    expect(granted.stdout).toContain(`${second.email} is now an admin`);
    expect(await roleOf(second.client)).toBe('admin');

    const revoked = await cli(server, 'users', 'revoke-admin', second.email);
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    expect(await roleOf(second.client)).toBe('user');
  });

  it('revoking the last admin works but warns on stderr', async () => {
    const res = await cli(server, 'users', 'revoke-admin', first.email);
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/no admin is left/);
    expect(await roleOf(first.client)).toBe('user');
  });

  it('fails with one line and no stack: exit 1 for an unknown email or bad configuration, 2 for an unknown command', async () => {
    const [unknownUser, badConfig, unknownCommand] = await Promise.all([
      cli(server, 'users', 'grant-admin', 'nobody@example.com'),
      cliWithEnv({ NODE_ENV: 'production', OAUTH_REDIRECT_BASE_URL: 'https://trove.example.com', SESSION_SECRET: '' }, server, 'users', 'list'),
      cli(server, 'users', 'frobnicate'),
    ]);
    expect(unknownUser.code).toBe(1);
    expect(unknownUser.stderr.trim()).toBe('trove: no user with email nobody@example.com');
    expect(badConfig.code).toBe(1);
    expect(badConfig.stderr.trim()).toMatch(/^trove: [^\n]*SESSION_SECRET[^\n]*$/);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toMatch(/unknown command "users frobnicate"/);
    expect(unknownCommand.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('users delete ends the user’s sessions at once and stops them logging in', async () => {
    const res = await cli(server, 'users', 'delete', second.email);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`Deleted ${second.email}; ended 1 session.`);

    const profile = await second.client.get('/v1/user/profile');
    expect(profile.status).toBe(401);
    expect(['User not found', 'Invalid session']).toContain(profile.body.message);
    const login = await server.client().post('/v1/auth/login', { email: second.email, password: GOOD_PASSWORD });
    expect(login.status).toBe(401);
  });
});

describe('admin CLI: sessions purge', SLOW, () => {
  let server: RunningTrove;
  beforeAll(async () => {
    server = await startTrove({ SESSION_MAX_AGE: '1', SESSION_RENEWAL_THRESHOLD: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('removes expired sessions and prints how many', async () => {
    const client = server.client();
    await registerUser(client);
    const cookie = (await client.sessionCookie())!;
    await sleep(1_200);

    const res = await cli(server, 'sessions', 'purge');
    expect(res.code).toBe(0);
    const purged = Number(/Purged (\d+) expired session/.exec(res.stdout)?.[1]);
    expect(purged).toBeGreaterThan(0);
    // Gone from the store, not merely expired: the guard no longer finds it at all. The jar has
    // dropped the cookie by now (Max-Age=1), so it is sent by hand, as a stale client would.
    await client.setSessionCookie(cookie);
    const after = await client.get('/v1/user/profile');
    expect(after.status).toBe(401);
    expect(after.body.message).toBe('Invalid session');
  });
});
