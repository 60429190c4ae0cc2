import { Type, type Static } from 'typebox';
import { InvalidInputError } from '../domain-errors.js';
import type { PageRequest } from '../paging.js';

const IdList = Type.Array(Type.String({ maxLength: 4000 }), {
  maxItems: 50,
  description: 'comma-separated ids; the parameter may also repeat',
});

/** The query every list accepts (interface §4.2, decisions §3). */
export const ListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 500 })),
    inIds: Type.Optional(IdList),
    ninIds: Type.Optional(IdList),
  },
  { additionalProperties: false },
);
export type ListQuery = Static<typeof ListQuery>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function ids(name: string, values: string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const list = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  const bad = list.find((id) => !UUID.test(id));
  if (bad !== undefined) throw new InvalidInputError(`querystring/${name} must hold UUIDs, got "${bad.slice(0, 60)}"`);
  if (list.length > 500) throw new InvalidInputError(`querystring/${name} may hold at most 500 ids`);
  return list.map((id) => id.toLowerCase());
}

export function pageRequest(query: ListQuery): PageRequest {
  return { limit: query.limit, cursor: query.cursor, inIds: ids('inIds', query.inIds), ninIds: ids('ninIds', query.ninIds) };
}
