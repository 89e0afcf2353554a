// Upload requests, the uploader's side (issue 25): POST /r/<id> as multipart, the page and
// its password form. The file is the owner's, in the request's folder, under the owner's
// limits with the owner's codes; the request's own limits hold exactly; passwords by
// header or cookie, throttled; unknown, closed and expired requests; the setting off.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FileStatus } from '../../src/domain/types.js';
import { assertAtomError, form, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

const T0 = '2026-11-21T10:04:05Z';

let t: TestServer;
let clock: TestClock;
let owner: TestAccount;
before(async () => {
  clock = new TestClock(Date.parse(T0));
  t = await startTestServer({ maxFileSize: 64 * 1024, loginAttemptsPerMinute: 5 }, clock);
  owner = await t.account();
});
after(() => t.close());

const requests = () => t.server.services.store.uploadRequests;

/** A request of `account` made through the API; its id. */
async function newRequest(fields: Record<string, string> = {}, account = owner, on = t): Promise<string> {
  const response = await read(await on.fetch('/requests', { method: 'POST', headers: { Authorization: account.key }, body: form(fields) }));
  assert.equal(response.status, 201, response.body);
  return /<entry>\n {4}<id>([A-Za-z0-9]{22})<\/id>/.exec(response.body)![1]!;
}

/** One file into a request, as a script sends it. */
async function send(id: string, name: string, content: string | Buffer, headers: Record<string, string> = {}, on = t): Promise<ReadResponse> {
  const body = new FormData();
  body.append('upload', new Blob([typeof content === 'string' ? content : new Uint8Array(content)]), name);
  return read(await on.fetch(`/r/${id}`, { method: 'POST', headers, body }));
}

const entryOf = (body: string) => /<entry>\n {4}<id>([A-Z0-9]{10})<\/id>/.exec(body)?.[1] ?? assert.fail(body);

async function settledCounts(id: string): Promise<{ files: number; bytes: number; inFlight: { files: number; bytes: number } }> {
  const row = (await requests().byId(id))!;
  return { files: row.files, bytes: row.bytes, inFlight: await requests().slotsInFlight(id, clock.now) };
}

describe('POST /r/<id>', () => {
  test('201 Upload request upload: id, title, size only; the owner’s file in the request’s folder; counted on the request and the owner’s volume', async () => {
    const folder = await t.server.services.folders.create(owner.account, 'Inbox');
    const id = await newRequest({ folder: folder.id, max_files: '5' });
    const volumeBefore = await t.server.services.limits.uploads.usage(owner.account);
    const response = await send(id, 'notes <draft>.txt', 'twelve bytes');
    assert.equal(response.status, 201, response.body);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const fileId = entryOf(response.body);
    const web = t.server.webUrl;
    assert.equal(
      response.body,
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ed="${web}/developers">`,
        '  <title>Upload request upload</title>',
        `  <id>${t.url}/r/${id}</id>`,
        '  <updated>Sat, 21 Nov 2026 10:04:05 +0000</updated>',
        '  <author>',
        `    <name>${web}</name>`,
        '  </author>',
        '  <entry>',
        `    <id>${fileId}</id>`,
        '    <title>notes &lt;draft&gt;.txt</title>',
        '    <ed:size>12</ed:size>',
        '  </entry>',
        `  <link rel="self" href="/r/${id}"/>`,
        '</feed>',
        '',
      ].join('\n'),
    );
    const file = await t.server.services.store.files.byId(fileId);
    assert.equal(file?.ownerId, owner.account.id);
    assert.equal(file?.folderId, folder.id);
    assert.equal(file?.name, 'notes <draft>.txt');
    assert.deepEqual(await settledCounts(id), { files: 1, bytes: 12, inFlight: { files: 0, bytes: 0 } });
    const volumeAfter = await t.server.services.limits.uploads.usage(owner.account);
    assert.equal(volumeAfter.used - volumeBefore.used, 12, 'the owner’s upload volume paid for it');
    // The owner sees it in the API, counted.
    const shown = await read(await t.fetch(`/requests/${id}`, { headers: { Authorization: owner.key } }));
    assert.match(shown.body, /<ed:files>1<\/ed:files>\n {4}<ed:max_bytes><\/ed:max_bytes>\n {4}<ed:bytes>12<\/ed:bytes>/);
  });

  test('unknown, malformed, closed and expired requests: errorShareNotFound 404 and errorShareExpired 410 from the second it expires', async () => {
    assertAtomError(await send('Aaaaaaaaaaaaaaaaaaaaaa', 'a.txt', 'x'), 404, 'errorShareNotFound');
    assertAtomError(await send('short', 'a.txt', 'x'), 404, 'errorShareNotFound');
    const closed = await newRequest();
    await t.fetch(`/requests/${closed}`, { method: 'DELETE', headers: { Authorization: owner.key } });
    assertAtomError(await send(closed, 'a.txt', 'x'), 404, 'errorShareNotFound');
    const expiring = await newRequest({ expires_in: '60' });
    clock.advance(59_999);
    assert.equal((await send(expiring, 'in time.txt', 'x')).status, 201);
    clock.advance(1);
    assertAtomError(await send(expiring, 'late.txt', 'x'), 410, 'errorShareExpired', 'Upload request has expired');
    const page = await t.fetch(`/r/${expiring}`);
    assert.equal(page.status, 410);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    clock.set(T0);
  });

  test('a protected request: no password or a wrong one is errorSharePassword 401; the header or the cookie opens it; guesses are throttled', async () => {
    const id = await newRequest({ password: 'open sesame', title: 'Secret inbox' });
    assertAtomError(await send(id, 'a.txt', 'x'), 401, 'errorSharePassword');
    assertAtomError(await send(id, 'a.txt', 'x', { 'Filehaven-Share-Password': 'wrong' }), 401, 'errorSharePassword');
    assert.equal((await send(id, 'a.txt', 'by header', { 'Filehaven-Share-Password': 'open sesame' })).status, 201);

    // The page shows only the form, nothing of the request, before the password.
    const locked = await read(await t.fetch(`/r/${id}`));
    assert.equal(locked.status, 401);
    assert.match(locked.body, /<form class="stack" method="post" action="\/r\/[A-Za-z0-9]{22}\/password">/);
    assert.ok(!locked.body.includes('Secret inbox'), 'the title is not shown before the password');
    const wrongForm = await t.fetch(`/r/${id}/password`, { method: 'POST', body: form({ password: 'nope' }), redirect: 'manual' });
    assert.equal(wrongForm.status, 401);
    assert.equal(wrongForm.headers.get('set-cookie'), null);
    const rightForm = await t.fetch(`/r/${id}/password`, { method: 'POST', body: form({ password: 'open sesame' }), redirect: 'manual' });
    assert.equal(rightForm.status, 303);
    assert.equal(rightForm.headers.get('location'), `/r/${id}`);
    const cookie = (rightForm.headers.get('set-cookie') ?? '').split(';')[0]!;
    assert.match(cookie, new RegExp(`^fh_link_${id}=`));
    assert.match(rightForm.headers.get('set-cookie') ?? '', /HttpOnly/i);
    const open = await read(await t.fetch(`/r/${id}`, { headers: { Cookie: cookie } }));
    assert.equal(open.status, 200);
    assert.match(open.body, /<h1>Secret inbox<\/h1>/);
    assert.equal((await send(id, 'b.txt', 'by cookie', { Cookie: cookie })).status, 201);
    // Another request's cookie opens nothing else.
    const other = await newRequest({ password: 'open sesame' });
    assertAtomError(await send(other, 'c.txt', 'x', { Cookie: cookie.replace(id, other) }), 401, 'errorSharePassword');
    // The owner changes the password: the old cookie opens nothing.
    await t.fetch(`/requests/${id}`, { method: 'PUT', headers: { Authorization: owner.key }, body: form({ password: 'new one' }) });
    assertAtomError(await send(id, 'd.txt', 'x', { Cookie: cookie }), 401, 'errorSharePassword');

    // Guesses: 5 per minute per address (loginAttemptsPerMinute); then 429, the right one included.
    const guessed = await newRequest({ password: 'right' });
    const answers: number[] = [];
    for (let i = 0; i < 8; i++) answers.push((await send(guessed, 'g.txt', 'x', { 'Filehaven-Share-Password': `guess ${i}` })).status);
    assert.ok(answers.includes(429), answers.join(','));
    const throttled = await send(guessed, 'g.txt', 'x', { 'Filehaven-Share-Password': 'right' });
    assertAtomError(throttled, 429, 'errorSharePassword');
    assert.ok(Number(throttled.headers.get('retry-after')) >= 1);
    assert.deepEqual(await settledCounts(guessed), { files: 0, bytes: 0, inFlight: { files: 0, bytes: 0 } });
  });

  test('the owner’s limits with the owner’s codes: the server’s largest file, the blacklist, the owner’s upload volume', async () => {
    const id = await newRequest();
    assertAtomError(await send(id, 'big.bin', Buffer.alloc(64 * 1024 + 1, 1)), 413, 'errorFileSize');
    const banned = 'a file the operator banned';
    await t.server.services.store.blacklist.add(createHash('sha256').update(banned).digest('hex'), 'test', clock.now);
    assertAtomError(await send(id, 'banned.txt', banned), 403, 'errorFileInBlackList');
    assert.deepEqual(await settledCounts(id), { files: 0, bytes: 0, inFlight: { files: 0, bytes: 0 } });

    const small = await startTestServer({ uploadVolumeFree: 100 });
    try {
      const account = await small.account();
      const rid = await newRequest({}, account, small);
      assert.equal((await send(rid, 'first.txt', 'x'.repeat(60), {}, small)).status, 201);
      const refused = await send(rid, 'second.txt', 'y'.repeat(60), {}, small);
      assertAtomError(refused, 429, 'errorUploadLimit', 'Upload limit exceeded');
      assert.ok(Number(refused.headers.get('retry-after')) > 60, 'the owner’s volume answers with its own Retry-After');
      const row = (await small.server.services.store.uploadRequests.byId(rid))!;
      assert.deepEqual([row.files, row.bytes], [1, 60]);
    } finally {
      await small.close();
    }
  });

  test('the request’s limits, exact: max_file_size errorFileSize; max_bytes and max_files errorUploadLimit; nothing past them stored', async () => {
    const sized = await newRequest({ max_file_size: '10' });
    const tooBig = await send(sized, 'eleven.txt', '01234567890');
    assertAtomError(tooBig, 413, 'errorFileSize', 'File size exceeds the limit of 10 bytes');
    assert.equal((await send(sized, 'ten.txt', '0123456789')).status, 201);

    const bytes = await newRequest({ max_bytes: '10' });
    assert.equal((await send(bytes, 'six.txt', '012345')).status, 201);
    assertAtomError(await send(bytes, 'five.txt', '01234'), 429, 'errorUploadLimit', 'Upload request is full: its file or byte limit is reached');
    assert.equal((await send(bytes, 'four.txt', '0123')).status, 201);
    assertAtomError(await send(bytes, 'one.txt', '0'), 429, 'errorUploadLimit');
    assert.deepEqual(await settledCounts(bytes), { files: 2, bytes: 10, inFlight: { files: 0, bytes: 0 } });

    const files = await newRequest({ max_files: '2' });
    assert.equal((await send(files, '1.txt', 'a')).status, 201);
    assert.equal((await send(files, '2.txt', 'b')).status, 201);
    const full = await send(files, '3.txt', 'c');
    assertAtomError(full, 429, 'errorUploadLimit');
    assert.equal(full.headers.get('retry-after'), '60');
    // The owner raises the limit: one more fits.
    await t.fetch(`/requests/${files}`, { method: 'PUT', headers: { Authorization: owner.key }, body: form({ max_files: '3' }) });
    assert.equal((await send(files, '3.txt', 'c')).status, 201);
    assert.deepEqual(await settledCounts(files), { files: 3, bytes: 3, inFlight: { files: 0, bytes: 0 } });
  });

  test('an upload cut halfway leaves no file and frees its slot for the next one', async () => {
    const id = await newRequest({ max_files: '1' });
    const boundary = 'cutboundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="cut.bin"\r\n\r\n`);
    const content = Buffer.alloc(40 * 1024, 7);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const url = new URL(`${t.url}/r/${id}`);
    await new Promise<void>((resolve) => {
      const request = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': head.length + content.length + tail.length },
      });
      request.on('error', () => resolve());
      request.on('response', () => resolve());
      request.write(head);
      request.write(content.subarray(0, content.length / 2));
      // Wait until the server holds the slot (the bytes are arriving), then cut.
      void (async () => {
        for (let i = 0; i < 500 && (await requests().slotsInFlight(id, clock.now)).files === 0; i++) await sleep(10);
        request.destroy();
        resolve();
      })();
    });
    for (let i = 0; i < 500 && (await requests().slotsInFlight(id, clock.now)).files > 0; i++) await sleep(10);
    assert.deepEqual(await settledCounts(id), { files: 0, bytes: 0, inFlight: { files: 0, bytes: 0 } }, 'the slot was freed');
    const names = (
      await t.server.services.listing.files(owner.account, { states: [FileStatus.Active, FileStatus.Blocked], folder: undefined, limit: 500 })
    ).items.map((f) => f.name);
    assert.ok(!names.includes('cut.bin'), 'no file of the cut upload');
    assert.equal((await send(id, 'whole.txt', 'whole')).status, 201, 'the slot is free for the next upload');
  });
});

