/** Socket-level failures: the server is down, unreachable, or went away mid-request. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * PostgreSQL SQLSTATEs meaning "try again later", not "your query is wrong": class 08
 * (connection exception), 53300 (too many connections), 57P01-57P03 (shutting down, starting up).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '53300' || code === '57P01' || code === '57P02' || code === '57P03';
}

/** pg's own wording for a lost connection and for its client-side timeouts. */
const PG_MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/, /^Query read timeout/, /Client has encountered a connection error/];

/** True when a pg error says the database is out of reach rather than that the query failed. */
export function isPgConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isUnavailableSqlState(code))) return true;
  if (err instanceof AggregateError && err.errors.some(isPgConnectionFailure)) return true;
  return PG_MESSAGES.some((re) => re.test(err.message));
}
