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

export const errorResponses = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [code, Type.Ref('Error')]));
