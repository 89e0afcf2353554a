import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkip, launchChromium, SCREENSHOT_DIR, signIn, VIEWPORTS, watchErrors } from '../helpers/chromium.js';
import { freePort } from '../helpers/cluster.js';
import { startProvider, TEST_CLIENT, type TestProvider } from '../helpers/oidc-provider.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Single sign-on in Debian's Chromium (issue 26), against a real OpenID provider
// (oidc-provider in its own process) and its own login and consent pages: the sign-in
// page's button, linking from the profile, and the --oidc-only sign-in page.
// FILEHAVEN_DOCS_SCREENSHOTS=1 writes the sign-in page's pictures into docs/screenshots/.

const TIMEOUT = { timeout: 120_000 };
const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots');
const SHOT_DIR = process.env.FILEHAVEN_DOCS_SCREENSHOTS === '1' ? DOCS_DIR : SCREENSHOT_DIR;

describe('single sign-on in Chromium', { skip: chromiumSkip() }, () => {
  let provider: TestProvider;
  let t: TestServer;
  let browser: Browser;

  before(async () => {
    const port = await freePort();
    const webUrl = `http://127.0.0.1:${port}`;
    provider = await startProvider({ redirectUris: [`${webUrl}/signin/oidc/callback`] });
    t = await startTestServer({
      port,
      webUrl,
      oidcIssuer: provider.url,
      oidcClientId: TEST_CLIENT.id,
      oidcClientSecret: TEST_CLIENT.secret,
      oidcName: 'Company SSO',
      oidcSignup: true,
      loginAttemptsPerMinute: 1000,
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await provider?.stop();
  });

  /** The provider's development login (any login) and consent pages, as a person fills them in. */
  async function atProvider(page: Page, login: string): Promise<void> {
    await page.waitForURL(`${provider.url}/**`);
    await page.getByPlaceholder('Enter any login').fill(login);
    await page.getByPlaceholder('and password').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  /** This site's errors: the provider's development pages load web fonts and a favicon that are not there. */
  const ours = (problems: string[]) => problems.filter((problem) => !problem.includes(provider.url) && !problem.includes('fonts.googleapis.com'));

  async function pictures(page: Page, name: string): Promise<void> {
    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), `${name} fits at ${label} width`);
      await page.screenshot({ path: path.join(SHOT_DIR, `${name}-${label}.png`), fullPage: true });
    }
    await page.setViewportSize(VIEWPORTS.desktop);
  }

  test('"Sign in with Company SSO" goes through the provider\'s pages and comes back signed in', TIMEOUT, async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    try {
      const page = await context.newPage();
      const problems = watchErrors(page);
      await page.goto(`${t.url}/signin`);
      await pictures(page, 'sign-in-sso');
      await page.getByRole('link', { name: 'Sign in with Company SSO' }).click();
      await atProvider(page, `ada${process.pid}`);
      await page.waitForURL(`${t.url}/accounts/profile/misc`);
      assert.equal(await page.locator('dl.facts dd bdi').first().textContent(), `ada${process.pid}`);
      assert.match((await page.locator('#identities').textContent()) ?? '', new RegExp(`ada${process.pid}@example\\.test`));
      assert.deepEqual(ours(problems), []);
    } finally {
      await context.close();
    }
  });

  test('a password account links its identity from the profile, then signs in with it', TIMEOUT, async () => {
    const user = await t.account();
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    try {
      const page = await context.newPage();
      const problems = watchErrors(page);
      await signIn(page, t, user);
      await page.getByRole('button', { name: 'Link Company SSO' }).click();
      await atProvider(page, `grace${process.pid}`);
      await page.waitForURL(`${t.url}/accounts/profile/misc#identities`);
      assert.match((await page.locator('#identities').textContent()) ?? '', new RegExp(`grace${process.pid}@example\\.test`));
      await page.locator('#identities').screenshot({ path: path.join(SCREENSHOT_DIR, 'profile-identities-desktop.png') });
      await page.setViewportSize(VIEWPORTS.phone);
      await page.locator('#identities').screenshot({ path: path.join(SCREENSHOT_DIR, 'profile-identities-phone.png') });
      assert.deepEqual(ours(problems), []);
    } finally {
      await context.close();
    }
    // A fresh browser: the provider asks again, and the identity lands in the linked account.
    const fresh = await browser.newContext({ viewport: VIEWPORTS.desktop });
    try {
      const page = await fresh.newPage();
      await page.goto(`${t.url}/signin`);
      await page.getByRole('link', { name: 'Sign in with Company SSO' }).click();
      await atProvider(page, `grace${process.pid}`);
      await page.waitForURL(`${t.url}/accounts/profile/misc`);
      assert.equal(await page.locator('dl.facts dd bdi').first().textContent(), user.login);
    } finally {
      await fresh.close();
    }
  });

  test('--oidc-only: the sign-in page has no password form, only a link for operators', TIMEOUT, async () => {
    const only = await t.sibling({ port: 0, oidcOnly: true });
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    try {
      const page = await context.newPage();
      await page.goto(`${only.url}/signin`);
      assert.equal(await page.getByLabel('Password').count(), 0);
      await pictures(page, 'sign-in-sso-only');
      await page.getByRole('link', { name: 'Operators: sign in with a password' }).click();
      assert.equal(await page.getByLabel('Password').count(), 1);
    } finally {
      await context.close();
      await only.close();
    }
  });
});
