import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { chromiumSkip, launchChromium, signIn, VIEWPORTS, watchErrors } from '../helpers/chromium.js';
import { directLink } from '../helpers/downloads.js';
import { gradientPng } from '../helpers/gradient-png.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// The site's own journeys in Debian's Chromium: a direct link opened by its signed-in
// owner downloads, and signed out it asks to sign in and comes back; the home page of an
// account uploads; the header's Sign in returns to the page that asked. How every page
// looks, at each size and in each theme, is site-sizes-browser.test.ts.

const TIMEOUT = { timeout: 180_000 };
const PNG = gradientPng(480, 300);

describe('site pages in Chromium', { skip: chromiumSkip() }, () => {
  let t: TestServer;
  let browser: Browser;
  let owner: TestAccount;
  let direct = '';

  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 });
    browser = await launchChromium();
    owner = await t.account({ premiumDays: 30, trafficBytes: 1024 ** 3 });
    const image = await t.upload(owner.key, 'holiday photo.png', PNG);
    direct = new URL(await directLink(t, owner.key, image.id)).pathname;
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function context(signedIn: boolean): Promise<BrowserContext> {
    const created = await browser.newContext({ viewport: VIEWPORTS.desktop, acceptDownloads: true });
    if (signedIn) {
      const page = await created.newPage();
      await signIn(page, t, owner);
      await page.close();
    }
    return created;
  }

  test('a direct link opened by its signed-in owner downloads; signed out it asks to sign in and comes back', TIMEOUT, async () => {
    const ctx = await context(false);
    try {
      const page = await ctx.newPage();
      await page.goto(`${t.url}${direct}`);
      assert.equal(await page.locator('h1').textContent(), 'Sign in to download');
      await page.getByRole('link', { name: 'Sign in and download' }).click();
      await page.getByLabel('Login').fill(owner.login);
      await page.getByLabel('Password').fill(owner.password);
      // The sign-in lands back on the direct link, which now starts the download.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      assert.equal(download.suggestedFilename(), 'holiday photo.png');
      assert.deepEqual(await readFile((await download.path())!), PNG);

      // Typed into the address bar again (Sec-Fetch-Site: none): downloads at once.
      const again = await ctx.newPage();
      const [second] = await Promise.all([again.waitForEvent('download'), again.goto(`${t.url}${direct}`).catch(() => undefined)]);
      assert.deepEqual(await readFile((await second.path())!), PNG);
    } finally {
      await ctx.close();
    }
  });

  test('the home page of a signed-in account uploads right there, as My files does', TIMEOUT, async () => {
    const ctx = await context(true);
    try {
      const page = await ctx.newPage();
      const problems = watchErrors(page, [/status of (401|403|404)/]);
      await page.goto(`${t.url}/`);
      await page
        .locator('#upload-files')
        .setInputFiles([{ name: 'from home «é».txt', mimeType: 'text/plain', buffer: Buffer.from('uploaded from the home page\n') }]);
      await page.locator('#upload-list .upload-status', { hasText: 'Uploaded' }).waitFor();
      const link = await page.locator('#upload-list a').first().getAttribute('href');
      assert.ok(link && (await fetch(new URL(link, t.url)).then((r) => r.status)) === 200, `the link ${link} opens`);
      assert.deepEqual(problems, []);
    } finally {
      await ctx.close();
    }
  });

  test('the header’s Sign in returns to the page it was clicked on', TIMEOUT, async () => {
    const ctx = await context(false);
    try {
      const page = await ctx.newPage();
      await page.goto(`${t.url}/developers`);
      await page.locator('header').getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Login').fill(owner.login);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${t.url}/developers`);
      assert.equal(await page.locator('h1').first().textContent(), 'API reference');
    } finally {
      await ctx.close();
    }
  });
});
