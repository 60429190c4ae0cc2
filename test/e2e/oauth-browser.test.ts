/**
 * The Gmail connect in a real browser (Debian's chromium through playwright-core): Trove on
 * 127.0.0.1, the provider on localhost, so the provider's redirect back is cross-site and the
 * browser applies SameSite for real: the Strict session cookie stays home, the Lax binding
 * cookie comes along, and the flow still completes for the account that started it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackPath, startOAuthWorld } from '../helpers/oauth-setup.js';
import { GOOD_PASSWORD, uniqueEmail, type RunningTrove } from '../helpers/trove.js';

const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present) console.warn(`oauth-browser: skipped, ${CHROMIUM} is missing (install the Debian package "chromium"; .ci/run does)`);

describe.skipIf(!present)('connecting Gmail in a browser', () => {
  let world: Awaited<ReturnType<typeof startOAuthWorld>>;
  let server: RunningTrove;
  let browser: Browser;

  beforeAll(async () => {
    world = await startOAuthWorld({ main: {} }, { providerHost: 'localhost' });
    server = world.troves.main!;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  it('signs in, approves at the provider, lands on the success page and sees the connection', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const callbackHeaders: Array<Promise<Record<string, string>>> = [];
    page.on('request', (request) => {
      if (request.url().startsWith(server.baseUrl + callbackPath('gmail'))) callbackHeaders.push(request.allHeaders());
    });

    // Create an account through the sign-in page, as a person would.
    await page.goto(`${server.baseUrl}/login`);
    await page.click('summary');
    await page.fill('#reg-name', 'Browser User');
    await page.fill('#reg-email', uniqueEmail('browser'));
    await page.fill('#reg-password', GOOD_PASSWORD);
    await Promise.all([page.waitForURL(`${server.baseUrl}/`), page.click('#register button[type=submit]')]);

    // Start the connect: Trove sends the browser to the provider on another site.
    await page.goto(`${server.baseUrl}/v1/user-integration/oauth/gmail/authorize`);
    expect(new URL(page.url()).origin).toBe(world.provider.origin);
    await expect(page.textContent('h1')).resolves.toContain('Allow Trove');

    await Promise.all([page.waitForURL(/\/integrations\/oauth\/(success|error)/), page.click('#approve')]);
    const landed = new URL(page.url());
    expect(landed.pathname + landed.search).toBe('/integrations/oauth/success?integration=gmail');
    expect(await page.textContent('#result')).toContain('connected to gmail');

    // What the browser sent with the cross-site callback: the binding cookie, not the session cookie.
    const callbackCookies = (await Promise.all(callbackHeaders)).map((headers) => headers.cookie ?? '');
    expect(callbackCookies).toHaveLength(1);
    expect(callbackCookies[0]).toMatch(/svc_oauth=/);
    expect(callbackCookies[0]).not.toMatch(/svc_session=/);

    const list = await page.evaluate(async () => (await fetch('/v1/user-integrations')).json());
    expect(list.results).toHaveLength(1);
    expect(list.results[0]).toMatchObject({ integration: 'gmail', status: 'connected' });
    await context.close();
  });
});
