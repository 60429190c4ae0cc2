/** The few requests the bench makes itself, before any load: sign up, and look at one profile answer. */

export interface Account {
  email: string;
  name: string;
  password: string;
}

const TIMEOUT_MS = 15_000;

/** Registers the account and returns its session cookie as a `Cookie` header value. */
export async function registerForCookie(baseUrl: string, account: Account): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(account),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (res.status !== 201) throw new Error(`register at ${baseUrl} answered ${res.status}: ${await res.text()}`);
  const cookie = res.headers.getSetCookie()[0]?.split(';', 1)[0];
  if (!cookie) throw new Error(`register at ${baseUrl} set no cookie`);
  return cookie;
}

/**
 * Fetches the profile once and returns the shape of its answer (field names of the envelope
 * and of `result`), so the bench can refuse to compare servers that answer different JSON.
 */
export async function profileShape(baseUrl: string, cookie?: string): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/user/profile`, {
    headers: cookie ? { cookie } : {},
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`profile at ${baseUrl} answered ${res.status}: ${text}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  const result = body.result as Record<string, unknown> | undefined;
  return `${Object.keys(body).sort().join(',')} / result: ${Object.keys(result ?? {}).sort().join(',')}`;
}
