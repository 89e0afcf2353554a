import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomPayload, uploadNamed } from '../helpers/downloads.js';
import { atomError, startTestServer, type TestServer } from '../helpers/server.js';

// The public HTML pages of API.md section 1: download page, delete link, folder page.

let t: TestServer;
let key: string;
before(async () => {
  t = await startTestServer();
  ({ key } = await t.account({ premiumDays: 30 }));
});
after(() => t.close());

const pathOf = (url: string) => new URL(url).pathname;

/** A page: asserts HTML and the page security headers, returns the body. */
async function page(response: Response, status: number): Promise<string> {
  const body = await response.text();
  assert.equal(response.status, status, body);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html; charset=utf-8$/);
  assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  assert.match(body, /^<!doctype html>/i);
  return body;
}

describe('download page', () => {
  test('shows the name, the size and a link to the raw download', async () => {
    const up = await t.upload(key, 'holiday photos.zip', randomPayload(300 * 1024));
    assert.equal(up.response.status, 201, up.body);
    const response = await fetch(up.downloadLink);
    const body = await page(response, 200);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.match(body, /<h1>holiday photos\.zip<\/h1>/);
    assert.ok(body.includes('300.0 KiB'), body);
    assert.ok(body.includes(`href="${up.downloadLink}?download=1"`), body);
    // The page is the page, never the bytes.
    assert.ok(body.length < 20_000);
  });

  test('escapes a hostile file name everywhere on the page', async () => {
    const name = `<img src=x onerror="alert(1)">&<b>'.txt`;
    const up = await uploadNamed(t, key, name, 'payload');
    // The name was stored exactly as sent.
    const details = await t.fetch(`/files/${up.id}`, { headers: { Authorization: key } });
    const detailsBody = await details.text();
    assert.equal(details.status, 200, detailsBody);
    assert.ok(detailsBody.includes('<title>&lt;img src=x onerror="alert(1)"&gt;&amp;&lt;b&gt;'), detailsBody);
    const body = await page(await fetch(up.downloadLink), 200);
    assert.ok(!body.includes('<img'), body);
    assert.ok(!body.includes('<b>'), body);
    assert.ok(!body.includes('onerror="'), body);
    assert.ok(body.includes('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&lt;b&gt;&#39;.txt'), body);
  });

  test('a blocked file gets a 410 page, never the bytes', async () => {
    const secret = 'blocked-secret-bytes';
    const up = await t.upload(key, 'blocked.txt', secret);
    await t.server.services.files.block(up.id);
    for (const url of [up.downloadLink, `${up.downloadLink}?download=1`]) {
      const body = await page(await fetch(url), 410);
      assert.ok(!body.includes(secret));
    }
    const head = await fetch(`${up.downloadLink}?download=1`, { method: 'HEAD' });
    assert.equal(head.status, 410);
    assert.equal(head.headers.get('content-disposition'), null);
  });

  test('a deleted or unknown file gets a 404 page, never the bytes', async () => {
    const secret = 'deleted-secret-bytes';
    const up = await t.upload(key, 'gone.txt', secret);
    const del = await t.fetch(`/files/${up.id}`, { method: 'DELETE', headers: { Authorization: key } });
    assert.equal(del.status, 200, await del.text());
    for (const url of [up.downloadLink, `${up.downloadLink}?download=1`]) {
      const body = await page(await fetch(url), 404);
      assert.ok(!body.includes(secret));
    }
    await page(await t.fetch('/ZZZZZZZZZZ/gone.txt'), 404);
    await page(await t.fetch('/ZZZZZZZZZZ/gone.txt?download=1'), 404);
  });
});

describe('delete link', () => {
  test('GET shows a confirm page with a POST form and deletes nothing', async () => {
    const up = await t.upload(key, 'keep me.txt', 'still here');
    const body = await page(await fetch(up.deleteLink), 200);
    assert.match(body, /<form method="post"/i);
    assert.ok(body.includes('keep me.txt'));
    const download = await fetch(`${up.downloadLink}?download=1`);
    assert.equal(download.status, 200);
    assert.equal(await download.text(), 'still here');
  });

  test('POST deletes the file: done page, then API and download page answer 404', async () => {
    const up = await t.upload(key, 'delete me.txt', 'bye');
    const body = await page(await fetch(up.deleteLink, { method: 'POST' }), 200);
    assert.match(body, /deleted/i);
    for (const path of [`/files/${up.id}`, `/files/${up.id};DirectLink`]) {
      const api = await t.fetch(path, { headers: { Authorization: key } });
      const apiBody = await api.text();
      assert.equal(api.status, 404, apiBody);
      assert.equal(atomError(apiBody)?.code, 'errorFileNotFound');
    }
    await page(await fetch(up.downloadLink), 404);
    await page(await fetch(`${up.downloadLink}?download=1`), 404);
  });

  test('a second POST, and a GET afterwards, answer 404', async () => {
    const up = await t.upload(key, 'twice.txt', 'x');
    await page(await fetch(up.deleteLink, { method: 'POST' }), 200);
    await page(await fetch(up.deleteLink, { method: 'POST' }), 404);
    await page(await fetch(up.deleteLink), 404);
  });

  test('a wrong secret answers 404 and deletes nothing', async () => {
    const up = await t.upload(key, 'guarded.txt', 'safe');
    const secret = pathOf(up.deleteLink).split('/').pop()!;
    const wrong = secret.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    const wrongLink = up.deleteLink.replace(secret, wrong);
    await page(await fetch(wrongLink), 404);
    await page(await fetch(wrongLink, { method: 'POST' }), 404);
    await page(await fetch(up.deleteLink.replace(secret, 'not-hex')), 404);
    // Another file's id with this secret is not accepted either.
    const other = await t.upload(key, 'other.txt', 'other');
    await page(await fetch(up.deleteLink.replace(up.id, other.id), { method: 'POST' }), 404);
    const download = await fetch(`${up.downloadLink}?download=1`);
    assert.equal(await download.text(), 'safe');
    assert.equal((await fetch(`${other.downloadLink}?download=1`)).status, 200);
  });
});

