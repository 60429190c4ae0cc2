/**
 * The Gmail integration's instance side (issue 4, point 5) with credentials obtained through a
 * real OAuth flow: the profile call proves a token, an expired token is refreshed at the token
 * endpoint and the new one stored (sealed) in place of the old.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { CredentialsRejectedError } from '../../src/integrations/contract.js';
import Gmail from '../../src/integrations/gmail/index.js';
import { connectGmail, startOAuthWorld } from '../helpers/oauth-setup.js';
import { registerUser, type RunningTrove } from '../helpers/trove.js';

let world: Awaited<ReturnType<typeof startOAuthWorld>>;
let server: RunningTrove;
let connectionId: string;

beforeAll(async () => {
  world = await startOAuthWorld({ main: {} });
  server = world.troves.main!;
  const client = server.client();
  await registerUser(client);
  const { res } = await connectGmail(client);
  expect(res.status).toBe(302);
  connectionId = (await client.get('/v1/user-integrations')).body.results[0].id;
});
afterAll(async () => {
  await world?.close();
});

const stored = async () => (await server.trove.services.userIntegrations.credentialsOf({ id: connectionId }))!;

describe('Gmail', () => {
  it('stores the validated credentials shape of interface §2.5', async () => {
    const credentials = await stored();
    expect(credentials).toEqual({
      clientId: world.provider.clientId,
      clientSecret: world.provider.clientSecret,
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(Date.parse(credentials.expiresAt as string)).toBeGreaterThan(Date.now());
  });

  it('validateAuthentication: true with the issued token, false with a token the provider never issued', async () => {
    const gmail = await server.trove.services.userIntegrations.instanceOf({ id: connectionId });
    expect(await gmail!.validateAuthentication()).toBe(true);
    const forged = new Gmail({ ...(await stored()), accessToken: 'not-a-token-the-provider-issued' }, undefined, {
      settings: server.config.integration('gmail'),
    });
    expect(await forged.validateAuthentication()).toBe(false);
  });

  it('initialize refreshes an expired access token with the refresh token and stores the new one', async () => {
    const before = await stored();
    // Make the stored token look expired, as it would be an hour later.
    const expired = { ...before, expiresAt: new Date(Date.now() - 1000).toISOString() };
    await server.trove.services.database.db
      .updateTable('user_integrations')
      .set({ credentials: new SecretBox(server.config.encryptionKeys).seal(JSON.stringify(expired), connectionId) })
      .where('id', '=', connectionId)
      .execute();

    const gmail = (await server.trove.services.userIntegrations.instanceOf({ id: connectionId }))!;
    await gmail.initialize();
    const after = await stored();
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(Date.parse(after.expiresAt as string)).toBeGreaterThan(Date.now());
    expect(await gmail.validateAuthentication()).toBe(true);
  });

  it('initialize leaves a token that is still valid alone', async () => {
    const before = await stored();
    const saved: unknown[] = [];
    const gmail = new Gmail(before, undefined, { settings: server.config.integration('gmail'), saveCredentials: async (c) => void saved.push(c) });
    await gmail.initialize();
    expect(saved).toEqual([]);
  });

  it('validateTokens names the field a token response lacks', () => {
    const settings = server.config.integration('gmail');
    const good = { access_token: 'a', refresh_token: 'r', expires_in: 3600, token_type: 'Bearer' };
    expect(Gmail.validateTokens({ tokens: good, settings })).toMatchObject({ accessToken: 'a', refreshToken: 'r' });
    for (const field of ['access_token', 'refresh_token', 'expires_in'] as const) {
      const { [field]: _dropped, ...rest } = good;
      expect(() => Gmail.validateTokens({ tokens: rest, settings })).toThrow(CredentialsRejectedError);
      expect(() => Gmail.validateTokens({ tokens: rest, settings })).toThrow(field);
    }
  });

  it('answers the start task with a getEmailList follow-up; listing itself is not built yet and says so', async () => {
    const gmail = (await server.trove.services.userIntegrations.instanceOf({ id: connectionId }))!;
    expect(await gmail.runTask({ type: 'start', payload: {} })).toEqual({ output: [], tasks: [{ type: 'getEmailList', payload: { pageToken: null } }] });
    await expect(gmail.runTask({ type: 'getEmailList', payload: { pageToken: null } })).rejects.toThrow(/not implemented yet/);
  });
});
