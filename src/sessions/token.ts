import { createHmac, randomUUID } from 'node:crypto';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A fresh cookie value: a random UUID v4, 122 random bits. */
export function newCookieValue(): string {
  return randomUUID();
}

export function looksLikeCookieValue(value: string): boolean {
  return UUID_V4.test(value);
}

/** The store key for a cookie value: an HMAC under SESSION_SECRET, so a leaked store yields no usable cookie. */
export function storeKeyFor(secret: Buffer, cookieValue: string): string {
  return createHmac('sha256', secret).update(cookieValue).digest('base64url');
}
