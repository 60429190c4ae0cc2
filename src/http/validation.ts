import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; depending on the loader its function is the default export or inside it.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@.]+$/;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: false, removeAdditional: false, useDefaults: true, ...options });
  addFormats(ajv);
  // Surrounding spaces are accepted (decisions §2); the services trim before storing.
  ajv.addFormat('email', { type: 'string', validate: (value: string) => value.length <= 320 && EMAIL.test(value.trim()) });
  return ajv;
}

/**
 * Bodies are JSON and validated exactly: a number where a string belongs is an error, not coerced.
 * Query strings and path parameters are text by nature, so their numbers and arrays are coerced.
 */
const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);

function describe(error: ErrorObject, dataVar: string): string {
  const at = `${dataVar}${error.instancePath}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${at}/${String(params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${at}/${String(params.additionalProperty)} is not an allowed field`;
    case 'format':
      return params.format === 'email' ? `${at} must be a valid email address` : `${at} must be a valid ${String(params.format)}`;
    default:
      return `${at} ${error.message ?? 'is invalid'}`;
  }
}

/**
 * A validator for a schema that is data rather than a route's (an integration's credentials),
 * with the same rules as bodies; failures come back as one message naming the field under `at`.
 */
export function compileDataValidator(schema: object, at: string): (data: unknown) => string | undefined {
  const validate = bodyAjv.compile(schema);
  return (data) => (validate(data) ? undefined : (validate.errors ?? []).map((e) => describe(e, at)).join('; ') || `${at} is invalid`);
}

/** Messages that name the field, e.g. `body/email must be a valid email address`. */
export function schemaErrorFormatter(errors: ErrorObject[], dataVar: string): Error {
  return new Error(errors.map((e) => describe(e, dataVar)).join('; '));
}
