import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumSkip, launchChromium, recordUploadRequests, screenshots, signIn, watchErrors } from '../helpers/chromium.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// What the web upload tells its user (issue 12), in Debian's Chromium against real
// servers: a file that cannot fit the limits is refused before a byte is sent, in red,
// with the reason in words and human sizes; speed and time left while a file goes; Cancel;
// Retry after a failure (a form POST sent again, a tus upload resumed where it stopped);
// finished rows that can be dismissed while the files show in the list, with readable
// links. The screenshots of an upload in progress and of a failed one (test-output/
// screenshots/upload-*.png) are the ones README.md and docs/web.md show, copied to docs/screenshots/.

const TIMEOUT = { timeout: 150_000 };
const MiB = 1024 * 1024;
/** --danger of site.css (#b42318), as the browser reports a computed colour. */
const DANGER = 'rgb(180, 35, 24)';

/** Upload speed of the page's network, in bytes per second (-1: unlimited). */
async function throttle(context: BrowserContext, page: Page, bytesPerSecond: number): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond });
}

/** The names of an account's files, as the API lists them. */
async function apiFileNames(t: TestServer, key: string): Promise<string[]> {
  const body = await (await t.fetch('/files', { headers: { Authorization: key } })).text();
  return [...body.matchAll(/<title>([^<]*)<\/title>/g)].map((m) => m[1]!).filter((title) => title !== 'File list');
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const barColour = (row: ReturnType<Page['locator']>) => row.locator('progress').evaluate((bar) => getComputedStyle(bar).accentColor);

describe('upload feedback on My files in Chromium', { skip: chromiumSkip() }, () => {
  let browser: Browser;
  let work: string;
  before(async () => {
    browser = await launchChromium();
    work = await mkdtemp(path.join(tmpdir(), 'filehaven-upload-feedback-'));
  });
  after(async () => {
    await browser?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const signedInPage = async (t: TestServer, user?: TestAccount) => {
    const account = user ?? (await t.account());
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const requests = recordUploadRequests(context);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signIn(page, t, account);
    return { context, page, user: account, requests };
  };

  test(
    'a file over the size limit, or past the upload volume left, is refused before sending: red, in words, nothing reaches the server',
    TIMEOUT,
    async () => {
      const t = await startTestServer({ loginAttemptsPerMinute: 1000, maxFileSize: 1 * MiB, uploadVolumeFree: 1.5 * MiB });
      try {
        const { context, page, user, requests } = await signedInPage(t);
        const problems = watchErrors(page);
        await page.goto(`${t.url}/my/files`);
        // The limits in human sizes, not bytes.
        assert.equal(await page.locator('#upload-limits').textContent(), 'Up to 1.0 MiB per file · 1.5 MiB of 1.5 MiB upload volume left (rolling 24 hours)');

        // A file on disk: Chromium reads it by path, where a 20 MiB buffer would cross the
        // DevTools protocol as base64 (half a minute on a busy machine).
        const video = path.join(work, 'holiday video.mp4');
        await writeFile(video, randomBytes(20 * MiB));
        await page.locator('#upload-files').setInputFiles(video);
        const row = page.locator('#upload-list li.upload').first();
        await row.locator('.upload-status', { hasText: 'Nothing was sent.' }).waitFor();
        assert.equal(await row.locator('.upload-status').textContent(), 'This file is 20.0 MiB, larger than the limit of 1.0 MiB per file. Nothing was sent.');
        assert.match((await row.getAttribute('class')) ?? '', /\bfailed\b/);
        // Red (the bar of a file that was never sent is not shown; rows that failed part way keep a red bar, below).
        assert.equal(await row.evaluate((li) => getComputedStyle(li).borderLeftColor), DANGER);
        assert.equal(await row.locator('.upload-status').evaluate((p) => getComputedStyle(p).color), DANGER);
        assert.equal(await row.locator('progress').isVisible(), false);
        assert.equal(await row.getByRole('button', { name: 'Retry upload of holiday video.mp4' }).isVisible(), false, 'no Retry: it would fail the same way');
        await row.getByRole('button', { name: 'Dismiss holiday video.mp4' }).waitFor();
        await screenshots(page, 'upload-failed');

        // Two files of 1 MiB against 1.5 MiB of volume: the first goes, the second is refused at once.
        await page.locator('#upload-files').setInputFiles([
          { name: 'first.bin', mimeType: 'application/octet-stream', buffer: randomBytes(1 * MiB) },
          { name: 'second.bin', mimeType: 'application/octet-stream', buffer: randomBytes(1 * MiB) },
        ]);
        const second = page.locator('#upload-list li.upload').nth(2);
        await second
          .locator('.upload-status', { hasText: 'but only 512.0 KiB of your upload volume is left for now (1.5 MiB per 24 hours). Nothing was sent.' })
          .waitFor();
        await page.locator('#upload-list li.upload').nth(1).locator('.upload-status', { hasText: 'Uploaded' }).waitFor();
        // Nothing of the refused files reached the server: one form POST (first.bin), no tus
        // upload created, one staging (first.bin's) in all.
        assert.deepEqual(requests, ['POST /my/files/upload']);
        assert.deepEqual(await apiFileNames(t, user.key), ['first.bin']);
        assert.equal(t.storage.stagings().length, 1);
        assert.equal(await t.storage.count('resumable_uploads'), 0);
        // The limits line follows the server once the list refreshes.
        await page.locator('#upload-limits', { hasText: '512.0 KiB of 1.5 MiB upload volume left' }).waitFor();

        // Dismiss one row, then clear the others.
        await row.getByRole('button', { name: 'Dismiss holiday video.mp4' }).click();
        assert.equal(await page.locator('#upload-list li.upload').count(), 2);
        await page.getByRole('button', { name: 'Clear finished' }).click();
        assert.equal(await page.locator('#upload-list li.upload').count(), 0);
        assert.equal(await page.getByRole('button', { name: 'Clear finished' }).isVisible(), false);
        await page.locator('#files').getByRole('link', { name: 'first.bin' }).waitFor();
        assert.deepEqual(problems, []);
        await context.close();
      } finally {
        await t.close();
      }
    },
  );

  test('speed and time left while a file goes; Cancel; a finished row shows a readable link and is dismissed into the list', TIMEOUT, async () => {
    const t = await startTestServer({ loginAttemptsPerMinute: 1000 });
    try {
      const { context, page, user, requests } = await signedInPage(t);
      // The cancelled tus upload's HEAD is a 404 after its termination, which the browser logs.
      const problems = watchErrors(page, [/status of 404/]);
      await page.goto(`${t.url}/my/files`);
      await throttle(context, page, MiB / 4);
      const film = path.join(work, 'summer film «2026».bin');
      const filmBytes = randomBytes(6 * MiB);
      await writeFile(film, filmBytes);
      const notes = path.join(work, 'notes and sketches.pdf');
      // A form POST (4 MiB at most; larger files go through tus), sent slowly enough to be
      // still going when Cancel is clicked on a loaded machine (at 1 MiB/s it once arrived
      // whole first, and was stored).
      await writeFile(notes, randomBytes(3 * MiB));
      await page.locator('#upload-files').setInputFiles([film, notes]);
      const filmRow = page.locator('#upload-list li.upload').filter({ hasText: 'summer film «2026».bin' });
      const notesRow = page.locator('#upload-list li.upload').filter({ hasText: 'notes and sketches.pdf' });
      // Sent so far, speed and time left, on each row (the text, never its numbers' timing).
      for (const [row, total] of [
        [filmRow, '6.0 MiB'],
        [notesRow, '3.0 MiB'],
      ] as const) {
        await row
          .locator('.upload-detail')
          .filter({ hasText: new RegExp(`^[\\d.]+ (B|KiB|MiB) of ${total.replace('.', '\\.')} · [\\d.]+ (B|KiB|MiB)/s · about .+ left$`) })
          .waitFor();
      }
      await screenshots(page, 'upload-in-progress');

      // Cancel the form POST: nothing of it is kept.
      await notesRow.getByRole('button', { name: 'Cancel upload of notes and sketches.pdf' }).click();
      await notesRow.locator('.upload-status', { hasText: 'Upload cancelled.' }).waitFor();
      assert.equal(await barColour(notesRow), DANGER, 'the bar turns red, not the success colour');
      assert.ok((await notesRow.locator('progress').evaluate((bar) => (bar as HTMLProgressElement).value)) > 0, 'it shows how far the file went');
      assert.equal(await notesRow.getByRole('button', { name: 'Dismiss notes and sketches.pdf' }).isVisible(), true);

      // The tus upload finishes: its row shrinks to a readable link (href encoded) and a Dismiss.
      await throttle(context, page, -1);
      await filmRow.locator('.upload-status', { hasText: 'Uploaded' }).waitFor({ timeout: 60_000 });
      assert.equal(await filmRow.locator('progress').isVisible(), false, 'no bar on a finished row');
      const link = filmRow.locator('.links dd a').first();
      const href = (await link.getAttribute('href')) ?? '';
      assert.match(href, /\/[A-Z0-9]{10}\/summer%20film%20%C2%AB2026%C2%BB\.bin$/);
      assert.equal(await link.textContent(), decodeURI(href));
      assert.match((await link.textContent()) ?? '', /\/summer film «2026»\.bin$/);
      // The file is in the list below, marked as just uploaded.
      const id = /\/([A-Z0-9]{10})\//.exec(href)?.[1];
      await page.locator(`#files li.file.just-uploaded[data-file="${id}"]`).waitFor();
      assert.equal(await page.locator('#files li.file').count(), 1);
      await filmRow.getByRole('button', { name: 'Dismiss summer film «2026».bin' }).click();
      assert.equal(await filmRow.count(), 0);
      await page.getByRole('button', { name: 'Clear finished' }).click();
      assert.equal(await page.locator('#upload-list li.upload').count(), 0);

      assert.deepEqual(await apiFileNames(t, user.key), ['summer film «2026».bin']);
      assert.equal((await t.server.services.store.files.byId(id!))?.sha256, sha256(filmBytes));
      assert.equal(requests.filter((r) => r === 'POST /my/files/upload').length, 1, requests.join('\n'));
      assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1, requests.join('\n'));
      assert.deepEqual(problems, []);
      await context.close();
    } finally {
      await t.close();
    }
  });

  test('Retry after a failure: a form POST is sent again, a tus upload resumes where it stopped', TIMEOUT, async () => {
    const t = await startTestServer({ loginAttemptsPerMinute: 1000 });
    try {
      const { context, page, user, requests } = await signedInPage(t);
      const problems = watchErrors(page, [/ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|ERR_CONNECTION_CLOSED|status of 409|status of 429/]);
      await page.goto(`${t.url}/my/files`);

      // A small file whose POST loses its connection: red, in words, with Retry; Retry stores it.
      let refused = 0;
      await page.route('**/my/files/upload', (route) => (refused++ === 0 ? route.abort('connectionreset') : route.fallback()));
      await page.locator('#upload-files').setInputFiles({ name: 'report.txt', mimeType: 'text/plain', buffer: Buffer.from('quarterly report\n') });
      const row = page.locator('#upload-list li.upload').first();
      await row.locator('.upload-status', { hasText: 'The connection to the server was lost. Press Retry to try again.' }).waitFor();
      assert.equal(await barColour(row), DANGER);
      assert.deepEqual(await apiFileNames(t, user.key), []);
      await row.getByRole('button', { name: 'Retry upload of report.txt' }).click();
      await row.locator('.upload-status', { hasText: 'Uploaded' }).waitFor();
      assert.deepEqual(await apiFileNames(t, user.key), ['report.txt']);
      assert.equal(requests.filter((r) => r === 'POST /my/files/upload').length, 2);
      await page.locator('#files').getByRole('link', { name: 'report.txt' }).waitFor();

      // A tus upload: its connection is cut part way, and the server then refuses for a while
      // (a 429 with a long Retry-After, which waits for the user): paused, with Retry. Retry
      // asks the server how much it has and sends only the rest.
      const big = path.join(work, 'backup.tar');
      const bigBytes = randomBytes(12 * MiB);
      await writeFile(big, bigBytes);
      await throttle(context, page, 3 * MiB);
      let busy = false;
      await page.route('**/uploads/*', (route) =>
        busy && route.request().method() === 'PATCH'
          ? route.fulfill({
              status: 429,
              headers: { 'Content-Type': 'application/atom+xml; charset=utf-8', 'Retry-After': '600', 'Tus-Resumable': '1.0.0' },
              body: '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Error</title><entry><title>errorRateLimited</title><content type="text">Too many requests</content></entry></feed>',
            })
          : route.fallback(),
      );
      let cut = false;
      const cutFirstPatch = (request: IncomingMessage) => {
        if (cut || request.method !== 'PATCH' || !request.url?.startsWith('/uploads/')) return;
        cut = true;
        // Cut once the server has read 2 MiB of it (not after a fixed time: on a busy
        // machine the browser may not have sent a byte by then), so part of it is kept.
        const socket = request.socket;
        const started = socket.bytesRead;
        const poll = setInterval(() => {
          if (socket.bytesRead - started < 2 * MiB && !socket.destroyed) return;
          clearInterval(poll);
          busy = true;
          socket.destroy();
        }, 20);
      };
      t.server.app.server.on('request', cutFirstPatch);
      try {
        await page.locator('#upload-files').setInputFiles(big);
        const tusRow = page.locator('#upload-list li.upload').filter({ hasText: 'backup.tar' });
        const retry = tusRow.getByRole('button', { name: 'Retry upload of backup.tar' });
        await retry.waitFor({ timeout: 60_000 });
        assert.match(
          (await tusRow.locator('.upload-status').textContent()) ?? '',
          /^The server is busy with too many requests from you\. You can try again in about 10 min\.$/,
        );
        const kept = await tusRow.locator('progress').evaluate((bar) => (bar as HTMLProgressElement).value);
        assert.ok(kept > 0 && kept < 100, `stopped at ${kept}%`);
        busy = false;
        await throttle(context, page, -1);
        await retry.click();
        await tusRow.locator('.upload-status', { hasText: 'Uploaded' }).waitFor({ timeout: 60_000 });
      } finally {
        t.server.app.server.off('request', cutFirstPatch);
      }
      assert.ok(cut);
      // One creation only, and a HEAD for the offset: resumed, not started over.
      assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1, requests.join('\n'));
      assert.ok(
        requests.some((r) => r.startsWith('HEAD /uploads/')),
        requests.join('\n'),
      );
      const href = await page.locator('#upload-list li.upload').filter({ hasText: 'backup.tar' }).locator('.links dd a').first().getAttribute('href');
      const id = /\/([A-Z0-9]{10})\//.exec(href ?? '')?.[1];
      assert.equal((await t.server.services.store.files.byId(id!))?.sha256, sha256(bigBytes));
      assert.deepEqual(problems, []);
      await context.close();
    } finally {
      await t.close();
    }
  });
});
