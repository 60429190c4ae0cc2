/** Fetches a feed's bytes with bounds a Raspberry Pi can afford: a deadline and a size cap. */

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

const USER_AGENT = 'Trove/0.1 (self-hosted personal search; feed reader)';
const ACCEPT =
  'application/rss+xml, application/atom+xml, application/rdf+xml, application/feed+json;q=0.9, ' +
  'application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1';

/** A failure to fetch, with a reason a person can act on. `auth` marks a refused username or password. */
export class FeedFetchError extends Error {
  override name = 'FeedFetchError';
  constructor(
    message: string,
    readonly auth = false,
  ) {
    super(message);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

export interface FetchFeedInput {
  url: URL;
  username?: string;
  password?: string;
  timeoutMs: number;
  maxBytes: number;
  /** Aborts with the instance (shutdown). */
  signal?: AbortSignal;
}

export async function fetchFeed(input: FetchFeedInput): Promise<string> {
  const timeout = AbortSignal.timeout(input.timeoutMs);
  const signal = input.signal ? AbortSignal.any([timeout, input.signal]) : timeout;
  try {
    const { response, sentLogin } = await follow(input, signal);
    if (!response.ok) {
      await response.body?.cancel();
      throw statusError(response.status, sentLogin);
    }
    const bytes = await readCapped(response, input.maxBytes);
    return decode(bytes, response.headers.get('content-type'));
  } catch (error) {
    throw explain(error, timeout, input);
  }
}

/**
 * Follows redirects by hand rather than with fetch's own: so that a redirect elsewhere than http
 * or https gets a reason of its own, and the login is sent only to the origin it was given for.
 */
async function follow(input: FetchFeedInput, signal: AbortSignal): Promise<{ response: Response; sentLogin: boolean }> {
  let url = input.url;
  for (let hop = 0; ; hop++) {
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: ACCEPT };
    const sentLogin = input.username !== undefined && mayReceiveLogin(input.url, url);
    if (sentLogin) {
      const pair = `${input.username}:${input.password ?? ''}`;
      headers.authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
    }
    const response = await fetch(url, { headers, signal, redirect: 'manual' });
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null) return { response, sentLogin };
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new FeedFetchError(`Feed redirected more than ${MAX_REDIRECTS} times`);
    try {
      url = new URL(location, url);
    } catch {
      throw new FeedFetchError('Feed redirected to an address that is not valid');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new FeedFetchError('Feed redirected to an address that is not http or https');
    }
  }
}

// The origin the person named; also its https version, since moving a feed to https is common and
// safer, not a different site.
export function mayReceiveLogin(given: URL, current: URL): boolean {
  if (current.origin === given.origin) return true;
  return given.protocol === 'http:' && current.protocol === 'https:' && current.host === given.host;
}

function statusError(status: number, withCredentials: boolean): FeedFetchError {
  if (status === 401) {
    return withCredentials
      ? new FeedFetchError('Feed did not accept the username and password (HTTP 401)', true)
      : new FeedFetchError('Feed requires a username and password (HTTP 401)', true);
  }
  // Without a login, a 403 is a site refusing robots or a region, not something a password fixes.
  if (status === 403) return new FeedFetchError('Feed refused access (HTTP 403)', withCredentials);
  return new FeedFetchError(`Feed could not be fetched: HTTP ${status}`);
}

async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => new FeedFetchError(`Feed is larger than ${formatBytes(maxBytes)}`);
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (!response.body) return new Uint8Array(0);
  // Counted as it streams: a missing or lying content-length, or an endless body, stops at the cap.
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

// A byte order mark settles the encoding; otherwise HTTP's charset wins over the XML
// declaration's (RFC 7303), and UTF-8 is XML's default.
function decode(bytes: Uint8Array, contentType: string | null): string {
  const head = Buffer.from(bytes.subarray(0, 200)).toString('latin1');
  const label =
    bomEncoding(bytes) ??
    /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1] ??
    /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([\w.:-]+)["']/.exec(head)?.[1] ??
    'utf-8';
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function bomEncoding(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

function explain(error: unknown, timeout: AbortSignal, input: FetchFeedInput): Error {
  if (error instanceof FeedFetchError) return error;
  if (timeout.aborted) return new FeedFetchError(`Feed did not answer within ${formatSeconds(input.timeoutMs)}`);
  if (input.signal?.aborted) return new FeedFetchError('Feed fetch was cancelled because Trove is shutting down');
  // Only the cause's code is shown: undici's messages can be long, and are not written for people.
  const code = networkCode(error);
  if (!code) return new FeedFetchError('Feed could not be reached');
  const hint = HINTS[code];
  return new FeedFetchError(`Feed could not be reached: ${code}${hint ? ` (${hint})` : ''}`);
}

const HINTS: Record<string, string> = {
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the name could not be looked up now',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'its certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its certificate is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its certificate is not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate is for another name',
};

function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    current = current.cause;
  }
  return undefined;
}

export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (mib >= 1) return `${Number(mib.toFixed(1))} MiB`;
  const kib = bytes / 1024;
  if (kib >= 1) return `${Number(kib.toFixed(1))} KiB`;
  return `${bytes} bytes`;
}
