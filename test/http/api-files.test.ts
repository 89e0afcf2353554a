// File details, direct link, copy, owner delete and the blob lifecycle (SPEC.md "File",
// "States"; API.md sections 3, 4, 6 and 7).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, assertAtomOk, download, linksOf, linkTitled, type ReadResponse, read } from '../helpers/api-checks.js';
import { TEST_BACKEND } from '../helpers/backend.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

let t: TestServer;
let premium: TestAccount;
let other: TestAccount;
let free: TestAccount;
before(async () => {
  t = await startTestServer();
  premium = await t.account({ premiumDays: 30, trafficBytes: 1_000_000 });
  other = await t.account({ premiumDays: 30 });
  free = await t.account();
});
after(() => t.close());

let seq = 0;
/** Uploads unique content (so blobs of different tests never meet) unless content is given. */
async function upload(owner: TestAccount, content = `file ${++seq} ${process.hrtime.bigint()}`, name = `f${seq}.txt`) {
  const up = await t.upload(owner.key, name, content);
  assert.equal(up.response.status, 201, up.body);
  return { id: up.id, content, name, size: Buffer.byteLength(content) };
}

const fileRow = (id: string) => t.server.services.store.files.byId(id);
const sha256 = (content: string) => createHash('sha256').update(content).digest('hex');
/** The key the content's blob row records; fails without a row. */
async function keyOf(content: string): Promise<string> {
  const key = await t.storage.keyOf(sha256(content));
  assert.ok(key, `no blob row for ${JSON.stringify(content)}`);
  return key;
}
/** Whether the content is stored: a blob row, and bytes under the key it records. */
async function isStored(content: string): Promise<boolean> {
  const key = await t.storage.keyOf(sha256(content));
  return key !== null && (await t.storage.hasBytes(key));
}
/** Whether the content is gone: no blob row, and no bytes under the key it had. */
async function isGone(content: string, key: string): Promise<boolean> {
  return (await t.storage.keyOf(sha256(content))) === null && !(await t.storage.hasBytes(key));
}
const fileRowsWithDigest = (digest: string) => t.storage.count('files', { sha256: digest });

const get = async (key: string, p: string) => read(await t.fetch(p, { headers: { Authorization: key } }));
const post = async (key: string, p: string) => read(await t.fetch(p, { method: 'POST', headers: { Authorization: key } }));
const del = async (key: string, p: string) => read(await t.fetch(p, { method: 'DELETE', headers: { Authorization: key } }));

describe('GET /files/<id>', () => {
  test('premium: 200 File Full info with id, title, ed:status A and the enclosure link', async () => {
    const f = await upload(premium, 'details content', 'report 2026.pdf');
    const feed = assertAtomOk(await get(premium.key, `/files/${f.id}`), 200, 'File Full info');
    assert.equal(feed.entry.id, f.id);
    assert.equal(feed.entry.title, 'report 2026.pdf');
    assert.equal(feed.entry['ed:status'], 'A');
    const [link] = linksOf(feed.entry);
    assert.equal(link?.['@rel'], 'enclosure');
    assert.equal(link?.['@length'], String(f.size));
    assert.equal(link?.['@href'], `${t.server.webUrl}/${f.id}/report%202026.pdf`);
  });

  test("any premium account may read the details of another account's file", async () => {
    const f = await upload(premium);
    assert.equal(assertAtomOk(await get(other.key, `/files/${f.id}`), 200, 'File Full info').entry.id, f.id);
  });

  test('a non-premium account: 403 errorPermissionDenied saying premium is needed', async () => {
    const own = await upload(free);
    const theirs = await upload(premium);
    for (const id of [own.id, theirs.id]) {
      assertAtomError(await get(free.key, `/files/${id}`), 403, 'errorPermissionDenied', /premium/i);
    }
  });

  test('ed:status is B after the operator blocks the file, A again after unblocking', async () => {
    const f = await upload(premium);
    await t.server.services.files.block(f.id);
    assert.equal(assertAtomOk(await get(premium.key, `/files/${f.id}`), 200, 'File Full info').entry['ed:status'], 'B');
    await t.server.services.files.unblock(f.id);
    assert.equal(assertAtomOk(await get(premium.key, `/files/${f.id}`), 200, 'File Full info').entry['ed:status'], 'A');
  });

  test('deleted (by owner, operator or delete link) and unknown: 404 errorFileNotFound', async () => {
    const byOwner = await upload(premium);
    assert.equal((await del(premium.key, `/files/${byOwner.id}`)).status, 200);
    const byOperator = await upload(premium);
    await t.server.services.files.operatorDelete(byOperator.id);
    const blockedThenDeleted = await upload(premium);
    await t.server.services.files.block(blockedThenDeleted.id);
    await t.server.services.files.operatorDelete(blockedThenDeleted.id);
    const up = await t.upload(premium.key, 'via-link.txt', `via link ${process.hrtime.bigint()}`);
    const viaLink = await read(await fetch(up.deleteLink, { method: 'POST' }));
    assert.ok(viaLink.status < 400, `delete link: ${viaLink.status}`);
    assert.equal((await fileRow(up.id))?.status, 'D');
    for (const id of [byOwner.id, byOperator.id, blockedThenDeleted.id, up.id, 'ZZZZZZZZZZ']) {
      assertAtomError(await get(premium.key, `/files/${id}`), 404, 'errorFileNotFound', 'File does not exist or is deleted');
    }
  });
});

