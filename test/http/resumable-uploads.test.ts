import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ResumableDigest } from '../../src/resumable/upload-digest.js';
import { TEST_BACKEND } from '../helpers/backend.js';
import { directLink, sha256 } from '../helpers/downloads.js';
import { atomError, startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';
import { createUpload, deleteUpload, headUpload, offsetOf, patchUpload, streamedPatch, TUS, uploadInChunks } from '../helpers/tus.js';

// Issue 11: tus 1.0 resumable uploads at {base_url}/uploads, on the run's backend (the
// data folder with SQLite, or S3 with PostgreSQL). A finished upload is a normal file;
// bad input gets a clear Atom error and leaves nothing behind.

const KiB = 1024;
const MiB = 1024 * KiB;
const DAY = 24 * 3_600_000;
const MAX_FILE = 80 * MiB;
const FREE_VOLUME = 2 * MiB;
const PREMIUM_VOLUME = 512 * MiB;
const EXPIRY = 2 * DAY;
/** A hang guard, not a speed check. */
const GUARD = { timeout: 120_000 };

const clock = new TestClock();
let t: TestServer;
let ada: TestAccount;
before(async () => {
  t = await startTestServer({ maxFileSize: MAX_FILE, uploadVolumeFree: FREE_VOLUME, uploadVolumePremium: PREMIUM_VOLUME, uploadExpiryMs: EXPIRY }, clock);
  ada = await t.account({ premiumDays: 365, trafficBytes: 1024 * MiB });
});
after(() => t.close());

function expectError(status: number, body: string, expected: number, code: string): void {
  assert.equal(status, expected, body);
  assert.equal(atomError(body)?.code, code, body);
}

/** The bytes of a stored file, through a direct link. */
async function downloaded(id: string, key = ada.key): Promise<Buffer> {
  const response = await fetch(await directLink(t, key, id), { headers: { Authorization: key } });
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

/** Nothing of unfinished or refused uploads anywhere: resumable store, staging, unnamed blobs. */
async function expectNothingLeft(): Promise<void> {
  assert.deepEqual(await t.storage.resumable(), [], 'the resumable store is empty');
  assert.deepEqual(await t.storage.leftovers(), [], 'no staged upload, no unnamed blob');
}

async function uploadRows(accountId: number): Promise<number> {
  return t.storage.count('resumable_uploads', { account_id: accountId });
}

async function reservedUploadBytes(accountId: number): Promise<number> {
  const rows = await t.storage.rows('reservations');
  return rows.filter((row) => Number(row.account_id) === accountId && row.kind === 'upload').reduce((sum, row) => sum + Number(row.planned), 0);
}

describe('protocol', () => {
  test('OPTIONS: tus 1.0.0, its extensions, the largest file', async () => {
    const response = await t.fetch('/uploads', { method: 'OPTIONS' });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('tus-version'), '1.0.0');
    assert.deepEqual(response.headers.get('tus-extension')?.split(','), [
      'creation',
      'creation-with-upload',
      'termination',
      'expiration',
      'checksum',
      'concatenation',
    ]);
    assert.deepEqual(response.headers.get('tus-checksum-algorithm')?.split(','), ['md5', 'sha1', 'sha256']);
    assert.equal(response.headers.get('tus-max-size'), String(MAX_FILE));
  });

  test('a file in three PATCHes is a normal file: listed, downloadable, same bytes; the upload is forgotten', GUARD, async () => {
    const content = randomBytes(5 * MiB + 123);
    const created = await createUpload(t, ada.key, { length: content.length, metadata: { filename: 'three parts.bin' } });
    assert.equal(created.response.status, 201, created.body);
    assert.match(created.id, /^[0-9a-f]{32}$/);
    assert.ok(created.response.headers.get('upload-expires'), 'Upload-Expires');
    assert.equal(await reservedUploadBytes(ada.account.id), content.length, 'the whole length is reserved at creation');

    const cuts = [0, 2 * MiB, 4 * MiB, content.length];
    let last: Awaited<ReturnType<typeof patchUpload>> | null = null;
    for (let i = 0; i + 1 < cuts.length; i++) {
      last = await patchUpload(t, ada.key, created.id, cuts[i]!, content.subarray(cuts[i], cuts[i + 1]));
      const final = i + 2 === cuts.length;
      // tus 1.0: every PATCH that stores its bytes is 204 No Content, the last too.
      assert.equal(last.response.status, 204, last.body);
      assert.equal(last.response.headers.get('upload-offset'), String(cuts[i + 1]));
      if (!final) assert.equal(await offsetOf(t, ada.key, created.id), cuts[i + 1]);
    }
    const response = last!.response;
    const fileId = response.headers.get('filehaven-file-id')!;
    assert.match(fileId, /^[A-Z0-9]{10}$/);
    assert.equal(response.headers.get('filehaven-download-link'), `${t.server.webUrl}/${fileId}/three%20parts.bin`);
    assert.match(response.headers.get('filehaven-delete-link') ?? '', new RegExp(`/${fileId}/delete/[0-9a-f]{32}$`));
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(last!.body, '', 'the feed only for a client that asks (tus-strict-client.test.ts)');

    // The file as any other: listed, its digest recorded, its bytes served.
    const listing = await (await t.fetch('/files', { headers: { Authorization: ada.key } })).text();
    assert.match(listing, new RegExp(`<id>${fileId}</id>`));
    const [row] = (await t.storage.rows('files')).filter((file) => file.id === fileId);
    assert.equal(row?.sha256, sha256(content));
    assert.equal(sha256(await downloaded(fileId)), sha256(content));
    // Its bytes joined the upload volume; the reservation ended; nothing else stays.
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
    const logged = (await t.storage.rows('upload_log')).filter(
      (entry) => Number(entry.account_id) === ada.account.id && Number(entry.bytes) === content.length,
    );
    assert.equal(logged.length, 1);
    await expectNothingLeft();
  });

  test('creation-with-upload: a POST with the whole file answers 201 with its Location and the file; with part of it, the offset', GUARD, async () => {
    const whole = randomBytes(300 * KiB);
    const done = await createUpload(t, ada.key, { length: whole.length, metadata: { filename: 'one go.bin' }, body: whole });
    assert.equal(done.response.status, 201, done.body);
    assert.match(done.id, /^[0-9a-f]{32}$/, 'a Location, as tus creation requires');
    assert.match(done.body, /<title>File upload result<\/title>/);
    const fileId = done.response.headers.get('filehaven-file-id')!;
    assert.equal(sha256(await downloaded(fileId)), sha256(whole));

    const partial = await createUpload(t, ada.key, { length: whole.length, metadata: { filename: 'two goes.bin' }, body: whole.subarray(0, 100 * KiB) });
    assert.equal(partial.response.status, 201, partial.body);
    assert.equal(partial.response.headers.get('upload-offset'), String(100 * KiB));
    const rest = await patchUpload(t, ada.key, partial.id, 100 * KiB, whole.subarray(100 * KiB));
    assert.equal(rest.response.status, 204, rest.body);
    await expectNothingLeft();
  });

  test('the folder of Upload-Metadata holds the file', GUARD, async () => {
    const folder = await t.server.services.folders.create(ada.account, 'resumed');
    const result = await uploadInChunks(t, ada.key, 'in folder.txt', Buffer.from('into the folder\n'), 8, { folder: folder.id });
    assert.equal(result.response.status, 204, result.body);
    const fileId = result.response.headers.get('filehaven-file-id')!;
    const [row] = (await t.storage.rows('files')).filter((file) => file.id === fileId);
    assert.equal(row?.folder_id, folder.id);
  });

  test('HEAD of a finished upload names its file; the final PATCH again names it (without the delete link)', GUARD, async () => {
    const content = randomBytes(64 * KiB);
    const result = await uploadInChunks(t, ada.key, 'again.bin', content, 40 * KiB);
    assert.equal(result.response.status, 204);
    const fileId = result.response.headers.get('filehaven-file-id');
    const head = await headUpload(t, ada.key, result.id);
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('upload-offset'), String(content.length));
    assert.equal(head.headers.get('upload-length'), String(content.length));
    assert.equal(head.headers.get('filehaven-file-id'), fileId);
    const repeat = await patchUpload(t, ada.key, result.id, content.length, Buffer.alloc(0));
    assert.equal(repeat.response.status, 204, repeat.body);
    assert.equal(repeat.response.headers.get('filehaven-file-id'), fileId);
    assert.equal(repeat.response.headers.get('filehaven-delete-link'), null, 'the delete secret is shown once');
    assert.equal(repeat.body, '');
  });

  test('the same bytes twice are one blob', GUARD, async () => {
    const content = randomBytes(700 * KiB);
    const first = await uploadInChunks(t, ada.key, 'twin 1.bin', content, 300 * KiB);
    const second = await uploadInChunks(t, ada.key, 'twin 2.bin', content, 500 * KiB);
    assert.equal(first.response.status, 204);
    assert.equal(second.response.status, 204);
    assert.equal(await t.storage.count('blobs', { sha256: sha256(content) }), 1);
    assert.equal(sha256(await downloaded(second.response.headers.get('filehaven-file-id')!)), sha256(content));
    await expectNothingLeft();
  });
});

