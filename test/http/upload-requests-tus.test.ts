// Resumable uploads into upload requests (issue 25): /uploads with the request in the
// metadata and its password in Filehaven-Share-Password, no API key. The owner's account
// owns the upload; its URL reaches that upload only, never another of the owner's; the
// finishing answer leads nowhere into the owner's account; the request's limits hold.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, form, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';
import { createUpload, headUpload, patchUpload, TUS } from '../helpers/tus.js';

let t: TestServer;
let clock: TestClock;
let owner: TestAccount;
before(async () => {
  clock = new TestClock(Date.parse('2026-11-21T10:04:05Z'));
  t = await startTestServer({}, clock);
  owner = await t.account();
});
after(() => t.close());

const PASSWORD = { 'Filehaven-Share-Password': 'letmein' };

async function newRequest(fields: Record<string, string>): Promise<string> {
  const response = await read(await t.fetch('/requests', { method: 'POST', headers: { Authorization: owner.key }, body: form(fields) }));
  assert.equal(response.status, 201, response.body);
  return /<entry>\n {4}<id>([A-Za-z0-9]{22})<\/id>/.exec(response.body)![1]!;
}

const counts = async (id: string) => {
  const row = (await t.server.services.store.uploadRequests.byId(id))!;
  return { files: row.files, bytes: row.bytes, inFlight: await t.server.services.store.uploadRequests.slotsInFlight(id, clock.now) };
};

