/**
 * The integration contract of interface §4.1 and §2.6, as types. An integration lives in
 * src/integrations/<name>/index.ts and default-exports a class of type IntegrationClass.
 */
import type { IntegrationSettings } from '../config.js';

export type DataKind = 'email' | 'file' | 'message' | 'feed';

/** One field of a credentials form; `secret` fields are never shown back. */
export interface CredentialField {
  name: string;
  label: string;
  type: 'string' | 'url' | 'password';
  required: boolean;
  secret: boolean;
  description?: string;
}

export interface IntegrationManifest {
  /** The domain name: short, lower case, also the folder name. */
  name: string;
  title: string;
  description: string;
  kinds: DataKind[];
  auth: 'oauth' | 'credentials';
  /** The credentials a person enters (credentials integrations only). */
  credentialFields: CredentialField[];
  /** JSON Schema the credentials are validated against before anything else. */
  credentialsSchema: Record<string, unknown>;
  /** For a future UI (interface §4.1): whether the integration connects through OAuth. */
  oauth?: boolean;
}

export type Credentials = Record<string, unknown>;

/** The validated credentials of an OAuth email provider (interface §2.5). */
export interface OAuthCredentials {
  clientId: string;
  clientSecret: string;
  accessToken: string;
  refreshToken: string;
  /** ISO 8601 */
  expiresAt: string;
}

/** A provider's raw token response: access_token, refresh_token, expires_in and possibly more. */
export type RawTokenResponse = Record<string, unknown>;

export interface TaskPayload {
  emailId?: string | null;
  pageToken?: string | null;
}

export interface Task<Type extends string = string> {
  type: Type;
  payload: TaskPayload;
}

/** One item an integration produced; the search indexer consumes these (a later issue). */
export interface TaskOutput {
  externalId: string;
  kind: DataKind;
  title?: string;
  from?: string;
  to?: string[];
  date?: string;
  url?: string;
  text?: string;
}

export interface TaskResult {
  output: TaskOutput[];
  tasks?: Task[];
}

/** Lets an integration skip content already stored (interface §4.1). */
export type ContentExistsChecker = (input: { externalId: string }) => Promise<boolean>;

/** What an instance is given besides its credentials. */
export interface IntegrationRuntime {
  settings: IntegrationSettings;
  /** Called when the integration renewed its credentials (a refreshed access token), to store them. */
  saveCredentials?: (credentials: Credentials) => Promise<void>;
  /** Network timeout for calls to the provider, milliseconds. */
  timeoutMs?: number;
}

export interface Integration {
  /** Connects; refreshes tokens when needed. */
  initialize(): Promise<void>;
  /** Whether the stored credentials still work. */
  validateAuthentication(): Promise<boolean>;
  runTask(task: Task): Promise<TaskResult>;
  /** Cleans up connections. */
  shutdown(): Promise<void>;
}

/** Thrown by validateAuthentication or validateTokens with a reason a person can act on. */
export class CredentialsRejectedError extends Error {
  override name = 'CredentialsRejectedError';
}

/** Thrown by the OAuth operations when a client id or secret variable is not set. */
export class IntegrationNotConfiguredError extends Error {
  override name = 'IntegrationNotConfiguredError';
  constructor(readonly variable: string) {
    super(`${variable} is not set`);
  }
}

/** The static OAuth operations (interface §4.1), with PKCE added as RFC 9700 recommends. */
export interface OAuthOperations {
  generateAuthorizationUrl(input: {
    redirectUri: string;
    state: string;
    codeChallenge: string;
    settings: IntegrationSettings;
  }): string;
  exchangeCodeForTokens(input: {
    code: string;
    redirectUri: string;
    codeVerifier: string;
    settings: IntegrationSettings;
  }): Promise<RawTokenResponse>;
  validateTokens(input: { tokens: RawTokenResponse; settings: IntegrationSettings }): OAuthCredentials;
}

export interface IntegrationClass extends Partial<OAuthOperations> {
  readonly manifest: IntegrationManifest;
  new (credentials: Credentials, contentExists?: ContentExistsChecker, runtime?: IntegrationRuntime): Integration;
}

/** An integration supports OAuth exactly when it has all three static operations. */
export function supportsOAuth(cls: IntegrationClass): cls is IntegrationClass & OAuthOperations {
  return (
    typeof cls.generateAuthorizationUrl === 'function' &&
    typeof cls.exchangeCodeForTokens === 'function' &&
    typeof cls.validateTokens === 'function'
  );
}
