import type { FastifyReply } from 'fastify';
import type { SessionConfig } from '../config.js';

/** Interface §5.2: httpOnly, Secure per config, SameSite per config, path /, no Domain. */
function attributes(config: SessionConfig) {
  return { httpOnly: true, secure: config.secure, sameSite: config.sameSite, path: '/' } as const;
}

export function setSessionCookie(reply: FastifyReply, config: SessionConfig, value: string): void {
  reply.setCookie(config.cookieName, value, { ...attributes(config), maxAge: config.maxAge });
}

/** Deletes the cookie in the browser: an empty value that expired in the past. */
export function clearSessionCookie(reply: FastifyReply, config: SessionConfig): void {
  reply.setCookie(config.cookieName, '', { ...attributes(config), expires: new Date(0), maxAge: 0 });
}