describe('folder page', () => {
  async function createFolder(name: string): Promise<string> {
    const response = await t.fetch('/folders', { method: 'POST', headers: { Authorization: key }, body: new URLSearchParams({ name }) });
    const body = await response.text();
    assert.equal(response.status, 201, body);
    const id = /<entry>\s*<id>([^<]+)<\/id>/.exec(body)?.[1];
    assert.ok(id, body);
    return id;
  }

  async function move(folderId: string, ids: string[]): Promise<void> {
    const form = new URLSearchParams({ _method: 'PUT' });
    for (const [i, id] of ids.entries()) form.append(`files[${i}]`, id);
    const response = await t.fetch(`/folders/${folderId};files`, { method: 'POST', headers: { Authorization: key }, body: form });
    assert.equal(response.status, 200, await response.text());
  }

  test('lists the active files with links and their total size', async () => {
    const folderId = await createFolder('Shared <stuff>');
    const a = await t.upload(key, 'alpha.bin', randomPayload(1000));
    const b = await t.upload(key, 'beta & gamma.bin', randomPayload(2000));
    const blocked = await t.upload(key, 'blocked-one.bin', randomPayload(5000));
    const deleted = await t.upload(key, 'deleted-one.bin', randomPayload(7000));
    await move(folderId, [a.id, b.id, blocked.id, deleted.id]);
    await t.server.services.files.block(blocked.id);
    assert.equal((await fetch(deleted.deleteLink, { method: 'POST' })).status, 200);

    const body = await page(await t.fetch(`/folder/${folderId}`), 200);
    assert.ok(body.includes('Shared &lt;stuff&gt;'), body);
    assert.ok(body.includes(`href="${a.downloadLink}"`), body);
    assert.ok(body.includes('>alpha.bin</a>'), body);
    assert.ok(body.includes(`href="${b.downloadLink}"`), body);
    assert.ok(body.includes('>beta &amp; gamma.bin</a>'), body);
    assert.ok(!body.includes('blocked-one'), body);
    assert.ok(!body.includes('deleted-one'), body);
    assert.ok(!body.includes(blocked.id) && !body.includes(deleted.id), body);
    // 3000 bytes of active files; the blocked and deleted ones are not counted.
    assert.ok(body.includes('2 files'), body);
    assert.ok(body.includes('2.9 KiB'), body);
  });

  test('a big folder is shown 200 files per page, newest first, with next and first page links; the totals count every file', async () => {
    const folderId = await createFolder('Big folder');
    const seed = await t.upload(key, 'seed.bin', randomPayload(10));
    await move(folderId, [seed.id]);
    const store = t.server.services.store;
    const seedRow = (await store.files.byId(seed.id))!;
    // 204 more rows of the same bytes, as 204 copies moved in would be (rows only: fast).
    for (let i = 0; i < 204; i++) {
      await store.files.create({
        id: `BIG${String(i).padStart(7, '0')}`,
        ownerId: seedRow.ownerId,
        folderId,
        name: `bulk ${i}.bin`,
        size: 10,
        sha256: seedRow.sha256,
        deleteHash: '0'.repeat(64),
        createdAt: seedRow.createdAt + 1 + i,
      });
    }
    const names = (body: string) =>
      [...body.matchAll(/<tr><td><a href="[^"]+">([^<]+)<\/a><\/td><td class="size">[^<]*<\/td><td class="date">/g)].map((m) => m[1]!);

    const first = await page(await t.fetch(`/folder/${folderId}`), 200);
    assert.ok(first.includes('205 files · 2.0 KiB'), first);
    const firstNames = names(first);
    assert.equal(firstNames.length, 200);
    assert.deepEqual(firstNames.slice(0, 2), ['bulk 203.bin', 'bulk 202.bin'], 'newest first');
    const next = /<a href="([^"]+)">Next page<\/a>/.exec(first)?.[1];
    assert.ok(next?.startsWith(`${t.url}/folder/${folderId}?cursor=`), first);
    assert.ok(!first.includes('First page'), first);

    const second = await page(await fetch(next!), 200);
    assert.ok(second.includes('205 files · 2.0 KiB'), second);
    assert.deepEqual(names(second), ['bulk 3.bin', 'bulk 2.bin', 'bulk 1.bin', 'bulk 0.bin', 'seed.bin']);
    assert.ok(second.includes(`<a href="${t.url}/folder/${folderId}">First page</a>`), second);
    assert.ok(!second.includes('Next page'), second);
    assert.equal(new Set([...firstNames, ...names(second)]).size, 205, 'every file once');

    await page(await t.fetch(`/folder/${folderId}?cursor=not-a-cursor`), 400);
  });

  test('an empty folder is listed as empty', async () => {
    const folderId = await createFolder('nothing here');
    const body = await page(await t.fetch(`/folder/${folderId}`), 200);
    assert.ok(body.includes('0 files'), body);
    assert.ok(!body.includes('<table'), body);
  });

  test('an unknown folder gets a 404 page', async () => {
    await page(await t.fetch('/folder/ZZZZZZZZZZ'), 404);
    await page(await t.fetch('/folder/not-an-id'), 404);
  });
});
