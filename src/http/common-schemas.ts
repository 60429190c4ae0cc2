import { Type } from 'typebox';

export const ErrorSchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    requestId: Type.String({ format: 'uuid' }),
  },
  { $id: 'Error', description: 'Every error answer has this shape' },
);

export const SuccessSchema = Type.Object({ success: Type.Literal(true) });

/**
 * Error answers of a route. Every route using this reaches the session store or the main
 * database, so each may also answer 503 (`Session store unavailable` / `Database unavailable`).
 */
export const errorResponses = (...codes: number[]) =>
  Object.fromEntries([...codes, 503].map((code) => [code, Type.Ref('Error')]));