describe('GET /files/<id>;DirectLink', () => {
  test('premium, active file: 200 File info with a direct enclosure link of the file size', async () => {
    const f = await upload(other);
    const feed = assertAtomOk(await get(premium.key, `/files/${f.id};DirectLink`), 200, 'File info');
    assert.equal(feed.entry.id, f.id);
    assert.equal(feed.entry.title, f.name);
    const [link] = linksOf(feed.entry);
    assert.equal(link?.['@rel'], 'enclosure');
    assert.equal(link?.['@length'], String(f.size));
    assert.ok(link?.['@href']?.startsWith(`${t.server.webUrl}/direct/${f.id}/`), link?.['@href']);
  });

  test('a non-premium account: 403 errorPermissionDenied, for its own file too', async () => {
    const own = await upload(free);
    const theirs = await upload(premium);
    for (const id of [own.id, theirs.id]) {
      assertAtomError(await get(free.key, `/files/${id};DirectLink`), 403, 'errorPermissionDenied', /premium/i);
    }
  });

  test('blocked: 410 errorFileInNoDownloadedStatus', async () => {
    const f = await upload(premium);
    await t.server.services.files.block(f.id);
    assertAtomError(await get(premium.key, `/files/${f.id};DirectLink`), 410, 'errorFileInNoDownloadedStatus');
    assertAtomError(await get(premium.key, `/files/${f.id}%3BDirectLink`), 410, 'errorFileInNoDownloadedStatus');
  });

  test('deleted and unknown: 404 errorFileNotFound', async () => {
    const f = await upload(premium);
    assert.equal((await del(premium.key, `/files/${f.id}`)).status, 200);
    const g = await upload(premium);
    await t.server.services.files.block(g.id);
    await t.server.services.files.operatorDelete(g.id);
    for (const id of [f.id, g.id, 'ZZZZZZZZZZ']) {
      assertAtomError(await get(premium.key, `/files/${id};DirectLink`), 404, 'errorFileNotFound');
    }
  });
});

