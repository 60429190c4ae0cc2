import type { IntegrationSettings } from '../../config.js';
import {
  CredentialsRejectedError,
  type ContentExistsChecker,
  type Credentials,
  type Integration,
  type IntegrationRuntime,
  type OAuthCredentials,
  type RawTokenResponse,
  type Task,
  type TaskResult,
} from '../contract.js';
import { clientOf, DEFAULT_TIMEOUT_MS, endpoints, postToTokenEndpoint, SCOPE } from './endpoints.js';
import { manifest } from './manifest.js';

/** Refresh a little before the provider would refuse the token. */
const EXPIRY_MARGIN_MS = 60_000;

export type GmailTaskType = 'start' | 'getEmailList' | 'downloadEmail';

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new CredentialsRejectedError(`token response: ${field} is missing or not a string`);
  return value;
}

function lifetimeSeconds(value: unknown): number {
  const seconds = typeof value === 'string' ? Number(value) : value;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new CredentialsRejectedError('token response: expires_in is missing or not a positive number');
  }
  return seconds;
}

function asOAuthCredentials(credentials: Credentials): OAuthCredentials {
  const { clientId, clientSecret, accessToken, refreshToken, expiresAt } = credentials;
  for (const [field, value] of Object.entries({ clientId, clientSecret, accessToken, refreshToken, expiresAt })) {
    if (typeof value !== 'string' || value === '') throw new CredentialsRejectedError(`stored credentials: ${field} is missing`);
  }
  return credentials as unknown as OAuthCredentials;
}

/** Gmail, read-only, connected through Google's OAuth 2.0 (interface §4.1). */
export default class Gmail implements Integration {
  static readonly manifest = manifest;

  static generateAuthorizationUrl(input: { redirectUri: string; state: string; codeChallenge: string; settings: IntegrationSettings }): string {
    const { clientId } = clientOf(input.settings);
    const url = new URL(endpoints(input.settings).authorizeUrl);
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: input.redirectUri,
      response_type: 'code',
      scope: SCOPE,
      // A refresh token, and a new one on every consent, so a reconnect always yields one.
      access_type: 'offline',
      prompt: 'consent',
      state: input.state,
      code_challenge: input.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    return url.toString();
  }

  static exchangeCodeForTokens(input: {
    code: string;
    redirectUri: string;
    codeVerifier: string;
    settings: IntegrationSettings;
  }): Promise<RawTokenResponse> {
    const { clientId, clientSecret } = clientOf(input.settings);
    return postToTokenEndpoint(endpoints(input.settings).tokenUrl, {
      grant_type: 'authorization_code',
      code: input.code,
      redirect_uri: input.redirectUri,
      code_verifier: input.codeVerifier,
      client_id: clientId,
      client_secret: clientSecret,
    });
  }

  static validateTokens(input: { tokens: RawTokenResponse; settings: IntegrationSettings }): OAuthCredentials {
    const { clientId, clientSecret } = clientOf(input.settings);
    const { tokens } = input;
    if (typeof tokens.token_type === 'string' && tokens.token_type.toLowerCase() !== 'bearer') {
      throw new CredentialsRejectedError('token response: token_type is not Bearer');
    }
    return {
      clientId,
      clientSecret,
      accessToken: text(tokens.access_token, 'access_token'),
      refreshToken: text(tokens.refresh_token, 'refresh_token'),
      expiresAt: new Date(Date.now() + lifetimeSeconds(tokens.expires_in) * 1000).toISOString(),
    };
  }

  private credentials: OAuthCredentials;
  private readonly timeoutMs: number;
  private readonly api: ReturnType<typeof endpoints>;

  constructor(
    credentials: Credentials,
    // Used by the e-mail download of the sync issue, to skip messages already stored.
    private readonly contentExists?: ContentExistsChecker,
    private readonly runtime?: IntegrationRuntime,
  ) {
    this.credentials = asOAuthCredentials(credentials);
    this.timeoutMs = runtime?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.api = endpoints(runtime?.settings ?? { envPrefix: 'GMAIL' });
  }

  /** Renews an expired (or nearly expired) access token with the refresh token, and has it stored. */
  async initialize(): Promise<void> {
    if (Date.parse(this.credentials.expiresAt) - EXPIRY_MARGIN_MS > Date.now()) return;
    const { clientId, clientSecret, refreshToken } = this.credentials;
    const tokens = await postToTokenEndpoint(
      this.api.tokenUrl,
      { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret },
      this.timeoutMs,
    );
    this.credentials = {
      ...this.credentials,
      accessToken: text(tokens.access_token, 'access_token'),
      // Google usually keeps the refresh token; a provider that rotates it sends a new one.
      refreshToken: typeof tokens.refresh_token === 'string' && tokens.refresh_token !== '' ? tokens.refresh_token : refreshToken,
      expiresAt: new Date(Date.now() + lifetimeSeconds(tokens.expires_in) * 1000).toISOString(),
    };
    await this.runtime?.saveCredentials?.({ ...this.credentials });
  }

  /** Asks Gmail for the account's profile: the cheapest call that proves the token works. */
  async validateAuthentication(): Promise<boolean> {
    const res = await fetch(`${this.api.apiBaseUrl}/gmail/v1/users/me/profile`, {
      headers: { authorization: `Bearer ${this.credentials.accessToken}`, accept: 'application/json' },
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    await res.body?.cancel();
    if (res.status === 401 || res.status === 403) return false;
    if (!res.ok) throw new Error(`Gmail profile endpoint answered ${res.status}`);
    return true;
  }

  /**
   * Only the first step of a sync exists yet: `start` hands over to `getEmailList`. Listing and
   * downloading messages arrive with the task system (the next issue); until then they fail
   * loudly instead of pretending to have synced nothing.
   */
  async runTask(task: Task): Promise<TaskResult> {
    if (task.type === 'start') return { output: [], tasks: [{ type: 'getEmailList', payload: { pageToken: null } }] };
    throw new Error(`Gmail task "${task.type}" is not implemented yet (it arrives with the task system)`);
  }

  async shutdown(): Promise<void> {
    // Nothing held open: every call is a single fetch.
  }
}
