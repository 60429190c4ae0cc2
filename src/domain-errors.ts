/**
 * Errors the services throw. Each carries the exact public message of the interface;
 * http/error-handler.ts alone decides the status code.
 */
export class DomainError extends Error {
  override name = this.constructor.name;
}

// The session guard (interface §5.3). Every one of these clears the cookie.
export class NoSessionCookieError extends DomainError {
  constructor() { super('No session cookie'); }
}
export class InvalidSessionError extends DomainError {
  constructor() { super('Invalid session'); }
}
export class SessionExpiredError extends DomainError {
  constructor() { super('Session expired'); }
}
export class SessionUserNotFoundError extends DomainError {
  constructor() { super('User not found'); }
}

export class InvalidCredentialsError extends DomainError {
  constructor() { super('Invalid email or password'); }
}
export class EmailTakenError extends DomainError {
  constructor() { super('Email already registered'); }
}
export class WeakPasswordError extends DomainError {
  constructor(reason: string) { super(`Password too weak: ${reason}`); }
}
export class TooManyLoginAttemptsError extends DomainError {
  constructor(readonly retryAfterSeconds: number) { super('Too many login attempts'); }
}
export class InvalidCsrfTokenError extends DomainError {
  constructor() { super('Invalid CSRF token'); }
}
export class AdminRequiredError extends DomainError {
  constructor() { super('Admin role required'); }
}
export class UserNotFoundError extends DomainError {
  constructor() { super('User not found'); }
}
export class SessionNotFoundError extends DomainError {
  constructor() { super('Session not found'); }
}
export class NotYourSessionError extends DomainError {
  constructor() { super('Not your session'); }
}
/** A request parameter that passed the schema but makes no sense (a forged cursor, say). */
export class InvalidInputError extends DomainError {}

// Integrations (interface §7, decisions §2 and §7).
export class IntegrationNotFoundError extends DomainError {
  constructor() { super('Integration not found'); }
}
export class OAuthNotSupportedError extends DomainError {
  constructor() { super('Integration does not support OAuth'); }
}
/** The public message stays vague; the log line names the missing variable. */
export class IntegrationNotConfiguredError extends DomainError {
  constructor(readonly variable: string) { super('Integration not configured'); }
}
export class NotYourAccountError extends DomainError {
  constructor() { super('Not your account'); }
}
export class OAuthOnlyIntegrationError extends DomainError {
  constructor() { super('Integration connects through OAuth: use /v1/user-integration/oauth/<integration>/authorize'); }
}
export class IntegrationAlreadyConnectedError extends DomainError {
  constructor() { super('Integration already connected'); }
}
export class UserIntegrationNotFoundError extends DomainError {
  constructor() { super('Integration connection not found'); }
}
/** Credentials that fail the manifest's schema or the provider's check; the message says why. */
export class CredentialsInvalidError extends DomainError {}
/**
 * A server Trove depends on (the session store, the main database) cannot be reached or did
 * not answer in time. Answered 503; the request may be retried once the server is back.
 */
export class ServiceUnavailableError extends DomainError {}
export class SessionStoreUnavailableError extends ServiceUnavailableError {
  constructor(options?: { cause?: unknown }) { super('Session store unavailable', options); }
}
export class DatabaseUnavailableError extends ServiceUnavailableError {
  constructor(options?: { cause?: unknown }) { super('Database unavailable', options); }
}