describe('POST /files/copy/<id>', () => {
  function assertCopy(response: ReadResponse, source: { id: string; name: string; size: number }): string {
    const feed = assertAtomOk(response, 201, 'File copy');
    const entry = feed.entry;
    assert.match(entry.id, /^[A-Z0-9]{10}$/);
    assert.notEqual(entry.id, source.id);
    assert.equal(entry.title, source.name);
    assert.equal(entry['ed:size'], String(source.size));
    const download = linkTitled(entry, 'download_link');
    assert.equal(download['@rel'], 'enclosure');
    assert.equal(download['@length'], String(source.size));
    assert.equal(download['@href'], `${t.server.webUrl}/${entry.id}/${encodeURIComponent(source.name)}`);
    const deleteLink = linkTitled(entry, 'delete_link');
    assert.equal(deleteLink['@rel'], 'related');
    assert.match(deleteLink['@href'] ?? '', new RegExp(`^${t.server.webUrl}/${entry.id}/delete/[0-9a-f]{32}$`));
    return entry.id;
  }

  test("copies into the caller's account: new id, same size and bytes, no bytes duplicated in storage", async () => {
    const f = await upload(premium);
    const blobsBefore = await t.storage.blobKeys();
    const copyId = assertCopy(await post(premium.key, `/files/copy/${f.id}`), f);
    assert.deepEqual(await t.storage.blobKeys(), blobsBefore);
    const [source, copy] = [await fileRow(f.id), await fileRow(copyId)];
    assert.equal(copy?.ownerId, premium.account.id);
    assert.equal(copy?.status, 'A');
    assert.equal(copy?.sha256, source?.sha256);
    assert.equal(copy?.folderId, null);
    const bytes = await download(`${t.server.webUrl}/${copyId}/x?download=1`);
    assert.equal(bytes.body, f.content);
  });

  test("another account's active file may be copied, by a non-premium account too", async () => {
    const f = await upload(other);
    const blobsBefore = await t.storage.blobKeys();
    const copyId = assertCopy(await post(free.key, `/files/copy:${f.id}`), f);
    assert.equal((await fileRow(copyId))?.ownerId, free.account.id);
    assert.equal((await fileRow(f.id))?.ownerId, other.account.id);
    assert.deepEqual(await t.storage.blobKeys(), blobsBefore);
    // The copy is the caller's: it may delete it, the source stays.
    assert.equal((await del(free.key, `/files/${copyId}`)).status, 200);
    assert.equal((await fileRow(f.id))?.status, 'A');
  });

  test("the copy's delete link deletes the copy only", async () => {
    const f = await upload(premium);
    const response = await post(premium.key, `/files/copy/${f.id}`);
    const copyId = assertCopy(response, f);
    const deleteLink = linkTitled(assertAtomOk(response, 201, 'File copy').entry, 'delete_link')['@href'] ?? '';
    assert.ok((await read(await fetch(deleteLink, { method: 'POST' }))).status < 400);
    assert.equal((await fileRow(copyId))?.status, 'D');
    assert.equal((await fileRow(f.id))?.status, 'A');
  });

  test('blocked source: 403 errorPermissionDenied, no copy made', async () => {
    const f = await upload(other);
    await t.server.services.files.block(f.id);
    assert.equal(await fileRowsWithDigest(sha256(f.content)), 1);
    assertAtomError(await post(premium.key, `/files/copy/${f.id}`), 403, 'errorPermissionDenied');
    assertAtomError(await post(other.key, `/files/copy:${f.id}`), 403, 'errorPermissionDenied');
    assertAtomError(await post(free.key, `/files/copy/${f.id}`), 403, 'errorPermissionDenied');
    assert.equal(await fileRowsWithDigest(sha256(f.content)), 1, 'no copy row was made');
  });

  test('deleted and unknown source: 404 errorFileNotFound', async () => {
    const f = await upload(premium);
    assert.equal((await del(premium.key, `/files/${f.id}`)).status, 200);
    for (const id of [f.id, 'ZZZZZZZZZZ']) {
      assertAtomError(await post(premium.key, `/files/copy/${id}`), 404, 'errorFileNotFound');
      assertAtomError(await post(premium.key, `/files/copy:${id}`), 404, 'errorFileNotFound');
    }
  });
});

describe('DELETE /files/<id>', () => {
  test('the owner deletes: 200, then 404 errorFileNotFound for every call on the file', async () => {
    const f = await upload(premium);
    const response = await del(premium.key, `/files/${f.id}`);
    assert.equal(response.status, 200, response.body);
    assert.equal((await fileRow(f.id))?.status, 'D');
    for (let i = 0; i < 2; i++) assertAtomError(await del(premium.key, `/files/${f.id}`), 404, 'errorFileNotFound');
    assertAtomError(await get(premium.key, `/files/${f.id}`), 404, 'errorFileNotFound');
    assertAtomError(await get(premium.key, `/files/${f.id};DirectLink`), 404, 'errorFileNotFound');
    assertAtomError(await post(premium.key, `/files/copy/${f.id}`), 404, 'errorFileNotFound');
    assertAtomError(await del(other.key, `/files/${f.id}`), 404, 'errorFileNotFound');
    assert.equal((await download(`${t.server.webUrl}/${f.id}/x?download=1`)).status, 404);
  });

  test('the owner may delete a blocked file', async () => {
    const f = await upload(premium);
    await t.server.services.files.block(f.id);
    assert.equal((await del(premium.key, `/files/${f.id}`)).status, 200);
    assert.equal((await fileRow(f.id))?.status, 'D');
  });

  test('another account: 403 errorPermissionDenied, the file untouched', async () => {
    const f = await upload(premium);
    const before = await fileRow(f.id);
    assertAtomError(await del(other.key, `/files/${f.id}`), 403, 'errorPermissionDenied');
    assertAtomError(await del(free.key, `/files/${f.id}`), 403, 'errorPermissionDenied');
    assert.deepEqual(await fileRow(f.id), before);
    assert.equal(await isStored(f.content), true);
    assert.equal(assertAtomOk(await get(premium.key, `/files/${f.id}`), 200, 'File Full info').entry['ed:status'], 'A');
  });
});

