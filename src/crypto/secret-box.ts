import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** A short, stable id for a key: which key sealed a record, without revealing the key. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 8);
}

export class UnknownKeyError extends Error {
  override name = 'UnknownKeyError';
  constructor(readonly keyId: string) {
    super(`no configured ENCRYPTION_KEYS entry has id ${keyId}`);
  }
}

/**
 * AES-256-GCM with key ids, for provider tokens at rest. Sealed text:
 * `v1.<keyId>.<iv>.<ciphertext>.<tag>` (base64url parts). The newest key seals; every configured
 * key opens, so ENCRYPTION_KEYS can rotate: old records stay readable until re-sealed.
 */
export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  private readonly current: { id: string; key: Buffer };

  constructor(keys: Buffer[]) {
    const first = keys[0];
    if (!first) throw new Error('SecretBox needs at least one key');
    this.keys = new Map(keys.map((key) => [keyIdOf(key), key]));
    this.current = { id: keyIdOf(first), key: first };
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  /** `aad` binds the sealed text to its record (e.g. the row id), so it cannot be moved to another. */
  seal(plaintext: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.current.id, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  open(sealed: string, aad: string): string {
    const [version, keyId, iv, body, tag] = sealed.split('.');
    if (version !== VERSION || !keyId || !iv || body === undefined || !tag) throw new Error('not a sealed secret');
    const key = this.keys.get(keyId);
    if (!key) throw new UnknownKeyError(keyId);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  keyIdOfSealed(sealed: string): string | undefined {
    return sealed.split('.')[1];
  }
}
