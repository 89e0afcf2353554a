import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import * as tus from 'tus-js-client';
import { directLink, sha256 } from '../helpers/downloads.js';
import { atomError, startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';
import { createUpload, deleteUpload, headUpload, patchUpload, TUS, uploadInChunks, uploadMetadata } from '../helpers/tus.js';

// Issue 28: one file over several connections at once, by tus's concatenation extension
// (partial uploads, then a final naming them), as tus-js-client's `parallelUploads`
// speaks it. The final is a normal file; the partials' reservations are exactly what it
// takes; bad input gets a clear Atom error. On the run's backend (the data folder with
// SQLite, S3 with PostgreSQL).

const KiB = 1024;
const MiB = 1024 * KiB;
const FREE_VOLUME = 2 * MiB;
const GUARD = { timeout: 120_000 };
const EXPIRY = 2 * 24 * 3_600_000;

const clock = new TestClock();

let t: TestServer;
let ada: TestAccount;
before(async () => {
  t = await startTestServer({ maxFileSize: 64 * MiB, uploadVolumeFree: FREE_VOLUME, uploadVolumePremium: 512 * MiB, uploadExpiryMs: EXPIRY }, clock);
  ada = await t.account({ premiumDays: 365, trafficBytes: 1024 * MiB });
});
after(() => t.close());

function expectError(response: { status: number }, body: string, status: number, code: string): void {
  assert.equal(response.status, status, body);
  assert.equal(atomError(body)?.code, code, body);
}

async function reservedUploadBytes(accountId: number): Promise<number> {
  const rows = await t.storage.rows('reservations');
  return rows.filter((row) => Number(row.account_id) === accountId && row.kind === 'upload').reduce((sum, row) => sum + Number(row.planned), 0);
}

async function loggedBytes(accountId: number): Promise<number> {
  const rows = await t.storage.rows('upload_log');
  return rows.filter((row) => Number(row.account_id) === accountId).reduce((sum, row) => sum + Number(row.bytes), 0);
}

async function downloaded(fileId: string, key = ada.key): Promise<Buffer> {
  const response = await fetch(await directLink(t, key, fileId), { headers: { Authorization: key } });
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

/** A whole partial upload of `bytes`; its id. */
async function partial(key: string, bytes: Buffer): Promise<string> {
  const created = await createUpload(t, key, { length: bytes.length, headers: { 'Upload-Concat': 'partial' } });
  assert.equal(created.response.status, 201, created.body);
  const patched = await patchUpload(t, key, created.id, 0, bytes);
  assert.equal(patched.response.status, 204, patched.body);
  assert.equal(patched.response.headers.get('filehaven-file-id'), null, 'a whole partial is no file');
  return created.id;
}

/** POST /uploads with Upload-Concat: final;... naming `ids`. */
async function final(key: string, ids: string[], options: { metadata?: Record<string, string>; headers?: Record<string, string>; body?: Buffer } = {}) {
  const headers: Record<string, string> = {
    ...TUS,
    Authorization: key,
    'Upload-Concat': `final;${ids.map((id) => `${t.url}/uploads/${id}`).join(' ')}`,
    'Upload-Metadata': uploadMetadata(options.metadata ?? { filename: 'joined.bin' }),
    ...options.headers,
  };
  const response = await t.fetch('/uploads', { method: 'POST', headers, body: options.body ? new Uint8Array(options.body) : undefined });
  return { response, body: await response.text() };
}

function run(upload: tus.Upload): Promise<tus.HttpResponse> {
  return new Promise((resolve, reject) => {
    upload.options.onSuccess = ({ lastResponse }) => resolve(lastResponse);
    upload.options.onError = reject;
    upload.start();
  });
}

describe('tus-js-client parallelUploads', () => {
  test('a file sent as 4 partials lands as one file: its name, size, SHA-256; nothing reserved or kept after', GUARD, async () => {
    const content = randomBytes(9 * MiB + 12345);
    const last = await run(
      new tus.Upload(content, {
        endpoint: `${t.url}/uploads`,
        headers: { Authorization: ada.key },
        metadata: { filename: 'four ways.bin' },
        parallelUploads: 4,
        chunkSize: 2 * MiB,
      }),
    );
    assert.equal(last.getStatus(), 201);
    const fileId = last.getHeader('Filehaven-File-Id');
    assert.match(fileId ?? '', /^[A-Z0-9]{10}$/);
    assert.ok(last.getHeader('Filehaven-Delete-Link'), 'the answer that made the file shows its delete link');
    const stored = await downloaded(fileId!);
    assert.equal(stored.length, content.length);
    assert.equal(sha256(stored), sha256(content));
    const file = (await t.storage.rows('files')).find((row) => row.id === fileId);
    assert.equal(file?.name, 'four ways.bin');
    assert.equal(file?.sha256, sha256(content));
    assert.equal(await reservedUploadBytes(ada.account.id), 0, 'the partials reservations became the file');
    assert.deepEqual(await t.storage.resumable(), [], "the partials' bytes are gone");
    assert.deepEqual(await t.storage.leftovers(), []);
  });
});

describe('the final upload', () => {
  test('answers like a finished upload; HEAD says Upload-Concat and the length; PATCH is refused; a retried final answers the same file', GUARD, async () => {
    const parts = [randomBytes(300 * KiB), randomBytes(1), randomBytes(200 * KiB + 7)];
    const ids = [];
    for (const part of parts) ids.push(await partial(ada.key, part));
    const partHead = await headUpload(t, ada.key, ids[0]!);
    assert.equal(partHead.headers.get('upload-concat'), 'partial');
    assert.equal(partHead.headers.get('upload-offset'), String(parts[0]!.length));

    const made = await final(ada.key, ids, { metadata: { filename: 'three.bin' }, headers: { Accept: 'application/atom+xml' } });
    assert.equal(made.response.status, 201, made.body);
    assert.match(made.body, /File upload result/);
    const location = made.response.headers.get('location') ?? '';
    assert.match(location, new RegExp(`^${t.url}/uploads/[0-9a-f]{32}$`));
    const fileId = made.response.headers.get('filehaven-file-id')!;
    // A page of another origin (tus-js-client in a browser) reads it as tus's own answers.
    assert.equal(made.response.headers.get('access-control-allow-origin'), '*');
    for (const header of ['Location', 'Upload-Concat', 'Filehaven-File-Id', 'Filehaven-Delete-Link'])
      assert.ok(made.response.headers.get('access-control-expose-headers')?.split(', ').includes(header), header);
    const whole = Buffer.concat(parts);
    assert.equal(sha256(await downloaded(fileId)), sha256(whole));

    const finalId = location.slice(`${t.url}/uploads/`.length);
    const head = await headUpload(t, ada.key, finalId);
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('upload-offset'), String(whole.length));
    assert.equal(head.headers.get('upload-length'), String(whole.length));
    assert.equal(head.headers.get('upload-concat'), `final;${ids.map((id) => `${t.url}/uploads/${id}`).join(' ')}`);
    assert.equal(head.headers.get('filehaven-file-id'), fileId);

    const patched = await patchUpload(t, ada.key, finalId, whole.length, Buffer.from('x'));
    expectError(patched.response, patched.body, 403, 'errorUploadFaild');

    // The answer was lost: the client sends the final again.
    const again = await final(ada.key, ids, { metadata: { filename: 'three.bin' } });
    assert.equal(again.response.status, 201, again.body);
    assert.equal(again.response.headers.get('filehaven-file-id'), fileId);
    assert.equal(again.response.headers.get('location'), location, 'the same final upload');
    assert.equal(again.response.headers.get('filehaven-delete-link'), null, 'the delete link is shown once');
    // Not the same final: a part of them only, or in another order.
    for (const named of [ids.slice(0, 2), [ids[1]!, ids[0]!, ids[2]!]]) {
      const other = await final(ada.key, named);
      expectError(other.response, other.body, 409, 'errorUploadFaild');
    }
    assert.equal(await t.storage.count('files', { id: fileId }), 1);
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
    assert.deepEqual(await t.storage.resumable(), []);
  });

  test('two finals racing on the same partials make one file, and both answer it', GUARD, async () => {
    const parts = [randomBytes(2 * MiB), randomBytes(2 * MiB + 3)];
    const ids = [await partial(ada.key, parts[0]!), await partial(ada.key, parts[1]!)];
    const answers = await Promise.all([final(ada.key, ids), final(ada.key, [...ids])]);
    for (const answer of answers) assert.equal(answer.response.status, 201, answer.body);
    const fileIds = answers.map((answer) => answer.response.headers.get('filehaven-file-id'));
    assert.equal(fileIds[0], fileIds[1]);
    assert.equal(answers.filter((answer) => answer.response.headers.get('filehaven-delete-link')).length, 1, 'the delete link is shown once');
    assert.equal(sha256(await downloaded(fileIds[0]!)), sha256(Buffer.concat(parts)));
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
    assert.deepEqual(await t.storage.resumable(), []);
  });

  test('bad input: clear Atom errors, and the partials stay usable', GUARD, async () => {
    const a = await partial(ada.key, randomBytes(64 * KiB));
    const b = await partial(ada.key, randomBytes(32 * KiB));
    const whole = await uploadInChunks(t, ada.key, 'whole.bin', randomBytes(KiB), KiB);
    const unfinished = await createUpload(t, ada.key, { length: 10 * KiB, headers: { 'Upload-Concat': 'partial' } });
    await patchUpload(t, ada.key, unfinished.id, 0, randomBytes(KiB));

    let answer = await final(ada.key, [a, 'f'.repeat(32)]);
    expectError(answer.response, answer.body, 404, 'errorFileNotFound');
    // A page elsewhere that sent the partials reads a refusal too.
    assert.equal(answer.response.headers.get('access-control-allow-origin'), '*');
    answer = await final(ada.key, [a, unfinished.id]);
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');
    assert.match(answer.body, /not finished/);
    answer = await final(ada.key, [a, b, a]);
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');
    assert.match(answer.body, /twice/);
    answer = await final(ada.key, [a, whole.id]);
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');
    answer = await final(ada.key, [a, b], { body: Buffer.from('bytes') });
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');
    answer = await final(ada.key, [a, b], { headers: { 'Upload-Length': '100' } });
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');
    answer = await final(ada.key, [a, b], { metadata: {} });
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');
    answer = await final(ada.key, [a, b], { headers: { 'Upload-Concat': 'final;http://example.org/nothing' } });
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');
    answer = await final(ada.key, [a, b], { headers: { 'Upload-Concat': 'whole' } });
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');
    answer = await final(ada.key, [], { headers: { 'Upload-Concat': 'final;' } });
    expectError(answer.response, answer.body, 400, 'errorUploadFaild');

    // None of that consumed anything: the same partials make the file.
    const made = await final(ada.key, [b, a], { metadata: { filename: 'b then a.bin' } });
    assert.equal(made.response.status, 201, made.body);
    assert.equal(await deleteUpload(t, ada.key, unfinished.id).then((r) => r.status), 204);
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
  });

  test("another account's partial cannot be named; it stays its owner's", GUARD, async () => {
    const bob = await t.account({ premiumDays: 30 });
    const mine = await partial(ada.key, randomBytes(10 * KiB));
    const theirs = await partial(bob.key, randomBytes(10 * KiB));
    const answer = await final(ada.key, [mine, theirs]);
    expectError(answer.response, answer.body, 403, 'errorPermissionDenied');
    const made = await final(bob.key, [theirs], { metadata: { filename: 'bobs.bin' } });
    assert.equal(made.response.status, 201, made.body);
    assert.equal(await deleteUpload(t, ada.key, mine).then((r) => r.status), 204);
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
    assert.equal(await reservedUploadBytes(bob.account.id), 0);
  });
});

describe('upload volume', () => {
  test(
    'partials reserve their lengths: past the limit they are refused; at the limit the final fits; terminated ones give their volume back',
    GUARD,
    async () => {
      const free = await t.account();
      const first = await partial(free.key, randomBytes(1536 * KiB));
      assert.equal(await reservedUploadBytes(free.account.id), 1536 * KiB);
      const over = await createUpload(t, free.key, { length: 600 * KiB, headers: { 'Upload-Concat': 'partial' } });
      expectError(over.response, over.body, 429, 'errorUploadLimit');
      // Exactly what is left: the final takes the partials' own volume, not more.
      const second = await partial(free.key, randomBytes(512 * KiB));
      assert.equal(await reservedUploadBytes(free.account.id), FREE_VOLUME);
      const made = await final(free.key, [first, second], { metadata: { filename: 'edge.bin' } });
      assert.equal(made.response.status, 201, made.body);
      assert.equal(await reservedUploadBytes(free.account.id), 0);
      assert.equal(await loggedBytes(free.account.id), FREE_VOLUME, 'the file counts once, whole');

      const other = await t.account();
      const kept = await partial(other.key, randomBytes(KiB));
      const half = await createUpload(t, other.key, { length: 100 * KiB, headers: { 'Upload-Concat': 'partial' } });
      await patchUpload(t, other.key, half.id, 0, randomBytes(10 * KiB));
      assert.equal(await reservedUploadBytes(other.account.id), 101 * KiB);
      assert.equal((await deleteUpload(t, other.key, kept)).status, 204);
      assert.equal((await deleteUpload(t, other.key, half.id)).status, 204);
      assert.equal(await reservedUploadBytes(other.account.id), 0);
      assert.equal(await loggedBytes(other.account.id), 0);
      assert.deepEqual(await t.storage.resumable(), []);
    },
  );
});

describe('expiry', () => {
  test('partials not joined within --upload-expiry are refused, and gc removes them with their reservations; joined ones leave their file', GUARD, async () => {
    const joined = await final(ada.key, [await partial(ada.key, randomBytes(40 * KiB))], { metadata: { filename: 'stays.bin' } });
    assert.equal(joined.response.status, 201, joined.body);
    const whole = await partial(ada.key, randomBytes(100 * KiB));
    const half = await createUpload(t, ada.key, { length: 100 * KiB, headers: { 'Upload-Concat': 'partial' } });
    await patchUpload(t, ada.key, half.id, 0, randomBytes(50 * KiB));
    assert.equal(await reservedUploadBytes(ada.account.id), 200 * KiB);
    clock.advance(EXPIRY + 1000);
    try {
      const late = await final(ada.key, [whole]);
      expectError(late.response, late.body, 404, 'errorFileNotFound');
      const report = await t.server.services.gc.run();
      assert.ok(report.resumableUploadsExpired >= 3, JSON.stringify(report));
    } finally {
      clock.advance(-(EXPIRY + 1000));
    }
    assert.equal(await t.storage.count('resumable_uploads', { account_id: ada.account.id }), 0);
    assert.equal(await reservedUploadBytes(ada.account.id), 0);
    assert.deepEqual(await t.storage.resumable(), []);
    assert.equal((await downloaded(joined.response.headers.get('filehaven-file-id')!)).length, 40 * KiB);
  });
});
