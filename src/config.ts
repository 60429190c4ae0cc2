import path from 'node:path';
import { readOrCreateSecret } from './crypto/generated-secrets.js';

/** Thrown for a bad or missing variable; its message always names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type SameSite = 'strict' | 'lax' | 'none';

export interface SessionConfig {
  cookieName: string;
  secret: Buffer;
  maxAge: number;
  idleTimeout: number;
  renewalThreshold: number;
  secure: boolean;
  sameSite: SameSite;
  purgeInterval: number;
  invalidateOnIpChange: boolean;
}

/** `<NAME>_OAUTH_CLIENT_ID` … for one integration; unset values stay undefined. */
export interface IntegrationSettings {
  /** The prefix of its variables, e.g. GMAIL, so errors can name the missing one. */
  envPrefix: string;
  clientId?: string;
  clientSecret?: string;
  authorizeUrl?: string;
  tokenUrl?: string;
  apiBaseUrl?: string;
}

export interface Config {
  nodeEnv: string;
  production: boolean;
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string;
  sessionStoreUrl: string;
  /** Prepended to every Redis key, so several instances (or tests) can share one Redis. */
  sessionStorePrefix: string;
  logLevel: string;
  session: SessionConfig;
  csrfEnabled: boolean;
  loginRateLimit: { max: number; windowMs: number };
  oauthStateTtl: number;
  bodyLimit: number;
  trustProxy: boolean | number | string;
  /** Newest first; the first one encrypts, all of them decrypt. */
  encryptionKeys: Buffer[];
  oauthRedirectBaseUrl: string;
  frontendBaseUrl: string;
  /** Settings of an integration by its domain name (lower case), e.g. `gmail`. */
  integration(name: string): IntegrationSettings;
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function url(env: Env, name: string, fallback: string): string {
  const raw = read(env, name) ?? fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http or https URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** TRUST_PROXY: true/false, a hop count, or a comma list of proxy addresses/CIDRs (Fastify's trustProxy). */
function trustProxy(env: Env): boolean | number | string {
  const raw = read(env, 'TRUST_PROXY');
  if (raw === undefined) return false;
  const lower = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (/^[0-9a-f.:/,\s]+$/i.test(raw)) return raw;
  throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or a list of addresses, got "${raw}"`);
}

function storeUrl(env: Env, name: string, dataDir: string, file: string, schemes: string[]): string {
  const raw = read(env, name) ?? `sqlite:${path.join(dataDir, file)}`;
  const scheme = raw.slice(0, raw.indexOf(':') + 1);
  if (!schemes.includes(scheme)) {
    throw new ConfigError(`${name} must start with ${schemes.join(' or ')}, got "${raw.replace(/\/\/[^@/]*@/, '//***@')}"`);
  }
  return raw;
}

function storePrefix(env: Env): string {
  const raw = read(env, 'SESSION_STORE_PREFIX') ?? 'trove:';
  if (!/^[\w:.-]{1,64}$/.test(raw)) {
    throw new ConfigError(`SESSION_STORE_PREFIX must be 1 to 64 letters, digits or _ : . -, got "${raw}"`);
  }
  return raw;
}

function decodeKey(name: string, raw: string): Buffer {
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 bytes encoded in base64`);
  return key;
}

function encryptionKeys(env: Env, production: boolean, dataDir: string): Buffer[] {
  const list = read(env, 'ENCRYPTION_KEYS');
  if (list !== undefined) return list.split(',').map((k) => decodeKey('ENCRYPTION_KEYS', k.trim()));
  const single = read(env, 'ENCRYPTION_KEY');
  if (single !== undefined) return [decodeKey('ENCRYPTION_KEY', single)];
  if (production) throw new ConfigError('ENCRYPTION_KEY is required in production');
  return [readOrCreateSecret(dataDir, 'encryption-key')];
}

function sessionSecret(env: Env, production: boolean, dataDir: string): Buffer {
  const raw = read(env, 'SESSION_SECRET');
  if (raw !== undefined) {
    if (raw.length < 32) throw new ConfigError('SESSION_SECRET must be at least 32 characters');
    return Buffer.from(raw, 'utf8');
  }
  if (production) throw new ConfigError('SESSION_SECRET is required in production');
  return readOrCreateSecret(dataDir, 'session-secret');
}

const INTEGRATION_VARIABLE = /^([A-Z][A-Z0-9]*)_(OAUTH_CLIENT_ID|OAUTH_CLIENT_SECRET|OAUTH_AUTHORIZE_URL|OAUTH_TOKEN_URL|API_BASE_URL)$/;
const SETTING_OF = {
  OAUTH_CLIENT_ID: 'clientId',
  OAUTH_CLIENT_SECRET: 'clientSecret',
  OAUTH_AUTHORIZE_URL: 'authorizeUrl',
  OAUTH_TOKEN_URL: 'tokenUrl',
  API_BASE_URL: 'apiBaseUrl',
} as const;

/** Every `<INTEGRATION>_OAUTH_*` / `_API_BASE_URL` variable, grouped by integration. */
function integrationSettings(env: Env): (name: string) => IntegrationSettings {
  const byPrefix = new Map<string, IntegrationSettings>();
  for (const name of Object.keys(env)) {
    const match = INTEGRATION_VARIABLE.exec(name);
    const value = read(env, name);
    if (!match || value === undefined) continue;
    const prefix = match[1]!;
    const kind = match[2] as keyof typeof SETTING_OF;
    if (kind !== 'OAUTH_CLIENT_ID' && kind !== 'OAUTH_CLIENT_SECRET') url(env, name, value);
    const settings = byPrefix.get(prefix) ?? { envPrefix: prefix };
    settings[SETTING_OF[kind]] = kind.endsWith('URL') ? value.replace(/\/+$/, '') : value;
    byPrefix.set(prefix, settings);
  }
  return (name) => {
    const prefix = name.toUpperCase();
    return { ...(byPrefix.get(prefix) ?? { envPrefix: prefix }) };
  };
}

/** Reads and checks every setting. Only this module looks at the environment. */
export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = read(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const dataDir = path.resolve(read(env, 'DATA_DIR') ?? './data');

  const oauthRedirectBaseUrl = url(env, 'OAUTH_REDIRECT_BASE_URL', `http://localhost:${port}`);
  if (production && !oauthRedirectBaseUrl.startsWith('https://')) {
    throw new ConfigError('OAUTH_REDIRECT_BASE_URL must use https:// in production');
  }
  const secure = boolean(env, 'SESSION_SECURE', production);
  const sameSite = oneOf(env, 'SESSION_SAME_SITE', 'strict', ['strict', 'lax', 'none'] as const);
  if (sameSite === 'none' && !secure) {
    throw new ConfigError('SESSION_SAME_SITE=none needs SESSION_SECURE=true (browsers drop such cookies otherwise)');
  }

  // Checked before anything is written, so a bad setting never leaves generated files behind.
  const partial = {
    nodeEnv,
    production,
    port,
    host: read(env, 'HOST') ?? '127.0.0.1',
    dataDir,
    databaseUrl: storeUrl(env, 'DATABASE_URL', dataDir, 'trove.db', ['sqlite:', 'postgres:', 'postgresql:']),
    sessionStoreUrl: storeUrl(env, 'SESSION_STORE_URL', dataDir, 'sessions.db', ['sqlite:', 'redis:', 'rediss:']),
    sessionStorePrefix: storePrefix(env),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    csrfEnabled: boolean(env, 'CSRF_ENABLED', false),
    loginRateLimit: {
      max: integer(env, 'LOGIN_RATE_LIMIT_MAX', 5, 1),
      windowMs: integer(env, 'LOGIN_RATE_LIMIT_WINDOW_MS', 60_000, 1),
    },
    oauthStateTtl: integer(env, 'OAUTH_STATE_TTL', 300, 1),
    bodyLimit: integer(env, 'BODY_LIMIT', 1_048_576, 1),
    trustProxy: trustProxy(env),
    oauthRedirectBaseUrl,
    frontendBaseUrl: url(env, 'FRONTEND_BASE_URL', oauthRedirectBaseUrl),
  };
  const sessionTimes = {
    maxAge: integer(env, 'SESSION_MAX_AGE', 604_800, 1),
    idleTimeout: integer(env, 'SESSION_IDLE_TIMEOUT', 86_400, 1),
    renewalThreshold: integer(env, 'SESSION_RENEWAL_THRESHOLD', 86_400, 0),
    purgeInterval: integer(env, 'SESSION_PURGE_INTERVAL', 3_600, 1),
    invalidateOnIpChange: boolean(env, 'SESSION_INVALIDATE_ON_IP_CHANGE', false),
  };

  return {
    ...partial,
    session: {
      cookieName: 'svc_session',
      secret: sessionSecret(env, production, dataDir),
      secure,
      sameSite,
      ...sessionTimes,
    },
    encryptionKeys: encryptionKeys(env, production, dataDir),
    integration: integrationSettings(env),
  };
}
