import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { form, read } from '../helpers/api-checks.js';
import { chromiumSkip, launchChromium, recordUploadRequests, screenshots, sidewaysOverflow, VIEWPORTS, watchErrors } from '../helpers/chromium.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// An upload request's page in Debian's Chromium (issue 25), as someone without an account
// uses it: a protected request shows only its password form; the right password opens the
// page; a large file goes through tus into the request (POST /uploads with the request in
// the metadata, then PATCHes), a small one through the page's POST; both land in the
// owner's folder; nothing on the page leads into the owner's account. Desktop and phone,
// light and dark, with no script or CSP error.

const TIMEOUT = { timeout: 120_000 };
const MiB = 1024 * 1024;
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('an upload request’s page in Chromium', { skip: chromiumSkip() }, () => {
  let t: TestServer;
  let browser: Browser;
  let owner: TestAccount;
  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 });
    browser = await launchChromium();
    owner = await t.account();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('password first, then a large file by tus and a small one by POST, into the owner’s folder', TIMEOUT, async () => {
    const folder = await t.server.services.folders.create(owner.account, 'From clients');
    const created = await read(
      await t.fetch('/requests', {
        method: 'POST',
        headers: { Authorization: owner.key },
        body: form({
          folder: folder.id,
          title: 'Send us your files',
          message: 'Anything up to 50 MiB.',
          password: 'hunter2',
          max_files: '5',
          max_file_size: String(50 * MiB),
        }),
      }),
    );
    assert.equal(created.status, 201, created.body);
    const id = /<entry>\n {4}<id>([A-Za-z0-9]{22})<\/id>/.exec(created.body)![1]!;

    for (const scheme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport: VIEWPORTS.desktop, colorScheme: scheme });
      const requests = recordUploadRequests(context);
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      const problems = watchErrors(page, [/status of 401/]);
      await page.goto(`${t.url}/r/${id}`);
      assert.equal(await page.locator('h1').textContent(), 'Password needed');
      assert.equal(await page.getByText('Send us your files').count(), 0, 'nothing of the request before the password');
      await page.getByLabel('Password').fill('wrong');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('That password is not right').waitFor();
      await page.getByLabel('Password').fill('hunter2');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(`${t.url}/r/${id}`);
      await page.locator('h1', { hasText: 'Send us your files' }).waitFor();
      assert.match((await page.locator('#upload-limits').textContent()) ?? '', /^Up to 50\.0 MiB per file · \d files left$/);
      await screenshots(page, `40-upload-request-${scheme}`);
      assert.ok((await sidewaysOverflow(page)) <= 0, 'fits the width');

      if (scheme === 'light') {
        const big = randomBytes(6 * MiB);
        await page.locator('#upload-files').setInputFiles({ name: 'big report.bin', mimeType: 'application/octet-stream', buffer: big });
        const row = page.locator('#upload-list li.upload').first();
        await row.locator('.upload-status', { hasText: 'Uploaded' }).waitFor({ timeout: 60_000 });
        assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1, requests.join('\n'));
        assert.ok(
          requests.some((r) => /^PATCH \/uploads\/[0-9a-f]{32}$/.test(r)),
          requests.join('\n'),
        );
        await page.locator('#upload-files').setInputFiles({ name: 'small.txt', mimeType: 'text/plain', buffer: Buffer.from('a small file\n') });
        await page.locator('#upload-list li.upload').nth(1).locator('.upload-status', { hasText: 'Uploaded' }).waitFor();
        assert.equal(await page.locator('#upload-list a').count(), 0, 'no link into the owner’s account');
        await screenshots(page, '41-upload-request-uploaded');
        const listing = await t.server.services.folders.listing(folder, { limit: 10, children: false });
        const byName = new Map(listing.files.map((file) => [file.name, file]));
        assert.equal(byName.get('big report.bin')?.sha256, sha256(big));
        assert.equal(byName.get('big report.bin')?.ownerId, owner.account.id);
        assert.equal(byName.get('small.txt')?.size, 13);
        const row2 = (await t.server.services.store.uploadRequests.byId(id))!;
        assert.deepEqual([row2.files, row2.bytes], [2, 6 * MiB + 13]);
      }
      assert.deepEqual(problems, []);
      await context.close();
    }
  });
});
