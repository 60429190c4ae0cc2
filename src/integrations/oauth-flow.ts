import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Config, IntegrationSettings } from '../config.js';
import {
  IntegrationNotConfiguredError,
  NotYourAccountError,
  OAuthNotSupportedError,
} from '../domain-errors.js';
import type { SessionService } from '../sessions/service.js';
import type { SessionStore } from '../sessions/store.js';
import { storeKeyFor } from '../sessions/token.js';
import {
  IntegrationNotConfiguredError as ClientNotConfigured,
  supportsOAuth,
  type IntegrationClass,
  type OAuthOperations,
} from './contract.js';
import { integrationNamed, type UserIntegrationsService } from './service.js';

/** The `reason` codes of the frontend error page (decisions §6). */
export type FailureReason = 'cancelled' | 'invalid_state' | 'exchange_failed';

export type CallbackOutcome =
  | { ok: true; userId: string }
  | { ok: false; reason: FailureReason; userId?: string; detail: string };

interface Logger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface Deps {
  config: Config;
  store: SessionStore;
  sessions: SessionService;
  userIntegrations: UserIntegrationsService;
  now?: () => number;
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** Where the provider sends the browser back (interface §4 rule 6). */
export function redirectUriFor(config: Config, integration: string): string {
  return `${config.oauthRedirectBaseUrl}/v1/user-integration/oauth/${integration}/callback`;
}

/**
 * The unified OAuth 2.0 flow (interface §3.2, §4 rules 6–8, decisions §6). Only the integration's
 * static operations are called; nothing is instantiated and no task runs.
 *
 * Binding: the session cookie is SameSite=Strict, so the browser does not send it with the
 * provider's cross-site redirect back. The callback is tied to the flow's starter instead by a
 * random value in a SameSite=Lax cookie (sent on top-level cross-site GET navigations), whose
 * HMAC is kept with the state, and by the state being kept with the session that started it.
 */
export class OAuthFlowService {
  private readonly now: () => number;

  constructor(private readonly deps: Deps) {
    this.now = deps.now ?? Date.now;
  }

  /** Authorize: returns the provider URL to redirect to and the binding value for the cookie. */
  async begin(input: {
    integration: string;
    callerId: string;
    requestedUserId?: string | undefined;
    sessionKey: string;
  }): Promise<{ url: string; binding: string }> {
    const cls = await oauthIntegration(input.integration);
    if (input.requestedUserId !== undefined && input.requestedUserId !== input.callerId) throw new NotYourAccountError();
    const settings = configuredSettings(this.deps.config, input.integration);

    const state = randomUUID();
    const codeVerifier = base64url(randomBytes(32));
    const codeChallenge = base64url(createHash('sha256').update(codeVerifier).digest());
    const binding = base64url(randomBytes(32));
    let url: string;
    try {
      url = cls.generateAuthorizationUrl({ redirectUri: redirectUriFor(this.deps.config, input.integration), state, codeChallenge, settings });
    } catch (err) {
      if (err instanceof ClientNotConfigured) throw new IntegrationNotConfiguredError(err.variable);
      throw err;
    }
    await this.deps.store.saveOAuthState({
      stateKey: this.hmac(state),
      sessionKey: input.sessionKey,
      userId: input.callerId,
      integration: input.integration,
      codeVerifier,
      bindingKey: this.hmac(binding),
      expiresAt: this.now() + this.deps.config.oauthStateTtl * 1000,
    });
    return { url, binding };
  }

  /**
   * Callback. The state is checked before the provider's `error`: an error answer that no live,
   * bound flow of this browser is waiting for is `invalid_state`, so nobody can make a user's
   * browser show "cancelled" for a flow it never started. A valid state is consumed either way.
   */
  async complete(
    input: { integration: string; state?: string | undefined; code?: string | undefined; error?: string | undefined; binding?: string | undefined },
    log: Logger,
  ): Promise<CallbackOutcome> {
    const cls = await oauthIntegration(input.integration);
    const invalid = (detail: string, userId?: string): CallbackOutcome => ({ ok: false, reason: 'invalid_state', detail, userId });

    if (!input.state) return invalid('no state in the callback');
    const pending = await this.deps.store.takeOAuthState({ stateKey: this.hmac(input.state) });
    if (!pending) return invalid('unknown or already used state');
    const { userId } = pending;
    if (pending.expiresAt < this.now()) return invalid('state expired', userId);
    if (pending.integration !== input.integration) return invalid('state issued for another integration', userId);
    if (!input.binding || !sameKey(this.hmac(input.binding), pending.bindingKey)) {
      return invalid('callback not made by the browser that started the flow', userId);
    }
    if (!(await this.deps.sessions.isLive({ key: pending.sessionKey }))) return invalid('the session that started the flow has ended', userId);

    if (input.error !== undefined) return { ok: false, reason: 'cancelled', userId, detail: `provider answered error=${input.error.slice(0, 100)}` };
    if (!input.code) return { ok: false, reason: 'exchange_failed', userId, detail: 'no code in the callback' };

    try {
      const settings = configuredSettings(this.deps.config, input.integration);
      const redirectUri = redirectUriFor(this.deps.config, input.integration);
      const tokens = await cls.exchangeCodeForTokens({ code: input.code, redirectUri, codeVerifier: pending.codeVerifier, settings });
      const credentials = cls.validateTokens({ tokens, settings });
      const stored = await this.deps.userIntegrations.storeOAuthCredentials({
        userId,
        integration: input.integration,
        credentials: { ...credentials },
      });
      log.info({ userId, integration: input.integration, userIntegrationId: stored.id }, 'integration connected through OAuth');
      return { ok: true, userId };
    } catch (err) {
      // Only the message: our integrations' errors name the failing step and status, never a token or code.
      const detail = err instanceof IntegrationNotConfiguredError ? `${err.variable} is not set` : (err as Error).message;
      log.error({ userId, integration: input.integration, reason: detail }, 'OAuth token exchange failed');
      return { ok: false, reason: 'exchange_failed', userId, detail };
    }
  }

  private hmac(value: string): string {
    return storeKeyFor(this.deps.config.session.secret, value);
  }
}

async function oauthIntegration(name: string): Promise<IntegrationClass & OAuthOperations> {
  const cls = await integrationNamed(name);
  if (!supportsOAuth(cls)) throw new OAuthNotSupportedError();
  return cls;
}

/** The integration's settings, or the error naming the first missing client variable. */
function configuredSettings(config: Config, integration: string): IntegrationSettings {
  const settings = config.integration(integration);
  if (settings.clientId === undefined) throw new IntegrationNotConfiguredError(`${settings.envPrefix}_OAUTH_CLIENT_ID`);
  if (settings.clientSecret === undefined) throw new IntegrationNotConfiguredError(`${settings.envPrefix}_OAUTH_CLIENT_SECRET`);
  return settings;
}

function sameKey(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
