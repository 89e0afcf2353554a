import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { chromiumSkip, launchChromium, screenshots, sidewaysOverflow, signIn, watchErrors } from '../helpers/chromium.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Managing My files in Debian's Chromium: list and grid (thumbnails loaded, the choice
// remembered), search and order, a file renamed (and a taken name's offer), a folder
// renamed, left and deleted, and nothing wider than a phone at 375 px. The list and grid
// are photographed at desktop and phone width (test-output/screenshots/my-files-*; the
// README.md and docs/web.md show copies from docs/screenshots/).

const TIMEOUT = { timeout: 120_000 };

/** Whether anything makes the page scroll sideways at this width. */
async function assertNoSidewaysScroll(page: Page, width: number): Promise<void> {
  await page.setViewportSize({ width, height: 800 });
  const overflow = await sidewaysOverflow(page);
  assert.ok(overflow <= 0, `at ${width} px the page is ${overflow} px wider than the screen (${page.url()})`);
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** A small photo-like PNG: a gradient, so thumbnails are visibly images. */
const picture = (width: number, height: number, hue: number) =>
  sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient id="g"><stop offset="0" stop-color="hsl(${hue},70%,55%)"/><stop offset="1" stop-color="hsl(${hue + 60},70%,35%)"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/><circle cx="${width / 3}" cy="${height / 2}" r="${height / 4}" fill="#fff8"/></svg>`,
    ),
  )
    .png()
    .toBuffer();

describe('Managing My files in Chromium', { skip: chromiumSkip() }, () => {
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

  test('list and grid, search and order, rename, folder rename, leave and delete, phone width', TIMEOUT, async () => {
    const user = await t.account({ name: 'Ada Lovelace' });
    for (const [name, hue] of [
      ['harbour at dusk.png', 200],
      ['lighthouse.png', 20],
      ['market street.png', 100],
      ['sunrise over the bay with a rather long file name.png', 300],
    ] as const) {
      assert.equal((await t.upload(user.key, name, await picture(640, 420, hue))).response.status, 201);
    }
    assert.equal((await t.upload(user.key, 'packing list.txt', 'socks, boots, map\n')).response.status, 201);
    assert.equal((await t.upload(user.key, 'tickets.pdf', '%PDF-1.4 not really\n')).response.status, 201);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const problems = watchErrors(page, [/status of 409/]);
    await signIn(page, t, user);
    await page.goto(`${t.url}/my/files`);
    await page.getByLabel('New folder').fill('Trip 2026');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.waitForURL(`${t.url}/my/files?note=folder`);

    // The list: a thumbnail for each image, loaded lazily but loaded.
    const thumbs = page.locator('#files .file-list img.thumb');
    assert.equal(await thumbs.count(), 4);
    await thumbs.first().scrollIntoViewIfNeeded();
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('#files img.thumb')].every((img) => img.complete && img.naturalWidth > 0));
    await assertNoSidewaysScroll(page, 375);
    await screenshots(page, 'my-files-list');

    // The grid, remembered on the next visit.
    await page.locator('.view-toggle').getByRole('link', { name: 'Grid' }).click();
    await page.waitForURL(`${t.url}/my/files?view=grid`);
    await page.goto(`${t.url}/my/files`);
    const tiles = page.locator('#files .file-grid li.tile');
    assert.equal(await tiles.count(), 6);
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('#files .file-grid img')].every((img) => img.complete && img.naturalWidth > 0),
    );
    await assertNoSidewaysScroll(page, 375);
    await screenshots(page, 'my-files-grid');

    // Search and order: typed text needs the button; an order applies when chosen.
    await page.getByLabel('Search files by name').fill('HARBOUR');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=HARBOUR/);
    assert.deepEqual(await page.locator('#files a.file-name').allTextContents(), ['harbour at dusk.png']);
    await page.getByRole('link', { name: 'Clear search' }).click();
    await page.getByLabel('Order').selectOption('name-asc');
    await page.waitForURL(/sort=name-asc/);
    assert.deepEqual((await page.locator('#files a.file-name').allTextContents()).slice(0, 2), ['harbour at dusk.png', 'lighthouse.png']);
    await page.locator('.view-toggle').getByRole('link', { name: 'List' }).click();

    // Rename a file in place; a taken name gets a free one offered.
    const item = (name: string) => page.locator('#files li.file').filter({ has: page.getByRole('link', { name, exact: true }) });
    await item('lighthouse.png').getByText('Rename').click();
    await item('lighthouse.png').getByLabel('New name for lighthouse.png').fill('market street.png');
    await item('lighthouse.png').getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('heading', { name: '“market street.png” is taken' }).waitFor();
    assert.equal(await page.getByLabel('This name is free:').inputValue(), 'market street (2).png');
    await screenshots(page, 'my-files-name-taken');
    await page.getByLabel('This name is free:').fill('old lighthouse.png');
    await page.getByRole('button', { name: 'Use this name' }).click();
    await page.getByText('The file was renamed.').waitFor();
    assert.ok(page.url().includes('sort=name-asc'), 'back to the same order');
    await item('old lighthouse.png').waitFor();

    // Into the folder, then the folder's own actions.
    await item('packing list.txt').locator('select[name="folder"]').selectOption({ label: 'Trip 2026' });
    await item('packing list.txt').getByRole('button', { name: 'Move' }).click();
    await page.getByText('The file was moved.').waitFor();
    await page.locator('#folders').getByRole('link', { name: 'Trip 2026' }).click();
    await page.waitForURL(/\?folder=[A-Z0-9]{10}$/);
    assert.ok(await page.getByRole('link', { name: 'Download as ZIP' }).isVisible());
    await page.getByText('Rename folder').click();
    await page.getByLabel('New name for the folder').fill('Trip to Lisbon');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('The folder was renamed.').waitFor();
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Trip to Lisbon');
    await assertNoSidewaysScroll(page, 375);
    await screenshots(page, 'my-files-folder');

    await page.getByRole('button', { name: 'Delete folder' }).click();
    await page.getByText('still holds 1 file').waitFor();
    await page.goBack();
    await page.getByRole('button', { name: /Move contents up/ }).click();
    await page.getByText('moved up one level').waitFor();
    await page.getByRole('button', { name: 'Delete folder' }).click();
    await page.waitForURL(`${t.url}/my/files?note=folder-deleted`);
    await item('packing list.txt').waitFor();
    assert.equal(await page.locator('#folders').getByRole('link', { name: 'Trip to Lisbon' }).count(), 0);

    assert.deepEqual(problems, []);
    await context.close();
  });
});
