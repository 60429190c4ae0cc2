import type { CompiledQuery } from 'kysely';
import type { PreparedQuery } from './database.js';

/**
 * A query compiled once, run by `run` with each call's values. The values must match the built
 * query's placeholders one for one: a missing one would silently bind as NULL.
 */
export function preparedQuery<Row>(
  compiled: CompiledQuery<Row>,
  run: (parameters: readonly unknown[]) => Promise<Row[]> | Row[],
): PreparedQuery<Row> {
  const expected = compiled.parameters.length;
  return async (parameters) => {
    if (parameters.length !== expected) throw new Error(`prepared query takes ${expected} parameters, got ${parameters.length}`);
    return run(parameters);
  };
}
