import { answerAtProvider, startOAuthProvider, type OAuthProvider } from './oauth-provider.js';
import { freePort, startTrove, type Client, type RunningTrove } from './trove.js';

export const callbackPath = (integration: string) => `/v1/user-integration/oauth/${integration}/callback`;

/**
 * One authorization server and the Troves that use it as their Gmail provider. Each Trove's port
 * is chosen first, because its redirect URI must be registered with the provider and be in its
 * own OAUTH_REDIRECT_BASE_URL before it starts.
 */
export async function startOAuthWorld(troves: Record<string, Record<string, string>>, options: { providerHost?: string } = {}) {
  const ports = Object.fromEntries(await Promise.all(Object.keys(troves).map(async (name) => [name, await freePort()] as const)));
  const baseOf = (name: string) => `http://127.0.0.1:${ports[name]}`;
  const provider: OAuthProvider = await startOAuthProvider({
    redirectUris: Object.keys(troves).map((name) => baseOf(name) + callbackPath('gmail')),
    hostName: options.providerHost,
  });
  const running: Record<string, RunningTrove> = {};
  for (const [name, env] of Object.entries(troves)) {
    running[name] = await startTrove(
      { LOGIN_RATE_LIMIT_MAX: '1000', ...provider.gmailEnv(), OAUTH_REDIRECT_BASE_URL: baseOf(name), ...env },
      { port: ports[name]! },
    );
  }
  return {
    provider,
    troves: running,
    async close() {
      await Promise.all(Object.values(running).map((t) => t.close()));
      await provider.close();
    },
  };
}

/** Starts a connect as the signed-in client; returns the provider URL Trove redirected to. */
export async function authorize(client: Client, integration = 'gmail', query = ''): Promise<URL> {
  const res = await client.get(`/v1/user-integration/oauth/${integration}/authorize${query}`);
  if (res.status !== 302) throw new Error(`authorize answered ${res.status}: ${JSON.stringify(res.body)}`);
  return new URL(res.headers.get('location')!);
}

/** Sends the browser back to Trove with what the provider put in the callback URL. */
export function callback(client: Client, url: URL) {
  return client.get(url.pathname + url.search);
}

/** Authorize, approve at the provider, and come back; returns the callback answer. */
export async function connectGmail(client: Client) {
  const callbackUrl = await answerAtProvider((await authorize(client)).toString(), 'approve');
  return { callbackUrl, res: await callback(client, callbackUrl) };
}
