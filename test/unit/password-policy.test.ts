import { describe, expect, it } from 'vitest';
import { passwordWeakness } from '../../src/auth/password-policy.js';

const email = 'margaret@example.com';
const weakness = (password: string, forEmail = email) => passwordWeakness({ password, email: forEmail });

describe('password policy (decisions §5)', () => {
  it('rejects fewer than 10 characters and accepts exactly 10', () => {
    expect(weakness('vT7#kq2Lp')).toMatch(/at least 10 characters/);
    expect(weakness('vT7#kq2Lpz')).toBeUndefined();
  });

  it('counts characters as code points, so emoji are not counted twice', () => {
    const five = '🔑🌲🐙🎲🚲'; // 10 UTF-16 units, 5 characters
    expect(five.length).toBe(10);
    expect(weakness(five)).toMatch(/at least 10 characters/);
    expect(weakness(five + '🍋🧭🦉🪁🎈')).toBeUndefined();
  });

  it('rejects common passwords whatever their case', () => {
    for (const common of ['password123', 'PASSWORD123', 'Basketball', 'qwertyuiop']) {
      expect(weakness(common), common).toMatch(/commonly used/);
    }
  });

  it("rejects a password containing the email's local part in any case", () => {
    expect(weakness('xx-Margaret-2024!')).toMatch(/email/);
    expect(weakness('MARGARET#coastline9')).toMatch(/email/);
    expect(weakness('margaret#coastline9', 'Other.Person@example.com')).toBeUndefined();
  });

  it('ignores a local part under 3 characters, which would ban almost everything', () => {
    expect(weakness('Kalamata-coast9', 'al@example.com')).toBeUndefined(); // contains "al"
  });
});
