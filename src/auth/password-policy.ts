import { dictionary } from '@zxcvbn-ts/language-common';

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 256;

let common: Set<string> | undefined;

/** The common-password list (about 49,000 entries), kept only from the minimum length up. */
function commonPasswords(): Set<string> {
  common ??= new Set(
    (dictionary['passwords-common'] as string[]).filter((p) => p.length >= PASSWORD_MIN_LENGTH).map((p) => p.toLowerCase()),
  );
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