describe('bad input', () => {
  test('creation: no file name, empty, too large, unknown folder, blacklisted name, deferred length; nothing is created', GUARD, async () => {
    const cases: Array<[string, Parameters<typeof createUpload>[2], number, string]> = [
      ['no filename', { length: 10, metadata: { folder: 'NOSUCHFOLD' } }, 400, 'errorUploadFaild'],
      ['empty', { length: 0, metadata: { filename: 'empty.txt' } }, 400, 'errorEmptyFile'],
      ['too large', { length: MAX_FILE + 1, metadata: { filename: 'big.bin' } }, 413, 'errorFileSize'],
      ['unknown folder', { length: 10, metadata: { filename: 'a.txt', folder: 'NOSUCHFOLD' } }, 404, 'errorFolderNotFound'],
      ['malformed metadata', { length: 10, headers: { 'Upload-Metadata': 'filename ***not base64***,,' } }, 400, 'errorUploadFaild'],
      ['deferred length', { length: null, headers: { 'Upload-Defer-Length': '1' }, metadata: { filename: 'a.txt' } }, 501, 'errorUploadFaild'],
    ];
    await t.server.services.moderation.addNamePattern('*.forbidden', 'test');
    cases.push(['blacklisted name', { length: 10, metadata: { filename: 'x.forbidden' } }, 403, 'errorFileInBlackList']);
    const before = await uploadRows(ada.account.id);
    for (const [what, options, status, code] of cases) {
      const created = await createUpload(t, ada.key, options);
      assert.equal(created.response.status, status, `${what}: ${created.body}`);
      assert.equal(atomError(created.body)?.code, code, `${what}: ${created.body}`);
      assert.equal(created.response.headers.get('content-type'), 'application/atom+xml; charset=utf-8', what);
      assert.equal(created.response.headers.get('location'), null, what);
    }
    await t.server.services.moderation.removeNamePattern('*.forbidden');
    assert.equal(await uploadRows(ada.account.id), before);
    await expectNothingLeft();
  });

  test('a PATCH at a wrong offset is 409 and changes nothing', GUARD, async () => {
    const created = await createUpload(t, ada.key, { length: 100, metadata: { filename: 'offsets.txt' } });
    assert.equal((await patchUpload(t, ada.key, created.id, 0, Buffer.alloc(40, 'a'))).response.status, 204);
    for (const offset of [0, 39, 41, 100]) {
      const wrong = await patchUpload(t, ada.key, created.id, offset, Buffer.alloc(10, 'b'));
      expectError(wrong.response.status, wrong.body, 409, 'errorUploadFaild');
    }
    const missing = await t.fetch(`/uploads/${created.id}`, {
      method: 'PATCH',
      headers: { ...TUS, Authorization: ada.key, 'Content-Type': 'application/offset+octet-stream' },
      body: 'x',
    });
    assert.equal(missing.status, 403, 'tus: Upload-Offset is required');
    assert.equal(atomError(await missing.text())?.code, 'errorUploadFaild');
    assert.equal(await offsetOf(t, ada.key, created.id), 40);
    assert.equal((await deleteUpload(t, ada.key, created.id)).status, 204);
  });

  test("another account's upload cannot be reached through a query string either", GUARD, async () => {
    const eve = await t.account({ premiumDays: 30 });
    const victim = await createUpload(t, ada.key, { length: 100, metadata: { filename: 'victim.txt' } });
    assert.equal((await patchUpload(t, ada.key, victim.id, 0, Buffer.alloc(10, 'v'))).response.status, 204);
    const own = await createUpload(t, eve.key, { length: 100, metadata: { filename: 'own.txt' } });
    const headers = { ...TUS, Authorization: eve.key };
    const sneaky = `/uploads/${own.id}?x=/${victim.id}`;
    const patch = await t.fetch(sneaky, {
      method: 'PATCH',
      headers: { ...headers, 'Upload-Offset': '10', 'Content-Type': 'application/offset+octet-stream' },
      body: 'evil bytes',
    });
    assert.notEqual(patch.status, 204, 'the victim is not written');
    const head = await t.fetch(sneaky, { method: 'HEAD', headers });
    assert.equal(head.headers.get('upload-offset'), '0', "eve's own upload answers");
    assert.equal((await t.fetch(sneaky, { method: 'DELETE', headers })).status, 204);
    assert.equal(await offsetOf(t, ada.key, victim.id), 10, "the victim's upload is untouched");
    assert.equal((await headUpload(t, eve.key, own.id)).status, 404, "eve's own upload is the one deleted");
    assert.equal((await deleteUpload(t, ada.key, victim.id)).status, 204);
  });

  test("a wrong key is 401; another account's upload is 403 and stays as it was", GUARD, async () => {
    const bob = await t.account({ premiumDays: 30 });
    const created = await createUpload(t, ada.key, { length: 100, metadata: { filename: 'mine.txt' } });
    assert.equal((await patchUpload(t, ada.key, created.id, 0, Buffer.alloc(30, 'a'))).response.status, 204);

    const anonymous = await createUpload(t, null, { length: 10, metadata: { filename: 'a.txt' } });
    expectError(anonymous.response.status, anonymous.body, 401, 'errorPermissionDenied');
    const wrongKey = await patchUpload(t, 'not-a-key-at-all-000000', created.id, 30, Buffer.alloc(10));
    expectError(wrongKey.response.status, wrongKey.body, 401, 'errorPermissionDenied');

    const theirs = await patchUpload(t, bob.key, created.id, 30, Buffer.alloc(10, 'b'));
    expectError(theirs.response.status, theirs.body, 403, 'errorPermissionDenied');
    assert.equal((await headUpload(t, bob.key, created.id)).status, 403);
    assert.equal((await deleteUpload(t, bob.key, created.id)).status, 403);
    assert.equal(await offsetOf(t, ada.key, created.id), 30);
    assert.equal((await deleteUpload(t, ada.key, created.id)).status, 204);
  });

  test('checksums: a matching chunk is stored; a mismatch (460), an unknown algorithm or a malformed digest store nothing', GUARD, async () => {
    const content = randomBytes(3 * MiB);
    const created = await createUpload(t, ada.key, { length: content.length, metadata: { filename: 'checked.bin' } });
    const digest = (algorithm: string, bytes: Buffer) => `${algorithm} ${createHash(algorithm).update(bytes).digest('base64')}`;
    const first = content.subarray(0, MiB);
    assert.equal((await patchUpload(t, ada.key, created.id, 0, first, { 'Upload-Checksum': digest('sha1', first) })).response.status, 204);
    const second = content.subarray(MiB, 2 * MiB);
    const corrupted = Buffer.from(second);
    corrupted[12345] = corrupted[12345]! ^ 0xff;
    const mismatch = await patchUpload(t, ada.key, created.id, MiB, corrupted, { 'Upload-Checksum': digest('sha256', second) });
    expectError(mismatch.response.status, mismatch.body, 460, 'errorUploadFaild');
    assert.equal(await offsetOf(t, ada.key, created.id), MiB, 'nothing of the mismatched chunk is stored');
    const unknown = await patchUpload(t, ada.key, created.id, MiB, second, { 'Upload-Checksum': `crc32 ${Buffer.from('abcd').toString('base64')}` });
    expectError(unknown.response.status, unknown.body, 400, 'errorUploadFaild');
    const malformed = await patchUpload(t, ada.key, created.id, MiB, second, { 'Upload-Checksum': 'sha1' });
    expectError(malformed.response.status, malformed.body, 400, 'errorUploadFaild');
    assert.equal(await offsetOf(t, ada.key, created.id), MiB);
    assert.equal((await patchUpload(t, ada.key, created.id, MiB, second, { 'Upload-Checksum': digest('md5', second) })).response.status, 204);
    const rest = await patchUpload(t, ada.key, created.id, 2 * MiB, content.subarray(2 * MiB));
    assert.equal(rest.response.status, 204, rest.body);
    assert.equal(sha256(await downloaded(rest.response.headers.get('filehaven-file-id')!)), sha256(content));
    await expectNothingLeft();
  });

  test('a digest state past the offset a write starts from (what a failed write leaves) is never used: the file is what was stored', GUARD, async () => {
    const length = 12 * MiB;
    const original = randomBytes(length);
    const created = await createUpload(t, ada.key, { length, metadata: { filename: 'rewritten.bin' } });
    assert.equal((await patchUpload(t, ada.key, created.id, 0, original.subarray(0, 3 * MiB))).response.status, 204);
    // What a write that failed after hashing leaves: states at 1 MiB (true) and at 8 MiB,
    // over bytes the store never kept; none at the 3 MiB the store holds.
    const stateAt = async (bytes: Buffer) => {
      const digest = await ResumableDigest.fresh();
      digest.update(bytes);
      return digest.checkpoint();
    };
    const planted = [await stateAt(original.subarray(0, MiB)), await stateAt(original.subarray(0, 8 * MiB))];
    await t.server.services.store.resumableUploads.saveCheckpoints(created.id, JSON.stringify(planted));
    // Other bytes from 3 MiB on: the recorded digest must be the one of the bytes served.
    const replaced = Buffer.concat([original.subarray(0, 3 * MiB), randomBytes(length - 3 * MiB)]);
    const last = await patchUpload(t, ada.key, created.id, 3 * MiB, replaced.subarray(3 * MiB));
    assert.equal(last.response.status, 204, last.body);
    const fileId = last.response.headers.get('filehaven-file-id')!;
    const [row] = (await t.storage.rows('files')).filter((file) => file.id === fileId);
    assert.equal(row?.sha256, sha256(replaced));
    assert.equal(sha256(await downloaded(fileId)), sha256(replaced));
  });

  test('a body past the declared length is 413 and stores nothing of it', GUARD, async () => {
    const created = await createUpload(t, ada.key, { length: 100, metadata: { filename: 'short.txt' } });
    assert.equal((await patchUpload(t, ada.key, created.id, 0, Buffer.alloc(60))).response.status, 204);
    const past = await patchUpload(t, ada.key, created.id, 60, Buffer.alloc(41));
    expectError(past.response.status, past.body, 413, 'errorFileSize');
    assert.equal(await offsetOf(t, ada.key, created.id), 60);
    // The right length still finishes it.
    assert.equal((await patchUpload(t, ada.key, created.id, 60, Buffer.alloc(40))).response.status, 204);
  });

  test('a blacklisted digest found at the end: 403, nothing kept, the volume given back', GUARD, async () => {
    const content = randomBytes(200 * KiB);
    await t.server.services.files.blacklistAdd(sha256(content), 'test');
    const result = await uploadInChunks(t, ada.key, 'innocent name.bin', content, 150 * KiB);
    expectError(result.response.status, result.body, 403, 'errorFileInBlackList');
    assert.equal((await headUpload(t, ada.key, result.id)).status, 404, 'the upload is gone');
    assert.equal(await t.storage.count('files', { sha256: sha256(content) }), 0);
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
    await expectNothingLeft();
  });

  test('upload volume: the whole length is reserved at creation (429 when it does not fit); a PATCH after the limit went down is 429', GUARD, async () => {
    // A free account: 2 MiB a day.
    const cleo = await t.account();
    const tooBig = await createUpload(t, cleo.key, { length: FREE_VOLUME + 1, metadata: { filename: 'a.bin' } });
    expectError(tooBig.response.status, tooBig.body, 429, 'errorUploadLimit');
    assert.match(tooBig.response.headers.get('retry-after') ?? '', /^\d+$/);
    const fits = await createUpload(t, cleo.key, { length: FREE_VOLUME - 100, metadata: { filename: 'b.bin' } });
    assert.equal(fits.response.status, 201, fits.body);
    // The reservation holds: the 100 bytes left are all a second upload may have.
    const more = await createUpload(t, cleo.key, { length: 101, metadata: { filename: 'c.bin' } });
    expectError(more.response.status, more.body, 429, 'errorUploadLimit');
    const form = new FormData();
    form.append('upload', new Blob([new Uint8Array(randomBytes(200))]), 'post.bin');
    const post = await t.fetch('/files', { method: 'POST', headers: { Authorization: cleo.key }, body: form });
    assert.equal(post.status, 429, 'POST /files sees the reservation too');
    assert.equal((await deleteUpload(t, cleo.key, fits.id)).status, 204);

    // A premium account whose premium ends while its upload waits: the free limit applies.
    const dora = await t.account({ premiumDays: 1 });
    const big = randomBytes(4 * MiB);
    const created = await createUpload(t, dora.key, { length: big.length, metadata: { filename: 'premium.bin' } });
    assert.equal(created.response.status, 201);
    assert.equal((await patchUpload(t, dora.key, created.id, 0, big.subarray(0, MiB))).response.status, 204);
    clock.advance(1.5 * DAY);
    try {
      const refused = await patchUpload(t, dora.key, created.id, MiB, big.subarray(MiB));
      expectError(refused.response.status, refused.body, 429, 'errorUploadLimit');
      assert.match(refused.response.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(await offsetOf(t, dora.key, created.id), MiB, 'the bytes so far stay, for a resume once the volume allows');
    } finally {
      clock.advance(-1.5 * DAY);
    }
    assert.equal((await deleteUpload(t, dora.key, created.id)).status, 204);
    assert.equal(await reservedUploadBytes(dora.account.id), 0);
    await expectNothingLeft();
  });
});

describe('termination and expiry', () => {
  test('DELETE removes the bytes and gives the volume back', GUARD, async () => {
    const created = await createUpload(t, ada.key, { length: 2 * MiB, metadata: { filename: 'dropped.bin' } });
    assert.equal((await patchUpload(t, ada.key, created.id, 0, randomBytes(MiB))).response.status, 204);
    assert.ok((await t.storage.resumable()).length > 0);
    const deleted = await deleteUpload(t, ada.key, created.id);
    assert.equal(deleted.status, 204);
    assert.equal((await headUpload(t, ada.key, created.id)).status, 404);
    const again = await patchUpload(t, ada.key, created.id, MiB, randomBytes(10));
    expectError(again.response.status, again.body, 404, 'errorFileNotFound');
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
    await expectNothingLeft();
  });

  test('an upload not finished within --upload-expiry is refused, and gc removes it with its bytes and reservation', GUARD, async () => {
    const created = await createUpload(t, ada.key, { length: 3 * MiB, metadata: { filename: 'forgotten.bin' } });
    assert.equal((await patchUpload(t, ada.key, created.id, 0, randomBytes(2 * MiB))).response.status, 204);
    clock.advance(EXPIRY + 1000);
    try {
      const late = await patchUpload(t, ada.key, created.id, 2 * MiB, randomBytes(MiB));
      expectError(late.response.status, late.body, 404, 'errorFileNotFound');
      // Finished uploads of the tests before expire too (only their rows: their files stay).
      const report = await t.server.services.gc.run();
      assert.ok(report.resumableUploadsExpired >= 1, JSON.stringify(report));
    } finally {
      clock.advance(-(EXPIRY + 1000));
    }
    assert.equal(await t.storage.count('resumable_uploads', { id: created.id }), 0);
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
    await expectNothingLeft();
  });
});

describe('several requests at once', () => {
  test('two clients resuming one upload at once: the second asks the first to let go, and the file is right', GUARD, async () => {
    const content = randomBytes(8 * MiB);
    const created = await createUpload(t, ada.key, { length: content.length, metadata: { filename: 'contended.bin' } });
    // Client A sends 2 MiB, then stalls with its request open (a half-dead connection).
    const first = streamedPatch(t.url, ada.key, created.id, 0, content.length);
    await first.write(content.subarray(0, 2 * MiB));
    await sleep(300);
    // Client B resumes: its HEAD waits for A to let go, then reports what A stored.
    const head = await headUpload(t, ada.key, created.id);
    assert.equal(head.status, 200);
    const offset = Number(head.headers.get('upload-offset'));
    assert.ok(offset > 0 && offset <= 2 * MiB, `A's bytes are kept: ${offset}`);
    // A's late bytes go nowhere; B finishes from the offset.
    await first.write(content.subarray(2 * MiB, 3 * MiB));
    first.destroy();
    const rest = await patchUpload(t, ada.key, created.id, offset, content.subarray(offset));
    assert.equal(rest.response.status, 204, rest.body);
    assert.equal(sha256(await downloaded(rest.response.headers.get('filehaven-file-id')!)), sha256(content));
    await first.outcome;
    await expectNothingLeft();
  });

  test('two PATCHes at the same offset at once: one is stored, the other refused, never both', GUARD, async () => {
    const content = randomBytes(MiB);
    const created = await createUpload(t, ada.key, { length: content.length, metadata: { filename: 'raced.bin' } });
    const half = content.subarray(0, MiB / 2);
    const outcomes = await Promise.all([patchUpload(t, ada.key, created.id, 0, half), patchUpload(t, ada.key, created.id, 0, half)]);
    const statuses = outcomes.map((outcome) => outcome.response.status).sort();
    assert.ok(statuses[0] === 204 && statuses[1] !== 204, `one stored, one refused: ${statuses}`);
    assert.equal(await offsetOf(t, ada.key, created.id), MiB / 2);
    const rest = await patchUpload(t, ada.key, created.id, MiB / 2, content.subarray(MiB / 2));
    assert.equal(rest.response.status, 204);
    assert.equal(sha256(await downloaded(rest.response.headers.get('filehaven-file-id')!)), sha256(content));
  });
});

describe('several servers', {
  skip: TEST_BACKEND === 'sqlite-local' && 'two servers in one process cannot share one SQLite file: run with FILEHAVEN_TEST_BACKEND=postgres-s3',
}, () => {
  test('PATCHes of one upload land on either server; a request on one makes the other let go', GUARD, async () => {
    const other = await t.sibling();
    try {
      const content = randomBytes(12 * MiB);
      const created = await createUpload(t, ada.key, { length: content.length, metadata: { filename: 'fleet.bin' } });
      assert.equal(created.response.status, 201);
      // Alternate: A, B, A.
      assert.equal((await patchUpload(t, ada.key, created.id, 0, content.subarray(0, 3 * MiB))).response.status, 204);
      assert.equal(await offsetOf(other, ada.key, created.id), 3 * MiB);
      assert.equal((await patchUpload(other, ada.key, created.id, 3 * MiB, content.subarray(3 * MiB, 6 * MiB))).response.status, 204);
      assert.equal(await offsetOf(t, ada.key, created.id), 6 * MiB);

      // A request on A stalls with the lock; B's HEAD asks A (through the database) to let go.
      const stalled = streamedPatch(t.url, ada.key, created.id, 6 * MiB, content.length - 6 * MiB);
      await stalled.write(content.subarray(6 * MiB, 8 * MiB));
      await sleep(300);
      const offset = await offsetOf(other, ada.key, created.id);
      assert.ok(offset >= 6 * MiB && offset <= 8 * MiB, `B sees what A kept: ${offset}`);
      stalled.destroy();
      await stalled.outcome;
      const rest = await patchUpload(other, ada.key, created.id, offset, content.subarray(offset));
      assert.equal(rest.response.status, 204, rest.body);
      assert.equal(sha256(await downloaded(rest.response.headers.get('filehaven-file-id')!)), sha256(content));
      await expectNothingLeft();
    } finally {
      await other.close();
    }
  });
});