describe('blob lifecycle', () => {
  test('an upload is stored under the key its blob row records, with its bytes', async () => {
    const f = await upload(premium);
    const key = await keyOf(f.content);
    assert.equal(await t.storage.hasBytes(key), true);
    assert.ok((await t.storage.blobKeys()).includes(key));
    assert.equal(await t.storage.count('blobs', { sha256: sha256(f.content) }), 1);
  });

  test('blobs are stored at <data>/blobs/aa/bb/<sha256>', { skip: TEST_BACKEND !== 'sqlite-local' && 'local blob store only' }, async () => {
    const f = await upload(premium);
    const digest = sha256(f.content);
    const file = path.join(t.dataDir, 'blobs', digest.slice(0, 2), digest.slice(2, 4), digest);
    assert.equal(
      await access(file).then(
        () => true,
        () => false,
      ),
      true,
    );
    assert.equal(await keyOf(f.content), digest, 'the key is the digest');
  });

  test('uploading identical content twice (two accounts) stores one blob', async () => {
    const content = `same bytes ${process.hrtime.bigint()}`;
    const blobsBefore = await t.storage.blobKeys();
    const a = await upload(premium, content, 'one.txt');
    const b = await upload(other, content, 'two.txt');
    assert.notEqual(a.id, b.id);
    const blobsAfter = await t.storage.blobKeys();
    assert.equal(blobsAfter.length, blobsBefore.length + 1);
    const key = await keyOf(content);
    assert.deepEqual(
      blobsAfter.filter((k) => !blobsBefore.includes(k)),
      [key],
    );
    // Deleting one upload keeps the bytes of the other.
    assert.equal((await del(premium.key, `/files/${a.id}`)).status, 200);
    assert.equal(await isStored(content), true);
    assert.equal((await download(`${t.server.webUrl}/${b.id}/two.txt?download=1`)).body, content);
    assert.equal((await del(other.key, `/files/${b.id}`)).status, 200);
    assert.equal(await isGone(content, key), true);
  });

  test('a file and its copy: deleting one keeps the blob, deleting both removes it', async () => {
    const f = await upload(premium);
    const copy = await post(other.key, `/files/copy/${f.id}`);
    const copyId = assertAtomOk(copy, 201, 'File copy').entry.id;
    const key = await keyOf(f.content);
    assert.equal((await del(premium.key, `/files/${f.id}`)).status, 200);
    assert.equal(await isStored(f.content), true, 'blob kept while the copy is live');
    assert.equal((await download(`${t.server.webUrl}/${copyId}/x?download=1`)).body, f.content);
    assert.equal((await del(other.key, `/files/${copyId}`)).status, 200);
    assert.equal(await isGone(f.content, key), true, 'blob removed with its last live file');
  });

  test('the copy deleted first, then the source: the blob goes with the last one', async () => {
    const f = await upload(premium);
    const copyId = assertAtomOk(await post(premium.key, `/files/copy:${f.id}`), 201, 'File copy').entry.id;
    const key = await keyOf(f.content);
    assert.equal((await del(premium.key, `/files/${copyId}`)).status, 200);
    assert.equal(await isStored(f.content), true);
    assert.equal((await del(premium.key, `/files/${f.id}`)).status, 200);
    assert.equal(await isGone(f.content, key), true);
  });

  test('a blocked file keeps its blob; deleting it removes the blob', async () => {
    const f = await upload(premium);
    await t.server.services.files.block(f.id);
    const key = await keyOf(f.content);
    assert.equal(await isStored(f.content), true);
    await t.server.services.files.operatorDelete(f.id);
    assert.equal(await isGone(f.content, key), true);
  });

  test('content uploaded again after its blob was removed is stored again', async () => {
    const f = await upload(premium);
    const key = await keyOf(f.content);
    assert.equal((await del(premium.key, `/files/${f.id}`)).status, 200);
    assert.equal(await isGone(f.content, key), true);
    const again = await upload(premium, f.content, 'again.txt');
    assert.equal(await isStored(f.content), true);
    assert.equal((await download(`${t.server.webUrl}/${again.id}/again.txt?download=1`)).body, f.content);
  });
});
