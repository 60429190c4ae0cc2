import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AdminRequiredError,
  CredentialsInvalidError,
  DatabaseUnavailableError,
  DomainError,
  EmailTakenError,
  IntegrationAlreadyConnectedError,
  IntegrationNotConfiguredError,
  IntegrationNotFoundError,
  InvalidCredentialsError,
  InvalidCsrfTokenError,
  InvalidInputError,
  InvalidSessionError,
  NoSessionCookieError,
  NotYourAccountError,
  NotYourSessionError,
  OAuthNotSupportedError,
  OAuthOnlyIntegrationError,
  SessionExpiredError,
  ServiceUnavailableError,
  SessionNotFoundError,
  SessionStoreUnavailableError,
  SessionUserNotFoundError,
  TooManyLoginAttemptsError,
  UserIntegrationNotFoundError,
  UserNotFoundError,
  WeakPasswordError,
} from '../domain-errors.js';
import { HashingAbandonedError } from '../crypto/passwords.js';
import { OutageLog } from './outage-log.js';
import { clearSessionCookie } from './session-cookie.js';

type ErrorClass = new (...args: never[]) => DomainError;

/** The one place that turns a domain error into an HTTP status (decisions §2). */
const statusOf = new Map<ErrorClass, number>([
  [NoSessionCookieError, 401],
  [InvalidSessionError, 401],
  [SessionExpiredError, 401],
  [SessionUserNotFoundError, 401],
  [InvalidCredentialsError, 401],
  [InvalidInputError, 400],
  [WeakPasswordError, 400],
  [OAuthNotSupportedError, 400],
  [OAuthOnlyIntegrationError, 400],
  [CredentialsInvalidError, 400],
  [InvalidCsrfTokenError, 403],
  [NotYourSessionError, 403],
  [AdminRequiredError, 403],
  [NotYourAccountError, 403],
  [UserNotFoundError, 404],
  [SessionNotFoundError, 404],
  [IntegrationNotFoundError, 404],
  [UserIntegrationNotFoundError, 404],
  [EmailTakenError, 409],
  [IntegrationAlreadyConnectedError, 409],
  [IntegrationNotConfiguredError, 503],
  [TooManyLoginAttemptsError, 429],
  [SessionStoreUnavailableError, 503],
  [DatabaseUnavailableError, 503],
]);

const guardErrors: ErrorClass[] = [NoSessionCookieError, InvalidSessionError, SessionExpiredError, SessionUserNotFoundError];

export function isGuardError(err: unknown): boolean {
  return guardErrors.some((cls) => err instanceof cls);
}

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  requestId: string;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, statusCode: number, message: string): FastifyReply {
  const body: ErrorBody = { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, requestId: request.id };
  return reply.code(statusCode).type('application/json; charset=utf-8').send(body);
}

export function registerErrorHandling(app: FastifyInstance): void {
  const outages = new OutageLog();
  app.setErrorHandler((err: FastifyError | DomainError, request, reply) => {
    if (err instanceof HashingAbandonedError) {
      request.log.info('client left before its password could be checked; work skipped');
      return sendError(request, reply, 499, 'Client closed request');
    }
    if (err instanceof DomainError) {
      const status = statusOf.get(err.constructor as ErrorClass) ?? 500;
      if (isGuardError(err)) clearSessionCookie(reply, app.troveConfig.session);
      if (err instanceof TooManyLoginAttemptsError) reply.header('retry-after', String(err.retryAfterSeconds));
      // Expected while a server is down: no stack, and one log line per outage rather than per request.
      if (err instanceof ServiceUnavailableError) outages.report(request.log, err);
      if (status === 500) request.log.error({ err }, 'domain error without a status');
      if (err instanceof IntegrationNotConfiguredError) {
        request.log.error({ variable: err.variable }, `integration not configured: ${err.variable} is not set`);
      }
      return sendError(request, reply, status, status === 500 ? 'Internal Server Error' : err.message);
    }
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) {
      // The stack goes to the log only; the client sees the request id to quote.
      request.log.error({ err }, 'request failed');
      return sendError(request, reply, status, STATUS_CODES[status] ?? 'Internal Server Error');
    }
    if (status === 413) return sendError(request, reply, 413, `Request body is larger than ${app.troveConfig.bodyLimit} bytes`);
    if (status === 415) return sendError(request, reply, 415, 'Unsupported Media Type: send JSON with Content-Type: application/json');
    return sendError(request, reply, status, err.message);
  });

  app.setNotFoundHandler((request, reply) => sendError(request, reply, 404, 'Not found'));
}

/**
 * Requests Node's HTTP parser refuses (headers over 16 KiB, broken syntax) never reach Fastify;
 * they still get the error shape and a request id, written straight to the socket.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  const statusCode = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'HPE_URI_TOO_LONG' ? 414 : 400;
  const requestId = randomUUID();
  const message = statusCode === 431 ? 'Request headers are too large' : statusCode === 414 ? 'URL is too long' : 'Malformed HTTP request';
  const body = JSON.stringify({ statusCode, error: STATUS_CODES[statusCode], message, requestId });
  socket.end(
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
