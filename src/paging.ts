import { InvalidInputError } from './domain-errors.js';

export interface Page<T> {
  results: T[];
  total: number;
  nextCursor: string | null;
}

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
  inIds?: string[] | undefined;
  ninIds?: string[] | undefined;
}

interface Ordered {
  id: string;
  /** Sort key, newest first. */
  createdAt: number;
}

function encodeCursor(item: Ordered): string {
  return Buffer.from(JSON.stringify([item.createdAt, item.id])).toString('base64url');
}

function decodeCursor(cursor: string): Ordered {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
  } catch {
    // falls through to the error below
  }
  throw new InvalidInputError('querystring/cursor is not a cursor this service issued');
}

function before(a: Ordered, b: Ordered): boolean {
  return a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id);
}

/**
 * Filters (inIds / ninIds), orders newest first and pages a small in-memory list, such as one
 * user's sessions. The cursor is the position of the last item seen, so deletions between pages
 * never make a page skip or repeat an item.
 */
export function pageOf<T extends Ordered>(items: T[], request: PageRequest): Page<T> {
  const inIds = request.inIds && new Set(request.inIds);
  const ninIds = request.ninIds && new Set(request.ninIds);
  const matching = items
    .filter((item) => (!inIds || inIds.has(item.id)) && (!ninIds || !ninIds.has(item.id)))
    .sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  const rest = after ? matching.filter((item) => before(after, item)) : matching;
  const results = rest.slice(0, request.limit);
  const last = results[results.length - 1];
  return {
    results,
    total: matching.length,
    nextCursor: rest.length > results.length && last ? encodeCursor(last) : null,
  };
}
