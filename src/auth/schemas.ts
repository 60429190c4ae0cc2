import { Type } from 'typebox';
import { PASSWORD_MAX_LENGTH } from './password-policy.js';

const Email = Type.String({ format: 'email', description: 'surrounding spaces are trimmed; stored lower-cased' });
const Password = Type.String({ maxLength: PASSWORD_MAX_LENGTH });

export const RegisterBody = Type.Object(
  {
    email: Email,
    password: Type.String({ maxLength: PASSWORD_MAX_LENGTH, description: '10 to 256 characters, not a common password, not containing the email name' }),
    // Printable: at least one visible character and no control characters.
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$' }),
  },
  { additionalProperties: false },
);

export const LoginBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });

export const PasswordChangeBody = Type.Object(
  { currentPassword: Password, newPassword: Password },
  { additionalProperties: false },
);

export const PublicUser = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
});

export const SignedInResponse = Type.Object({
  user: PublicUser,
  csrfToken: Type.Optional(Type.String({ description: 'only when CSRF_ENABLED=true' })),
});

export const CsrfResponse = Type.Object({ csrfToken: Type.String() });
