import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { chromiumSkip, launchChromium, screenshots, signIn, watchErrors } from '../helpers/chromium.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// End to end in Debian's Chromium against a real server: sign in, the key on the profile,
// My files (upload with progress bars, download, folders, move, delete), sign out; and the
// same upload form with JavaScript off. Every page is photographed at desktop and phone
// width into test-output/screenshots/.

const TIMEOUT = { timeout: 120_000 };

describe('My files in Chromium', { skip: chromiumSkip() }, () => {
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

  const newContext = (javaScriptEnabled = true): Promise<BrowserContext> =>
    browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, javaScriptEnabled });

  test('sign in, key, upload with progress, download, folder, move, delete, sign out', TIMEOUT, async () => {
    const user = await t.account({ name: 'Ada Lovelace', email: 'ada@example.org', premiumDays: 30, trafficBytes: 10 * 1024 ** 3 });
    const context = await newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const problems = watchErrors(page);

    await page.goto(`${t.url}/signin`);
    await screenshots(page, '01-sign-in');
    await signIn(page, t, user);

    // The key on the profile is the one POST /apikeys hands out.
    const shown = (await page.locator('#api-key-value').textContent())?.trim();
    const response = await t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login: user.login, password: user.password }) });
    assert.equal(response.status, 201);
    assert.equal(shown, /<content type="text">([^<]+)<\/content>/.exec(await response.text())?.[1]);
    await screenshots(page, '02-profile');

    // My files, from the header.
    await page.getByRole('banner').getByRole('link', { name: 'My files' }).click();
    await page.waitForURL(`${t.url}/my/files`);
    assert.equal(await page.locator('#upload-button').isHidden(), true, 'the script uploads on selection');
    await screenshots(page, '03-my-files-empty');

    // Two files through the picker: a progress bar each, both reach 100%.
    const photo = randomBytes(3 * 1024 * 1024 + 123);
    const notes = Buffer.from('Notes for the trip: «été» & <b>bold</b>\n', 'utf8');
    const notesName = 'trip notes «été» <b>.txt';
    await page.locator('#upload-files').setInputFiles([
      { name: 'holiday photo.bin', mimeType: 'application/octet-stream', buffer: photo },
      { name: notesName, mimeType: 'text/plain', buffer: notes },
    ]);
    const bars = page.locator('#upload-list progress');
    await page.waitForFunction(() => {
      const all = [...document.querySelectorAll<HTMLProgressElement>('#upload-list progress')];
      return all.length === 2 && all.every((bar) => bar.value === bar.max);
    });
    assert.equal(await bars.count(), 2);
    assert.deepEqual(await page.locator('#upload-list .upload-status').allTextContents(), ['Uploaded', 'Uploaded']);
    // The list refreshes by itself once the uploads are over.
    const list = page.locator('#files .file-list');
    await list.getByRole('link', { name: 'holiday photo.bin' }).waitFor();
    await list.getByRole('link', { name: notesName }).waitFor();
    const deleteLinks = await page.locator('#upload-list a.delete-link').evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href));
    assert.equal(deleteLinks.length, 2);
    await screenshots(page, '04-my-files-uploaded');

    // The download page, then the download itself: the same bytes.
    await list.getByRole('link', { name: 'holiday photo.bin' }).click();
    await page.waitForURL(/\/[A-Z0-9]{10}\/holiday%20photo\.bin$/);
    await screenshots(page, '05-download-page');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page
        .getByRole('main')
        .getByRole('link', { name: /Download/ })
        .first()
        .click(),
    ]);
    assert.equal(download.suggestedFilename(), 'holiday photo.bin');
    const saved = await download.path();
    assert.ok((await readFile(saved)).equals(photo), 'the downloaded bytes are the uploaded ones');

    // A new folder, the notes moved into it, the folder's pages.
    await page.goto(`${t.url}/my/files`);
    await page.getByLabel('New folder').fill('Trip 2026');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.waitForURL(`${t.url}/my/files?note=folder`);
    await page.getByText('The folder was created.').waitFor();
    const notesItem = page.locator('#files li.file').filter({ has: page.getByRole('link', { name: notesName }) });
    await notesItem.locator('select[name="folder"]').selectOption({ label: 'Trip 2026' });
    await screenshots(page, '06-my-files-folder-created');
    await notesItem.getByRole('button', { name: 'Move' }).click();
    await page.waitForURL(`${t.url}/my/files?note=moved`);
    await page.getByText('The file was moved.').waitFor();
    await page.locator('#folders').getByRole('link', { name: 'Trip 2026' }).click();
    await page.waitForURL(/\/my\/files\?folder=[A-Z0-9]{10}$/);
    await page.locator('#files').getByRole('link', { name: notesName }).waitFor();
    assert.equal(await page.locator('#files').getByRole('link', { name: 'holiday photo.bin' }).count(), 0);
    // A file dropped on the upload card goes into this folder.
    const dropped = await page.evaluateHandle(() => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(['socks, boots, map\n'], 'packing list.txt', { type: 'text/plain' }));
      return transfer;
    });
    await page.dispatchEvent('#drop-zone', 'dragover', { dataTransfer: dropped });
    assert.match((await page.locator('#drop-zone').getAttribute('class')) ?? '', /\bover\b/);
    await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer: dropped });
    await page.locator('#upload-list .upload.done').waitFor();
    assert.equal(await page.locator('#upload-list progress').evaluate((bar) => (bar as HTMLProgressElement).value), 100);
    await page.locator('#files').getByRole('link', { name: 'packing list.txt' }).waitFor();
    await screenshots(page, '07-my-files-in-folder');
    await page.locator('.public-link a').click();
    await page.waitForURL(/\/folder\/[A-Z0-9]{10}$/);
    await page.getByRole('link', { name: notesName }).waitFor();
    await screenshots(page, '08-public-folder-page');

    // The photo's delete link (from the upload): confirm page, then done page.
    await page.goto(deleteLinks[0]!);
    await screenshots(page, '09-delete-link-confirm');
    await page.getByRole('button', { name: /^Delete/ }).click();
    await page.getByRole('heading', { name: /deleted/i }).waitFor();
    await screenshots(page, '10-delete-link-done');
    const photoId = /\/([A-Z0-9]{10})\/delete\//.exec(deleteLinks[0]!)?.[1];
    assert.equal((await t.fetch(`/${photoId}/x?download=1`)).status, 404);

    // The notes through My files' own delete button.
    await page.goto(`${t.url}/my/files`);
    assert.equal(await page.locator('#files').getByRole('link', { name: 'holiday photo.bin' }).count(), 0);
    await page
      .locator('#files li.file')
      .filter({ has: page.getByRole('link', { name: notesName }) })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByRole('heading', { name: /^Delete “/ }).waitFor();
    await screenshots(page, '11-my-files-delete-confirm');
    await page.getByRole('button', { name: 'Delete file' }).click();
    await page.waitForURL(`${t.url}/my/files?note=deleted`);
    await page.getByText('The file was deleted.').waitFor();
    assert.deepEqual(await page.locator('#files .file-name').allTextContents(), ['packing list.txt']);
    await screenshots(page, '12-my-files-after-delete');

    // Sign out from the header; My files is then for signed-in people only.
    await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.url}/`);
    await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();
    await page.goto(`${t.url}/my/files`);
    // It sends them through sign-in, which returns here (issue 23, defect 4).
    await page.waitForURL(`${t.url}/signin?next=%2Fmy%2Ffiles`);

    assert.deepEqual(problems, []);
    await context.close();
  });

  test('with JavaScript off the upload form sends every file at once', TIMEOUT, async () => {
    const user = await t.account();
    const context = await newContext(false);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await signIn(page, t, user);
    await page.goto(`${t.url}/my/files`);
    assert.equal(await page.locator('#upload-button').isVisible(), true);
    assert.equal(await page.locator('button[data-copy-text]').count(), 0);
    await page.locator('#upload-files').setInputFiles([
      { name: 'first.txt', mimeType: 'text/plain', buffer: Buffer.from('first') },
      { name: 'second.txt', mimeType: 'text/plain', buffer: Buffer.from('second file') },
    ]);
    await screenshots(page, '13-no-js-my-files');
    await page.locator('#upload-button').click();
    await page.getByRole('heading', { name: 'Uploaded 2 files' }).waitFor();
    assert.equal(await page.locator('a.delete-link').count(), 2);
    await screenshots(page, '14-no-js-upload-result');
    await page.getByRole('link', { name: 'Back to My files' }).click();
    await page.locator('#files').getByRole('link', { name: 'second.txt' }).waitFor();
    assert.equal(await page.locator('#files li.file').count(), 2);
    await screenshots(page, '15-no-js-my-files-list');
    await context.close();
  });
});
