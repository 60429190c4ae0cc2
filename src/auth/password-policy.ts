import { createRequire } from 'node:module';

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 256;

const LIST_MODULE = '@zxcvbn-ts/language-common/dist/passwords.json.cjs';

let common: Set<string> | undefined;

/**
 * The common-password list (about 49,000 entries from zxcvbn-ts), kept only from the minimum
 * length up (about 1,600). It is loaded on first use through require and dropped from the module
 * cache, so the full list does not stay in memory on a small board.
 */
function commonPasswords(): Set<string> {
  if (common) return common;
  const require = createRequire(import.meta.url);
  const loaded = require(LIST_MODULE) as string[] | { default: string[] };
  const list = Array.isArray(loaded) ? loaded : loaded.default;
  common = new Set(list.filter((p) => p.length >= PASSWORD_MIN_LENGTH).map((p) => p.toLowerCase()));
  delete require.cache[require.resolve(LIST_MODULE)];
  return common;
}

/**
 * Returns why a password is too weak, or undefined when it is acceptable (decisions §5).
 * The local part of the email counts only from 3 characters on: a one-letter name would ban
 * nearly every password without making any of them safer.
 */
export function passwordWeakness(input: { password: string; email: string }): string | undefined {
  const { password } = input;
  if ([...password].length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  const lower = password.toLowerCase();
  if (commonPasswords().has(lower)) return 'it is a commonly used password';
  const localPart = input.email.split('@')[0]?.toLowerCase() ?? '';
  if (localPart.length >= 3 && lower.includes(localPart)) return 'it contains your email address';
  return undefined;
}