describe('tus into an upload request', () => {
  test('created without an API key, written in pieces, stored as the owner’s file in the request’s folder; the answer names the file only', async () => {
    const folder = await t.server.services.folders.create(owner.account, 'Drop');
    const other = await t.server.services.folders.create(owner.account, 'Private');
    const id = await newRequest({ folder: folder.id, password: 'letmein', max_files: '2' });
    const content = Buffer.from('resumable bytes into a request');
    // The metadata's folder is ignored: the request decides where files land.
    const created = await createUpload(t, null, {
      length: content.length,
      metadata: { filename: 'big.bin', request: id, folder: other.id },
      headers: PASSWORD,
    });
    assert.equal(created.response.status, 201, created.body);
    assert.match(created.id, /^[0-9a-f]{32}$/);
    const upload = (await t.server.services.store.resumableUploads.byId(created.id))!;
    assert.equal(upload.accountId, owner.account.id, 'the owner’s account owns the upload');
    assert.equal(upload.folderId, folder.id);
    assert.deepEqual(await counts(id), { files: 0, bytes: 0, inFlight: { files: 1, bytes: content.length } }, 'its slot holds its length');

    // Without the password, or with a wrong one, the upload's URL gives nothing.
    assertAtomError(await read(await patchUploadResponse(created.id, 0, content.subarray(0, 10), {})), 401, 'errorSharePassword');
    assertAtomError(
      await read(await patchUploadResponse(created.id, 0, content.subarray(0, 10), { 'Filehaven-Share-Password': 'no' })),
      401,
      'errorSharePassword',
    );
    const first = await patchUpload(t, null, created.id, 0, content.subarray(0, 10), PASSWORD);
    assert.equal(first.response.status, 204, first.body);
    const head = await t.fetch(`/uploads/${created.id}`, { method: 'HEAD', headers: { ...TUS, ...PASSWORD } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('upload-offset'), '10');
    const last = await patchUpload(t, null, created.id, 10, content.subarray(10), { ...PASSWORD, Accept: 'application/atom+xml' });
    assert.equal(last.response.status, 200, last.body);
    const fileId = last.response.headers.get('filehaven-file-id') ?? assert.fail('no file id header');
    assert.equal(last.response.headers.get('filehaven-download-link'), null, 'no download link for the uploader');
    assert.equal(last.response.headers.get('filehaven-delete-link'), null, 'no delete link for the uploader');
    const web = t.server.webUrl;
    assert.equal(
      last.body,
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ed="${web}/developers">`,
        '  <title>Upload request upload</title>',
        `  <id>${t.url}/uploads/${created.id}</id>`,
        '  <updated>Sat, 21 Nov 2026 10:04:05 +0000</updated>',
        '  <author>',
        `    <name>${web}</name>`,
        '  </author>',
        '  <entry>',
        `    <id>${fileId}</id>`,
        '    <title>big.bin</title>',
        `    <ed:size>${content.length}</ed:size>`,
        '  </entry>',
        `  <link rel="self" href="/uploads/${created.id}"/>`,
        '</feed>',
        '',
      ].join('\n'),
    );
    const file = (await t.server.services.store.files.byId(fileId))!;
    assert.deepEqual([file.ownerId, file.folderId, file.size], [owner.account.id, folder.id, content.length]);
    assert.deepEqual(await counts(id), { files: 1, bytes: content.length, inFlight: { files: 0, bytes: 0 } });

    // The last answer was lost: the client asks again and is told of the same file, still
    // nothing more, and only with the password; the file is counted once.
    const again = await t.fetch(`/uploads/${created.id}`, { method: 'HEAD', headers: { ...TUS, ...PASSWORD } });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('upload-offset'), String(content.length));
    assert.equal(again.headers.get('filehaven-file-id'), fileId);
    assert.equal(again.headers.get('filehaven-download-link'), null);
    assert.equal((await t.fetch(`/uploads/${created.id}`, { method: 'HEAD', headers: { ...TUS } })).status, 401);
    const retried = await patchUpload(t, null, created.id, content.length, Buffer.alloc(0), PASSWORD);
    assert.equal(retried.response.status, 204, retried.body);
    assert.equal(retried.response.headers.get('filehaven-file-id'), fileId);
    assert.equal(retried.response.headers.get('filehaven-delete-link'), null);
    assert.deepEqual(await counts(id), { files: 1, bytes: content.length, inFlight: { files: 0, bytes: 0 } });
  });

  test('the request’s URL reaches its own uploads only: another upload of the owner is refused without the owner’s key', async () => {
    const id = await newRequest({});
    const mine = await createUpload(t, owner.key, { length: 5, metadata: { filename: 'own.bin' } });
    assert.equal(mine.response.status, 201, mine.body);
    // No key: the owner's own upload is not reachable through anything the request gives.
    assert.equal((await headUpload(t, null, mine.id)).status, 401, 'HEAD: no body, the status says it');
    assertAtomError(await read(await patchUploadResponse(mine.id, 0, Buffer.from('12345'), PASSWORD)), 401, 'errorPermissionDenied', 'Wrong apikey');
    const ownerFiles = (await t.server.services.store.resumableUploads.byId(mine.id))!;
    assert.equal(ownerFiles.fileId, null, 'nothing was written to it');
    // An unprotected request's upload needs no password, its URL is the key.
    const into = await createUpload(t, null, { length: 3, metadata: { filename: 'x.bin', request: id } });
    assert.equal(into.response.status, 201, into.body);
    const done = await patchUpload(t, null, into.id, 0, Buffer.from('abc'));
    assert.equal(done.response.status, 204, done.body);
    assert.equal(done.response.headers.get('filehaven-download-link'), null);
  });

  test('the request’s limits at creation: max_file_size errorFileSize, max_bytes and max_files errorUploadLimit; a terminated upload frees its slot', async () => {
    const id = await newRequest({ max_files: '1', max_bytes: '100', max_file_size: '80' });
    const create = (length: number) => createUpload(t, null, { length, metadata: { filename: 'f.bin', request: id } });
    const big = await create(81);
    assert.equal(big.response.status, 413, big.body);
    assert.match(big.body, /<title>errorFileSize<\/title>/);
    const held = await create(50);
    assert.equal(held.response.status, 201, held.body);
    const second = await create(10);
    assert.equal(second.response.status, 429, second.body);
    assert.match(second.body, /errorUploadLimit/);
    // The uploader gives up (tus termination): the slot is free again.
    const ended = await t.fetch(`/uploads/${held.id}`, { method: 'DELETE', headers: { ...TUS } });
    assert.equal(ended.status, 204);
    assert.deepEqual(await counts(id), { files: 0, bytes: 0, inFlight: { files: 0, bytes: 0 } });
    const again = await create(10);
    assert.equal(again.response.status, 201, again.body);
  });

  test('unknown, closed and expired requests; requests turned off', async () => {
    const unknown = await createUpload(t, null, { length: 3, metadata: { filename: 'f.bin', request: 'Aaaaaaaaaaaaaaaaaaaaaa' } });
    assert.equal(unknown.response.status, 404);
    assert.match(unknown.body, /errorShareNotFound/);
    const id = await newRequest({ expires_in: '10' });
    clock.advance(10_000);
    const late = await createUpload(t, null, { length: 3, metadata: { filename: 'f.bin', request: id } });
    assert.equal(late.response.status, 410);
    assert.match(late.body, /errorShareExpired/);
    clock.set('2026-11-21T10:04:05Z');
    const off = await t.sibling({ uploadRequests: false });
    try {
      const refused = await createUpload(off, null, { length: 3, metadata: { filename: 'f.bin', request: await newRequest({}) } });
      assert.equal(refused.response.status, 403);
      assert.match(refused.body, /errorPermissionDenied/);
    } finally {
      await off.close();
    }
  });
});

function patchUploadResponse(id: string, offset: number, body: Buffer, headers: Record<string, string>): Promise<Response> {
  return t.fetch(`/uploads/${id}`, {
    method: 'PATCH',
    headers: { ...TUS, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', ...headers },
    body: new Uint8Array(body),
  });
}
