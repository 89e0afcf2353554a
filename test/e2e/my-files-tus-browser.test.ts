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

// The resumable web upload in Debian's Chromium against a real server: a file over 4 MiB
// goes through tus (POST /uploads, then PATCH) and shows its links; a small one still goes
// through the form's POST; a throttled upload cut by a reload continues from where it
// stopped when the same file is chosen again (one creation only, the same SHA-256), and
// one whose connection the server loses, or whose request fails, picks up by itself; one
// that had finished unseen shows its link without sending anything; a cancelled one is
// terminated on the server; a refused one shows the server's message.

const TIMEOUT = { timeout: 120_000 };
const MiB = 1024 * 1024;

/** Every text the upload rows' status lines take, in order, kept across reloads in `window.statusLog`. */
async function recordStatuses(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const log: string[] = [];
    (window as unknown as { statusLog: string[] }).statusLog = log;
    new MutationObserver((records) => {
      for (const record of records) {
        const node = record.target.nodeType === Node.TEXT_NODE ? record.target.parentElement : (record.target as Element);
        const status = node?.closest?.('.upload-status');
        if (status) log.push(status.textContent ?? '');
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
}

const statusLog = (page: Page): Promise<string[]> => page.evaluate(() => (window as unknown as { statusLog: string[] }).statusLog);

/** tus-js-client's remembered uploads in this page's localStorage. */
const rememberedUploads = (page: Page): Promise<string[]> => page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('tus::')));

/** The id in a download link (/<id>/<name>). */
const idOf = (link: string): string => /\/([A-Z0-9]{10})\/[^/]+$/.exec(new URL(link).pathname)?.[1] ?? '';
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('resumable uploads on My files in Chromium', { skip: chromiumSkip() }, () => {
  let t: TestServer;
  let browser: Browser;
  let work: string;
  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 });
    browser = await launchChromium();
    work = await mkdtemp(path.join(tmpdir(), 'filehaven-tus-e2e-'));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** A file on disk (so that choosing it twice gives the browser the same name, size and date). */
  const fileOnDisk = async (name: string, size: number): Promise<{ path: string; bytes: Buffer }> => {
    const bytes = randomBytes(size);
    const at = path.join(work, name);
    await writeFile(at, bytes);
    return { path: at, bytes };
  };

  const signedInPage = async (): Promise<{ context: BrowserContext; page: Page; user: TestAccount; requests: string[] }> => {
    const user = await t.account();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await recordStatuses(context);
    const requests = recordUploadRequests(context);
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signIn(page, t, user);
    return { context, page, user, requests };
  };

  test('a 24 MiB file goes through tus and shows its links; a small file still takes the form POST', TIMEOUT, async () => {
    const { context, page, user, requests } = await signedInPage();
    const problems = watchErrors(page);
    await page.goto(`${t.url}/my/files`);
    // 8 MiB/s up: three seconds, long enough to see the speed.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 8 * MiB });
    // An awkward name: it reaches the page as text only.
    const big = await fileOnDisk('big «video» <b>&.bin', 24 * MiB);
    await page.locator('#upload-files').setInputFiles(big.path);
    const row = page.locator('#upload-list li.upload').first();
    // Sent so far, speed and time left while it runs (the line fills once a second has passed).
    const detail = row.locator('.upload-detail').filter({ hasText: /^[\d.]+ MiB of 24\.0 MiB · [\d.]+ MiB\/s · about \d+ s left$/ });
    await detail.waitFor();
    assert.equal(await detail.getAttribute('aria-live'), 'off', 'announced in tenths by the status line instead');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await row.locator('.upload-status', { hasText: 'Uploaded' }).waitFor({ timeout: 60_000 });
    assert.equal(await row.locator('progress').evaluate((bar) => (bar as HTMLProgressElement).value), 100);
    assert.equal(await row.locator('.file-name').textContent(), 'big «video» <b>&.bin');
    const download = await row.locator('.links dd a').first().getAttribute('href');
    const remove = await row.locator('a.delete-link').getAttribute('href');
    assert.match(download ?? '', /^http:\/\/127\.0\.0\.1:\d+\/[A-Z0-9]{10}\//);
    assert.match(remove ?? '', /\/[A-Z0-9]{10}\/delete\//);
    // One creation, the bytes by PATCH, nothing through the form.
    assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1, requests.join('\n'));
    assert.ok(
      requests.some((r) => /^PATCH \/uploads\/./.test(r)),
      requests.join('\n'),
    );
    assert.equal(requests.filter((r) => r === 'POST /my/files/upload').length, 0);
    // The stored file is the chosen one, in the account's root, and the browser forgot the upload.
    const stored = await t.server.services.store.files.byId(idOf(download!));
    assert.equal(stored?.sha256, sha256(big.bytes));
    assert.equal(stored?.size, 24 * MiB);
    assert.equal(stored?.ownerId, user.account.id);
    assert.equal(stored?.folderId, null);
    assert.deepEqual(await rememberedUploads(page), []);
    // The list refreshes by itself.
    await page.locator('#files .file-list').getByRole('link', { name: 'big «video» <b>&.bin' }).waitFor();
    await screenshots(page, '20-my-files-tus-uploaded');

    // A small file: the form's POST, no tus request.
    requests.length = 0;
    await page.locator('#upload-files').setInputFiles({ name: 'small.txt', mimeType: 'text/plain', buffer: Buffer.from('a small file\n') });
    await page.locator('#upload-list li.upload').nth(1).locator('.upload-status', { hasText: 'Uploaded' }).waitFor();
    assert.deepEqual(requests, ['POST /my/files/upload']);
    await page.locator('#files .file-list').getByRole('link', { name: 'small.txt' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('an upload cut by a reload continues from where it stopped when the same file is chosen again', TIMEOUT, async () => {
    const { context, page, user, requests } = await signedInPage();
    const problems = watchErrors(page);
    const folder = await t.server.services.folders.create(user.account, 'Films');
    await page.goto(`${t.url}/my/files?folder=${folder.id}`);
    const big = await fileOnDisk('holiday film.bin', 24 * MiB);
    // 2 MiB/s up: the upload takes about 12 s, long enough to reload in the middle.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 2 * MiB });
    await page.locator('#upload-files').setInputFiles(big.path);
    await page.waitForFunction(() => (document.querySelector<HTMLProgressElement>('#upload-list progress')?.value ?? 0) >= 25, undefined, { timeout: 30_000 });
    assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1);
    assert.equal((await rememberedUploads(page)).length, 1, 'the upload is remembered while it runs');

    await page.reload();
    // The page names the unfinished upload and how to continue it.
    const unfinished = page.locator('#unfinished-uploads');
    await unfinished.getByText('holiday film.bin').waitFor();
    await unfinished.getByText(/Choose the same file again/).waitFor();
    await screenshots(page, '21-my-files-tus-unfinished');
    // Faster now, still slow enough to watch.
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 8 * MiB });
    await page.locator('#upload-files').setInputFiles(big.path);
    const row = page.locator('#upload-list li.upload').first();
    await row.locator('.upload-status', { hasText: 'Uploaded' }).waitFor({ timeout: 60_000 });
    assert.equal(await unfinished.count(), 0, 'no longer listed as unfinished');

    // Resumed, not started over: one creation in all, a HEAD for the offset, and the page said so.
    const resumed = (await statusLog(page)).map((text) => /^Resuming from (\d+)%/.exec(text)?.[1]).find(Boolean);
    assert.ok(resumed !== undefined, (await statusLog(page)).join('\n'));
    assert.ok(Number(resumed) >= 20 && Number(resumed) < 100, `resumed from ${resumed}%`);
    assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1, requests.join('\n'));
    assert.ok(
      requests.some((r) => /^HEAD \/uploads\/./.test(r)),
      requests.join('\n'),
    );

    const download = await row.locator('.links dd a').first().getAttribute('href');
    assert.ok(await row.locator('a.delete-link').count(), 'the final answer carries the delete link');
    const stored = await t.server.services.store.files.byId(idOf(download!));
    assert.equal(stored?.sha256, sha256(big.bytes), 'the stored bytes are the file, resumed or not');
    assert.equal(stored?.folderId, folder.id, 'into the folder being viewed (Upload-Metadata folder)');
    assert.deepEqual(await rememberedUploads(page), []);
    await screenshots(page, '22-my-files-tus-resumed');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('a connection cut in the middle of an upload is picked up again by itself', TIMEOUT, async () => {
    const { context, page, requests } = await signedInPage();
    const problems = watchErrors(page, [/ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|ERR_CONNECTION_CLOSED|status of 409/]);
    await page.goto(`${t.url}/my/files`);
    const big = await fileOnDisk('cut.bin', 16 * MiB);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 4 * MiB });
    // The server's side of the first PATCH's connection goes away after a second and a half,
    // with part of the file received. (Chromium then sends the PATCH again by itself, from
    // the start, and the server's 409 says it is not at that offset: tus-js-client asks for
    // the offset with a HEAD and sends the rest.)
    let cut = false;
    const cutFirstPatch = (request: IncomingMessage) => {
      if (cut || request.method !== 'PATCH' || !request.url?.startsWith('/uploads/')) return;
      cut = true;
      setTimeout(() => request.socket.destroy(), 1500);
    };
    t.server.app.server.on('request', cutFirstPatch);
    try {
      await page.locator('#upload-files').setInputFiles(big.path);
      const row = page.locator('#upload-list li.upload').first();
      await row.locator('.upload-status', { hasText: 'Uploaded' }).waitFor({ timeout: 60_000 });
      assert.ok(cut);
      const statuses = await statusLog(page);
      const resumed = statuses.map((text) => /^Resuming from (\d+)%/.exec(text)?.[1]).find(Boolean);
      assert.ok(Number(resumed) > 0, statuses.join('\n'));
      assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1, requests.join('\n'));
      assert.ok(requests.filter((r) => r.startsWith('PATCH ')).length >= 2, requests.join('\n'));
      assert.ok(
        requests.some((r) => r.startsWith('HEAD ')),
        requests.join('\n'),
      );
      const download = await row.locator('.links dd a').first().getAttribute('href');
      assert.equal((await t.server.services.store.files.byId(idOf(download!)))?.sha256, sha256(big.bytes));
    } finally {
      t.server.app.server.off('request', cutFirstPatch);
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('a request that fails for want of a connection is retried by itself, with word of it', TIMEOUT, async () => {
    const { context, page, requests } = await signedInPage();
    const problems = watchErrors(page, [/ERR_CONNECTION_RESET/]);
    await page.goto(`${t.url}/my/files`);
    const file = await fileOnDisk('retried.bin', 6 * MiB);
    // The first PATCH fails as a reset connection would, before the server sees it.
    let failed = 0;
    await page.route('**/uploads/*', (route) => (route.request().method() === 'PATCH' && failed++ === 0 ? route.abort('connectionreset') : route.fallback()));
    await page.locator('#upload-files').setInputFiles(file.path);
    const row = page.locator('#upload-list li.upload').first();
    await row.locator('.upload-status', { hasText: 'Uploaded' }).waitFor();
    assert.ok((await statusLog(page)).includes('Connection lost. Trying again (1 of 6)…'), (await statusLog(page)).join('\n'));
    assert.equal(failed, 2, 'one PATCH refused, the next one let through');
    assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1, requests.join('\n'));
    assert.ok(
      requests.some((r) => r.startsWith('HEAD ')),
      requests.join('\n'),
    );
    const download = await row.locator('.links dd a').first().getAttribute('href');
    assert.equal((await t.server.services.store.files.byId(idOf(download!)))?.sha256, sha256(file.bytes));
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('choosing a file whose upload had finished before the reload shows its link without sending it again', TIMEOUT, async () => {
    const { context, page, user, requests } = await signedInPage();
    const problems = watchErrors(page);
    // An upload finished (here through the API, with the account's key) whose answer the
    // page never saw: the browser still remembers it, under tus-js-client's fingerprint.
    const size = 5 * MiB;
    const name = 'finished earlier.bin';
    const created = await t.fetch('/uploads', {
      method: 'POST',
      headers: {
        Authorization: user.key,
        'Tus-Resumable': '1.0.0',
        'Upload-Length': String(size),
        'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')}`,
      },
    });
    assert.equal(created.status, 201);
    const uploadUrl = created.headers.get('location')!;
    const finished = await t.fetch(new URL(uploadUrl).pathname, {
      method: 'PATCH',
      headers: { Authorization: user.key, 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      body: new Uint8Array(size),
    });
    assert.equal(finished.status, 204, 'tus 1.0: the finishing PATCH is 204 No Content');
    const fileId = finished.headers.get('filehaven-file-id');
    const lastModified = Date.parse('2026-01-02T03:04:05Z');
    await page.goto(`${t.url}/my/files`);
    await page.evaluate(
      ({ account, name, size, lastModified, uploadUrl }) => {
        const fingerprint = `filehaven:${account}:tus-br-${name}-application/octet-stream-${size}-${lastModified}-/uploads`;
        localStorage.setItem(`tus::${fingerprint}::1`, JSON.stringify({ size, metadata: { filename: name }, creationTime: new Date().toString(), uploadUrl }));
      },
      { account: user.account.id, name, size, lastModified, uploadUrl },
    );
    await page.reload();
    await page.locator('#unfinished-uploads').getByText(name).waitFor();
    requests.length = 0;
    // The same file, dropped on the page.
    const transfer = await page.evaluateHandle(
      ({ name, size, lastModified }) => {
        const data = new DataTransfer();
        data.items.add(new File([new Uint8Array(size)], name, { type: 'application/octet-stream', lastModified }));
        return data;
      },
      { name, size, lastModified },
    );
    await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer: transfer });
    const row = page.locator('#upload-list li.upload').first();
    await row.locator('.upload-status', { hasText: 'Uploaded' }).waitFor();
    assert.deepEqual(
      requests.filter((r) => !r.startsWith('HEAD ')),
      [],
      'nothing created or sent again',
    );
    assert.equal(await row.locator('.links dd a').first().getAttribute('href'), `${t.url}/${fileId}/finished%20earlier.bin`);
    // The delete link was the finishing answer's, and is not known any more.
    assert.equal(await row.locator('a.delete-link').count(), 0);
    await row.getByText('Shown only when the upload finished.', { exact: false }).waitFor();
    assert.deepEqual(await rememberedUploads(page), []);
    assert.equal(await page.locator('#unfinished-uploads').count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('Cancel ends a running upload on the server too (tus termination)', TIMEOUT, async () => {
    const { context, page, requests } = await signedInPage();
    // The HEAD of the terminated upload below is a 404, which the browser logs.
    const problems = watchErrors(page, [/status of 404/]);
    await page.goto(`${t.url}/my/files`);
    const big = await fileOnDisk('cancelled.bin', 12 * MiB);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 1 * MiB });
    await page.locator('#upload-files').setInputFiles(big.path);
    await page.waitForFunction(() => (document.querySelector<HTMLProgressElement>('#upload-list progress')?.value ?? 0) >= 10, undefined, { timeout: 30_000 });
    const terminated = page.waitForResponse((response) => response.request().method() === 'DELETE' && new URL(response.url()).pathname.startsWith('/uploads/'));
    await page.getByRole('button', { name: 'Cancel upload of cancelled.bin' }).click();
    assert.equal((await terminated).status(), 204);
    const row = page.locator('#upload-list li.upload').first();
    await row.locator('.upload-status', { hasText: 'Upload cancelled.' }).waitFor();
    assert.equal(requests.filter((r) => r === 'POST /uploads').length, 1);
    assert.deepEqual(await rememberedUploads(page), []);
    // The upload URL is gone: a HEAD of it is 404 or 410.
    const url = requests.find((r) => r.startsWith('DELETE '))!.slice('DELETE '.length);
    const head = await page.evaluate(async (at) => {
      const csrf = document.querySelector<HTMLInputElement>('input[name="csrf"]')?.value ?? '';
      return (await fetch(at, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0', 'Filehaven-Csrf': csrf } })).status;
    }, url);
    assert.ok(head === 404 || head === 410, `HEAD after termination: ${head}`);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a refused upload says the server's refusal in words (a file over the size limit the page did not know)", TIMEOUT, async () => {
    const small = await startTestServer({ loginAttemptsPerMinute: 1000, maxFileSize: 5 * MiB });
    try {
      const user = await small.account();
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      const problems = watchErrors(page, [/status of 413/]);
      await signIn(page, small, user);
      await page.goto(`${small.url}/my/files`);
      // As if the limit had been lowered since the page was served: the page does not refuse
      // the file itself (my-files-upload-feedback-browser.test.ts), so the server does.
      await page.evaluate(() => document.getElementById('upload-limits')?.removeAttribute('data-max-file-size'));
      const big = await fileOnDisk('too big.bin', 6 * MiB);
      await page.locator('#upload-files').setInputFiles(big.path);
      const status = page.locator('#upload-list .upload.failed .upload-status');
      await status.waitFor();
      // The Atom error (errorFileSize, "… the limit of 5242880 bytes") in words and human sizes.
      assert.equal(await status.textContent(), 'This file is larger than the limit of 5.0 MiB per file. Nothing of it was kept.');
      assert.deepEqual(await rememberedUploads(page), []);
      await screenshots(page, '23-my-files-tus-refused');
      assert.deepEqual(problems, []);
      await context.close();
    } finally {
      await small.close();
    }
  });
});
