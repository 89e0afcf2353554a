import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkip, launchChromium, SCREENSHOT_DIR, sidewaysOverflow, signIn, VIEWPORTS, watchErrors } from '../helpers/chromium.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The operator console end to end in Debian's Chromium: an operator signs in, creates an
// account, gives it premium, disables it, finds a file and blocks it, blacklists a name,
// reads the audit entries of all of that, and views the stats. Every page is checked at
// phone width (nothing wider than the screen) and photographed at both widths:
// FILEHAVEN_DOCS_SCREENSHOTS=1 writes the copies README.md and docs/console.md show into docs/screenshots/.

const TIMEOUT = { timeout: 180_000 };
const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots');
const SHOT_DIR = process.env.FILEHAVEN_DOCS_SCREENSHOTS === '1' ? DOCS_DIR : SCREENSHOT_DIR;

/** At phone width nothing may be wider than the screen; then a picture at both widths. */
async function checkAndShoot(page: Page, name: string): Promise<void> {
  await mkdir(SHOT_DIR, { recursive: true });
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    if (label === 'phone') {
      const overflow = await sidewaysOverflow(page);
      assert.ok(overflow <= 0, `${name}: the page is ${overflow}px wider than a phone screen`);
    }
    await page.screenshot({ path: path.join(SHOT_DIR, `console-${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

describe('operator console in Chromium', { skip: chromiumSkip() }, () => {
  let t: TestServer;
  let browser: Browser;
  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('create an account, give premium, disable it, block a file, blacklist a name, read the audit log, view stats', TIMEOUT, async () => {
    const admin = { login: 'admin', password: 'operator password' };
    // The first start's `admin` (an operator), with a password the test knows.
    await t.server.services.accounts.setPassword(admin.login, admin.password);
    const owner = await t.account({ login: 'grace' });
    await t.upload(owner.key, 'holiday <photos>.zip', 'z'.repeat(40_000));
    await t.upload(owner.key, 'notes.txt', 'meeting notes');
    await t.upload(owner.key, 'notes copy.txt', 'meeting notes');

    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const problems = watchErrors(page);
    await signIn(page, t, admin);

    // The header leads an operator to the console; its landing page is the overview.
    await page.getByRole('link', { name: 'Console' }).click();
    await page.waitForURL(`${t.url}/console`);
    assert.equal(await page.locator('.chart svg').count(), 5);

    // Accounts: create one.
    await page.locator('.console-nav').getByRole('link', { name: 'Accounts' }).click();
    await page.getByLabel('Login', { exact: true }).fill('ada');
    await page.getByLabel('Password', { exact: true }).fill('correct horse');
    await page.getByLabel('Name (optional)').fill('Ada <Lovelace>');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${t.url}/console/accounts/ada?done=created`);
    assert.match((await page.locator('.notice.ok').textContent()) ?? '', /Account created/);
    assert.equal(await page.locator('.facts dd').nth(1).textContent(), 'Ada <Lovelace>');

    // Premium: 30 days and 10 GiB.
    await page.getByLabel('Days').fill('30');
    await page.getByLabel('Traffic').fill('10GiB');
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.waitForURL(/done=premium/);
    assert.match((await page.locator('.facts').textContent()) ?? '', /until \d{4}-\d{2}-\d{2}[\s\S]*10\.0 GiB/);

    // Disable it.
    await page.getByRole('button', { name: 'Disable account' }).click();
    await page.waitForURL(/done=disabled/);
    assert.equal(await page.locator('h1 .badge.danger').textContent(), 'disabled');
    await checkAndShoot(page, 'account');
    assert.equal((await t.server.services.accounts.byLoginOrFail('ada')).disabled, true);

    await page.locator('.console-nav').getByRole('link', { name: 'Accounts' }).click();
    await checkAndShoot(page, 'accounts');

    // Files: search by name, block the file.
    await page.locator('.console-nav').getByRole('link', { name: 'Files' }).click();
    await page.getByLabel('Name contains').fill('HOLIDAY');
    await page.getByRole('button', { name: 'Search' }).click();
    const rows = page.locator('.console-table tbody tr');
    assert.equal(await rows.count(), 1);
    assert.match((await rows.first().textContent()) ?? '', /holiday <photos>\.zip/);
    await rows.first().getByRole('button', { name: 'Block' }).click();
    await page.waitForURL(/done=block/);
    assert.equal(await page.locator('.console-table tbody tr .badge').first().textContent(), 'blocked');
    await checkAndShoot(page, 'files');

    // Where a content is used: both copies of the notes.
    await page.getByLabel('Name contains').fill('notes');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('.console-table tbody tr').first().getByTitle('Where this content is used').click();
    await page.waitForURL(/\/console\/digests\/[0-9a-f]{64}$/);
    assert.equal(await page.locator('.console-table tbody tr').count(), 2);
    await checkAndShoot(page, 'digest');

    // Blacklists: a name pattern.
    await page.locator('.console-nav').getByRole('link', { name: 'Blacklists' }).click();
    await page.getByLabel('Pattern').fill('*.EXE');
    await page.getByLabel('Reason').first().fill('no executables');
    await page.getByRole('button', { name: 'Add pattern' }).click();
    await page.waitForURL(/done=name-added/);
    assert.equal(await page.locator('.console-table code').first().textContent(), '*.exe');
    await checkAndShoot(page, 'blacklist');

    // The audit log: each of those actions, by web:admin, newest first.
    await page.locator('.console-nav').getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Actor').fill('web:admin');
    await page.getByRole('button', { name: 'Filter' }).click();
    const actions = await page.locator('.audit-table tbody td:nth-child(3)').allTextContents();
    assert.deepEqual(actions, ['blacklist.add-name', 'files.block', 'accounts.disable', 'accounts.premium', 'accounts.create']);
    await checkAndShoot(page, 'audit');

    // Stats and settings.
    await page.locator('.console-nav').getByRole('link', { name: 'Overview' }).click();
    assert.match((await page.locator('.stats').textContent()) ?? '', /Blocked files\s*1/);
    assert.ok((await page.locator('rect.series-uploads').count()) >= 1);
    await checkAndShoot(page, 'overview');
    await page.locator('.console-nav').getByRole('link', { name: 'Settings' }).click();
    await checkAndShoot(page, 'settings');

    assert.deepEqual(problems, []);
    await context.close();
  });
});
