import type { IntegrationSettings } from '../../config.js';
import { IntegrationNotConfiguredError } from '../contract.js';

/** Google's real endpoints; GMAIL_OAUTH_AUTHORIZE_URL, GMAIL_OAUTH_TOKEN_URL and GMAIL_API_BASE_URL override them. */
const DEFAULTS = {
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  apiBaseUrl: 'https://gmail.googleapis.com',
};

export const SCOPE = 'https://www.googleapis.com/auth/gmail.readonly';

export const DEFAULT_TIMEOUT_MS = 10_000;

export function endpoints(settings: IntegrationSettings) {
  return {
    authorizeUrl: settings.authorizeUrl ?? DEFAULTS.authorizeUrl,
    tokenUrl: settings.tokenUrl ?? DEFAULTS.tokenUrl,
    apiBaseUrl: settings.apiBaseUrl ?? DEFAULTS.apiBaseUrl,
  };
}

export function clientOf(settings: IntegrationSettings): { clientId: string; clientSecret: string } {
  if (settings.clientId === undefined) throw new IntegrationNotConfiguredError(`${settings.envPrefix}_OAUTH_CLIENT_ID`);
  if (settings.clientSecret === undefined) throw new IntegrationNotConfiguredError(`${settings.envPrefix}_OAUTH_CLIENT_SECRET`);
  return { clientId: settings.clientId, clientSecret: settings.clientSecret };
}

/**
 * A token endpoint request (RFC 6749 §4.1.3, §6), client authenticated with client_secret_post.
 * Errors carry the status and the OAuth `error` code only: never the body, which could echo a code.
 */
export async function postToTokenEndpoint(
  tokenUrl: string,
  form: Record<string, string>,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    throw new Error(`token endpoint unreachable: ${(err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message}`);
  }
  const body = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (!res.ok) {
    const code = typeof body?.error === 'string' ? body.error.slice(0, 60) : 'no error code';
    throw new Error(`token endpoint answered ${res.status} (${code})`);
  }
  if (!body || typeof body !== 'object') throw new Error('token endpoint answered something that is not a JSON object');
  return body;
}