describe('the page', () => {
  test('title, message, limits in human sizes, the upload form and the script; nothing of the owner’s account', async () => {
    const id = await newRequest({ title: 'Send me <slides>', message: 'By Friday & thanks', max_files: '4', max_bytes: '3145728', max_file_size: '1048576' });
    const page = await read(await t.fetch(`/r/${id}`));
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /connect-src 'self'/);
    assert.match(page.body, /<h1>Send me &lt;slides&gt;<\/h1>/);
    assert.match(page.body, /<p class="request-message">By Friday &amp; thanks<\/p>/);
    assert.match(page.body, /Up to 64\.0 KiB per file · 4 files left · 3\.0 MiB left in all</);
    assert.match(
      page.body,
      new RegExp(
        `<form class="upload-form" id="request-form" method="post" action="/r/${id}" enctype="multipart/form-data" data-tus-endpoint="/uploads" data-request="${id}"`,
      ),
    );
    const script = /<script src="(\/static\/request-upload\.[0-9a-f]{16}\.js)" defer><\/script>/.exec(page.body)?.[1] ?? assert.fail('no request script');
    const served = await t.fetch(script);
    assert.equal(served.status, 200);
    assert.ok(!page.body.includes(owner.login), 'the owner’s login is not on the page');
    // A browser without the script gets a page after its form.
    const body = new FormData();
    body.append('upload', new Blob(['plain form']), 'form.txt');
    const sent = await read(await t.fetch(`/r/${id}`, { method: 'POST', headers: { Accept: 'text/html' }, body }));
    assert.equal(sent.status, 201);
    assert.match(sent.body, /<bdi>form\.txt<\/bdi> \(10 B\) was received/);
  });

  test('--upload-requests off: the page and the upload are errorPermissionDenied 403', async () => {
    const id = await newRequest();
    const off = await t.sibling({ uploadRequests: false });
    try {
      const page = await off.fetch(`/r/${id}`);
      assert.equal(page.status, 403);
      assertAtomError(await send(id, 'a.txt', 'x', {}, off), 403, 'errorPermissionDenied', 'Upload requests are turned off on this server');
    } finally {
      await off.close();
    }
  });
});
