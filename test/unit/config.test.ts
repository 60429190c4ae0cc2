import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'trove-config-'));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const production = () => ({
  NODE_ENV: 'production',
  DATA_DIR: dataDir,
  SESSION_SECRET: randomBytes(32).toString('base64'),
  ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  OAUTH_REDIRECT_BASE_URL: 'https://trove.example.com',
});

function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig defaults (decisions §1)', () => {
  it('match the documented values', () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    expect(config).toMatchObject({
      nodeEnv: 'development',
      production: false,
      port: 3000,
      host: '127.0.0.1',
      dataDir,
      databaseUrl: `sqlite:${path.join(dataDir, 'trove.db')}`,
      sessionStoreUrl: `sqlite:${path.join(dataDir, 'sessions.db')}`,
      sessionStorePrefix: 'trove:',
      csrfEnabled: false,
      loginRateLimit: { max: 5, windowMs: 60_000 },
      oauthStateTtl: 300,
      bodyLimit: 1_048_576,
      trustProxy: false,
      oauthRedirectBaseUrl: 'http://localhost:3000',
      frontendBaseUrl: 'http://localhost:3000',
    });
    expect(config.session).toMatchObject({
      cookieName: 'svc_session',
      maxAge: 604_800,
      idleTimeout: 86_400,
      renewalThreshold: 86_400,
      secure: false,
      sameSite: 'strict',
      purgeInterval: 3_600,
      invalidateOnIpChange: false,
    });
  });

  it('take PostgreSQL and Redis URLs, and a key prefix of one\'s own', () => {
    const config = loadConfig({
      DATA_DIR: dataDir,
      DATABASE_URL: 'postgres://trove:secret@db:5432/trove',
      SESSION_STORE_URL: 'redis://cache:6379/2',
      SESSION_STORE_PREFIX: 'trove-eu:',
    });
    expect(config).toMatchObject({
      databaseUrl: 'postgres://trove:secret@db:5432/trove',
      sessionStoreUrl: 'redis://cache:6379/2',
      sessionStorePrefix: 'trove-eu:',
    });
  });

  it('make the cookie Secure in production', () => {
    expect(loadConfig(production()).session.secure).toBe(true);
  });

  it('take small values, so expiry can be tested in real time, and 0 to turn renewal off', () => {
    const config = loadConfig({ DATA_DIR: dataDir, SESSION_MAX_AGE: '1', SESSION_IDLE_TIMEOUT: '1', SESSION_RENEWAL_THRESHOLD: '0' });
    expect(config.session).toMatchObject({ maxAge: 1, idleTimeout: 1, renewalThreshold: 0 });
  });
});

describe('loadConfig rejects bad values, naming the variable', () => {
  it.each([
    ['SESSION_MAX_AGE', 'abc'],
    ['SESSION_MAX_AGE', '0'],
    ['SESSION_SAME_SITE', 'weird'],
    ['LOGIN_RATE_LIMIT_MAX', '0'],
    ['PORT', '70000'],
    ['SESSION_SECURE', 'maybe'],
    ['DATABASE_URL', 'mysql://db/trove'],
    ['SESSION_STORE_URL', 'memcached://cache:11211'],
    ['SESSION_STORE_PREFIX', 'has spaces'],
    ['OAUTH_REDIRECT_BASE_URL', 'not a url'],
    ['ENCRYPTION_KEY', 'dG9vIHNob3J0'],
  ])('%s=%s', (name, value) => {
    expect(configError({ DATA_DIR: dataDir, [name]: value }).message).toContain(name);
  });

  it('SESSION_SAME_SITE=none without a Secure cookie', () => {
    expect(configError({ DATA_DIR: dataDir, SESSION_SAME_SITE: 'none' }).message).toContain('SESSION_SECURE');
  });

  it('before writing anything into DATA_DIR', () => {
    const fresh = path.join(dataDir, 'not-yet');
    configError({ DATA_DIR: fresh, SESSION_MAX_AGE: 'abc' });
    expect(existsSync(fresh)).toBe(false);
  });
});

describe('loadConfig in production', () => {
  it('needs SESSION_SECRET, of at least 32 characters', () => {
    expect(configError({ ...production(), SESSION_SECRET: undefined }).message).toContain('SESSION_SECRET');
    expect(configError({ ...production(), SESSION_SECRET: 'too-short-secret' }).message).toContain('SESSION_SECRET');
  });

  it('needs ENCRYPTION_KEY', () => {
    expect(configError({ ...production(), ENCRYPTION_KEY: undefined }).message).toContain('ENCRYPTION_KEY');
  });

  it('needs an https:// OAUTH_REDIRECT_BASE_URL', () => {
    expect(configError({ ...production(), OAUTH_REDIRECT_BASE_URL: 'http://trove.example.com' }).message).toContain(
      'OAUTH_REDIRECT_BASE_URL',
    );
  });

  it('never generates secrets', () => {
    loadConfig(production());
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe('generated secrets in development', () => {
  it('are made once, owner-only, and reused by every later start', () => {
    const first = loadConfig({ DATA_DIR: dataDir });
    const second = loadConfig({ DATA_DIR: dataDir });
    expect(second.session.secret.equals(first.session.secret)).toBe(true);
    expect(second.encryptionKeys[0]!.equals(first.encryptionKeys[0]!)).toBe(true);
    expect(first.session.secret.length).toBe(32);
    expect(first.encryptionKeys[0]!.length).toBe(32);
    expect(first.session.secret.equals(first.encryptionKeys[0]!)).toBe(false);

    for (const file of ['session-secret', 'encryption-key']) {
      expect(statSync(path.join(dataDir, file)).mode & 0o777, file).toBe(0o600);
    }
  });

  it('differ between data directories', () => {
    const other = mkdtempSync(path.join(tmpdir(), 'trove-config-'));
    try {
      expect(loadConfig({ DATA_DIR: other }).session.secret.equals(loadConfig({ DATA_DIR: dataDir }).session.secret)).toBe(false);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('give way to SESSION_SECRET and ENCRYPTION_KEY when those are set', () => {
    const key = randomBytes(32);
    const config = loadConfig({ DATA_DIR: dataDir, SESSION_SECRET: 's'.repeat(32), ENCRYPTION_KEY: key.toString('base64') });
    expect(config.session.secret.toString('utf8')).toBe('s'.repeat(32));
    expect(config.encryptionKeys[0]!.equals(key)).toBe(true);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
