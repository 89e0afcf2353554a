import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import {
  connect,
  eventually,
  fieldPart,
  filePart,
  multipartBody,
  type RawOutcome,
  type RawPart,
  type RawResponse,
  rawRequest,
  requestHead,
  steppedRequest,
  writeAll,
} from '../helpers/raw-upload.js';
import { atomError, startTestServer, type TestServer } from '../helpers/server.js';
import type { StorageSnapshot } from '../helpers/storage-view.js';
import { parseAtom } from '../helpers/xml.js';

/**
 * Hostile input to POST /files (API.md 2, 3, 8): every bad request gets its Atom error,
 * leaves nothing behind (no staged upload, no blob, no row) and leaves the server healthy.
 */

const MAX_FILE_SIZE = 1024 * 1024;
const BOUNDARY = '----filehaven-test-boundary-7MA4YWxkTrZu0gW';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
/** A hang guard, not a speed check: a server that never answers fails the test instead of stalling the run. */
const GUARD = { timeout: 60_000 };

let t: TestServer;
let key: string;
const good = { id: '', bytes: randomBytes(200 * 1024), downloadLink: '' };

before(async () => {
  t = await startTestServer({ maxFileSize: MAX_FILE_SIZE });
  ({ key } = await t.account());
  const up = await t.upload(key, 'keep-me.bin', good.bytes);
  assert.equal(up.response.status, 201, up.body);
  good.id = up.id;
  good.downloadLink = up.downloadLink;
});
after(() => t.close());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** POSTs a body to /files with the account's key (unless `headers` replaces it). */
function post(body: Buffer, contentType: string | null, headers: Record<string, string | number> = { Authorization: key }): Promise<RawOutcome> {
  return rawRequest(t.url, {
    path: '/files',
    headers: { ...headers, ...(contentType === null ? {} : { 'Content-Type': contentType }), 'Content-Length': body.length },
    body,
  });
}

function postParts(parts: RawPart[]): Promise<RawOutcome> {
  return post(multipartBody(BOUNDARY, parts), MULTIPART);
}

function responseOf(outcome: RawOutcome): RawResponse {
  assert.ok(outcome.response, `no response: ${outcome.error?.code ?? ''} ${outcome.error?.message ?? ''}`);
  return outcome.response;
}

/** The response is the Atom error `code` with `status`. */
function expectError(outcome: RawOutcome, status: number, code: string, message?: string): RawResponse {
  const response = responseOf(outcome);
  assert.equal(response.status, status, response.body);
  assert.equal(response.headers['content-type'], 'application/atom+xml; charset=utf-8');
  parseAtom(response.body);
  const error = atomError(response.body);
  assert.ok(error, `not an Atom error: ${response.body}`);
  assert.equal(error.code, code);
  if (message !== undefined) assert.equal(error.message, message);
  assert.doesNotMatch(response.body, /\bat .*\.(ts|js):\d+/, 'no stack trace');
  return response;
}

/** The storage before a request, which must hold nothing left over already. */
async function snapshot(): Promise<StorageSnapshot> {
  assert.deepEqual(await t.storage.leftovers(), [], 'left over by an earlier test');
  return t.storage.snapshot();
}

/**
 * Nothing of the request is kept: once the (asynchronous) cleanup is done no staged upload
 * and no blob that no row names is left, and blobs and rows are exactly as before.
 */
async function expectNothingKept(before: StorageSnapshot): Promise<void> {
  const cleaned = await eventually(async () => (await t.storage.leftovers()).length === 0);
  assert.ok(cleaned, `left behind: ${(await t.storage.leftovers()).join(', ')}`);
  assert.deepEqual(await t.storage.snapshot(), before);
}

/** GET /healthz answers 200. */
async function expectHealthy(): Promise<void> {
  const response = await t.fetch('/healthz');
  assert.equal(response.status, 200);
  assert.equal(await response.text(), 'ok\n');
}

/** A 201 whose title is `name` and whose stored file has exactly `bytes`. */
async function expectStored(outcome: RawOutcome, name: string, bytes: Buffer): Promise<string> {
  const response = responseOf(outcome);
  assert.equal(response.status, 201, response.body);
  const entry = parseAtom(response.body).feed.entry;
  assert.equal(entry.title, name);
  assert.equal(entry['ed:size'], String(bytes.length));
  const row = await t.server.services.store.files.byId(entry.id);
  assert.ok(row, 'a files row');
  assert.equal(row.name, name);
  assert.equal(row.size, bytes.length);
  assert.equal(row.sha256, sha256(bytes));
  const download = entry.link.find((link: Record<string, string>) => link['@title'] === 'download_link');
  const got = await fetch(`${download['@href']}?download=1`);
  assert.equal(got.status, 200);
  assert.ok(Buffer.from(await got.arrayBuffer()).equals(bytes), 'downloaded bytes differ');
  return name;
}

/** Uploads one `upload` part whose Content-Disposition ends with `filenameParam` (raw bytes); returns the outcome and the content sent. */
async function uploadNamed(filenameParam: string | Buffer): Promise<{ outcome: RawOutcome; bytes: Buffer }> {
  const bytes = randomBytes(64);
  const disposition = Buffer.concat([Buffer.from('Content-Disposition: form-data; name="upload"; '), Buffer.from(filenameParam)]);
  const outcome = await postParts([{ headers: [disposition, 'Content-Type: application/octet-stream'], body: bytes }]);
  return { outcome, bytes };
}

// --- authentication ---------------------------------------------------------------------

test('no Authorization header: 401 errorPermissionDenied "Wrong apikey", nothing stored', GUARD, async () => {
  const before = await snapshot();
  const outcome = await post(multipartBody(BOUNDARY, [filePart('upload', 'a.txt', 'hello')]), MULTIPART, {});
  expectError(outcome, 401, 'errorPermissionDenied', 'Wrong apikey');
  await expectNothingKept(before);
  await expectHealthy();
});

test('unknown API key: 401 errorPermissionDenied "Wrong apikey", nothing stored', GUARD, async () => {
  const before = await snapshot();
  const outcome = await post(multipartBody(BOUNDARY, [filePart('upload', 'a.txt', 'hello')]), MULTIPART, {
    Authorization: randomBytes(16).toString('hex'),
  });
  expectError(outcome, 401, 'errorPermissionDenied', 'Wrong apikey');
  await expectNothingKept(before);
  await expectHealthy();
});

// --- bodies that are not a good multipart form ---------------------------------------------

test('a body that is not multipart: 400 errorUploadFaild', GUARD, async () => {
  const before = await snapshot();
  expectError(await post(Buffer.from('just some text, no form at all'), 'text/plain'), 400, 'errorUploadFaild');
  expectError(await post(Buffer.from('upload=hello'), 'application/x-www-form-urlencoded'), 400, 'errorUploadFaild');
  expectError(await post(randomBytes(1000), 'application/octet-stream'), 400, 'errorUploadFaild');
  // bodies the framework parses (or refuses) before the upload handler runs
  expectError(await post(Buffer.from('{"upload": "hello"'), 'application/json'), 400, 'errorUploadFaild');
  expectError(await post(Buffer.from('{"upload": "hello"}'), 'application/json'), 400, 'errorUploadFaild');
  const big = await post(randomBytes(3 * MAX_FILE_SIZE), 'application/octet-stream');
  if (big.response) expectError(big, 400, 'errorUploadFaild');
  else assert.match(String(big.error.code), /^(ECONNRESET|EPIPE)$/, String(big.error));
  await expectNothingKept(before);
  await expectHealthy();
});

test('a body without any Content-Type: 400 errorUploadFaild', GUARD, async () => {
  const before = await snapshot();
  expectError(await post(Buffer.from('raw bytes'), null), 400, 'errorUploadFaild');
  await expectNothingKept(before);
  await expectHealthy();
});

test('malformed multipart: 400 errorUploadFaild', GUARD, async () => {
  const before = await snapshot();
  const valid = multipartBody(BOUNDARY, [filePart('upload', 'a.txt', 'hello')]);
  // multipart without a boundary parameter
  expectError(await post(valid, 'multipart/form-data'), 400, 'errorUploadFaild');
  // a boundary that never occurs in the body
  expectError(await post(Buffer.from('this is not a multipart body\r\n'), MULTIPART), 400, 'errorUploadFaild');
  // part headers that never end (no blank line before the content)
  const headless = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="upload"; filename="a.txt"\r\nhello\r\n--${BOUNDARY}--\r\n`);
  expectError(await post(headless, MULTIPART), 400, 'errorUploadFaild');
  await expectNothingKept(before);
  await expectHealthy();
});

test('truncated multipart (closing boundary missing, request complete): 400 errorUploadFaild', GUARD, async () => {
  const before = await snapshot();
  const content = randomBytes(100 * 1024);
  // the body stops inside the file's content
  const cut = multipartBody(BOUNDARY, [filePart('upload', 'a.bin', content)], { closing: false });
  expectError(await post(cut.subarray(0, cut.length - 1000), MULTIPART), 400, 'errorUploadFaild');
  // the file part is delimited, but the closing boundary never comes
  const delimited = Buffer.concat([multipartBody(BOUNDARY, [filePart('upload', 'a.bin', content)], { closing: false }), Buffer.from(`--${BOUNDARY}`)]);
  expectError(await post(delimited, MULTIPART), 400, 'errorUploadFaild');
  // everything but the closing boundary
  expectError(await post(multipartBody(BOUNDARY, [filePart('upload', 'a.bin', content)], { closing: false }), MULTIPART), 400, 'errorUploadFaild');
  await expectNothingKept(before);
  await expectHealthy();
});

test('an empty body: 400 errorUploadFaild', GUARD, async () => {
  const before = await snapshot();
  expectError(await post(Buffer.alloc(0), MULTIPART), 400, 'errorUploadFaild');
  await expectNothingKept(before);
  await expectHealthy();
});

/**
 * Polls until the server staged a file into the blob store since `from` (a count of
 * t.storage.stagings()): `started` once a stage() call runs, `staged` once one of `size`
 * bytes is complete (written and synced, or uploaded).
 */
function stagingReached(from: number, until: { started: true } | { staged: number }): Promise<boolean> {
  return eventually(async () => {
    const since = t.storage.stagings().slice(from);
    if ('started' in until) return since.some((staging) => staging.state === 'running');
    return since.some((staging) => staging.state === 'staged' && staging.size === until.staged);
  });
}

// --- the number of file parts ---------------------------------------------------------------

test('two file parts: 400 errorUploadFaild, nothing stored', GUARD, async () => {
  const before = await snapshot();
  const first = randomBytes(300 * 1024);
  const second = randomBytes(10);
  expectError(await postParts([filePart('upload', 'one.bin', first), filePart('upload', 'two.bin', second)]), 400, 'errorUploadFaild');
  // tiny parts: the second arrives in the same chunk as the first
  expectError(await postParts([filePart('upload', 'one.txt', 'a'), filePart('other', 'two.txt', 'b')]), 400, 'errorUploadFaild');
  // `file` and `upload` both with a filename are two files, too
  expectError(await postParts([filePart('file', 'one.txt', 'a'), filePart('upload', 'two.txt', 'b')]), 400, 'errorUploadFaild');
  await expectNothingKept(before);
  await expectHealthy();
});

test('a second file part after the first is fully staged: 400 errorUploadFaild, the staged file is dropped', GUARD, async () => {
  const before = await snapshot();
  const first = randomBytes(100 * 1024);
  const body = multipartBody(BOUNDARY, [filePart('upload', 'one.bin', first), filePart('upload', 'two.bin', 'second')]);
  // up to and including the delimiter after the first file, so the first file's stream ends
  const split = body.indexOf(`\r\n--${BOUNDARY}\r\n`, 10) + `\r\n--${BOUNDARY}\r\n`.length;
  const stagings = t.storage.stagings().length;
  const outcome = await steppedRequest(t.url, '/files', { Authorization: key, 'Content-Type': MULTIPART, 'Content-Length': body.length }, [
    body.subarray(0, split),
    async () => {
      // Staged completely (synced, or uploaded), so the discard of a finished staging runs.
      assert.ok(await stagingReached(stagings, { staged: first.length }), 'the first file was never staged');
    },
    body.subarray(split),
  ]);
  expectError(outcome, 400, 'errorUploadFaild');
  await expectNothingKept(before);
  await expectHealthy();
});

test('no file part (only fields): 400 errorUploadFaild', GUARD, async () => {
  const before = await snapshot();
  expectError(await postParts([fieldPart('title', 'hello'), fieldPart('file', 'not a file')]), 400, 'errorUploadFaild');
  await expectNothingKept(before);
  await expectHealthy();
});

test('a 0-byte file: 400 errorEmptyFile, nothing stored', GUARD, async () => {
  const before = await snapshot();
  expectError(await postParts([filePart('upload', 'empty.txt', Buffer.alloc(0))]), 400, 'errorEmptyFile');
  await expectNothingKept(before);
  await expectHealthy();
});

// --- size limit -----------------------------------------------------------------------------

test('a file over the limit, streamed without Content-Length: 413 errorFileSize, nothing kept', GUARD, async () => {
  const before = await snapshot();
  const body = multipartBody(BOUNDARY, [filePart('upload', 'big.bin', randomBytes(3 * MAX_FILE_SIZE))]);
  // no Content-Length: chunked, so only the streaming check can catch it
  const outcome = await rawRequest(t.url, { path: '/files', headers: { Authorization: key, 'Content-Type': MULTIPART }, body });
  if (outcome.response) {
    expectError(outcome, 413, 'errorFileSize');
    assert.equal(outcome.response.headers.connection, 'close');
  } else {
    assert.match(String(outcome.error.code), /^(ECONNRESET|EPIPE)$/, String(outcome.error));
  }
  await expectNothingKept(before);
  await expectHealthy();
});

test('a file over the limit with an honest Content-Length: 413 errorFileSize, nothing kept', GUARD, async () => {
  const before = await snapshot();
  // 1.5 MiB: within the framing slack, so the upload is only caught while streaming
  const outcome = await postParts([filePart('upload', 'big.bin', randomBytes(MAX_FILE_SIZE + MAX_FILE_SIZE / 2))]);
  if (outcome.response) expectError(outcome, 413, 'errorFileSize');
  else assert.match(String(outcome.error.code), /^(ECONNRESET|EPIPE)$/, String(outcome.error));
  await expectNothingKept(before);
  await expectHealthy();
});

test('a file exactly at the limit is accepted; one byte more is refused', GUARD, async () => {
  const bytes = randomBytes(MAX_FILE_SIZE);
  await expectStored(await postParts([filePart('upload', 'limit.bin', bytes)]), 'limit.bin', bytes);
  const before = await snapshot();
  const outcome = await postParts([filePart('upload', 'over.bin', randomBytes(MAX_FILE_SIZE + 1))]);
  if (outcome.response) expectError(outcome, 413, 'errorFileSize');
  else assert.match(String(outcome.error.code), /^(ECONNRESET|EPIPE)$/, String(outcome.error));
  await expectNothingKept(before);
  await expectHealthy();
});

test('Content-Length announcing too much is refused up front: 413 errorFileSize, Connection: close', GUARD, async () => {
  const before = await snapshot();
  const body = multipartBody(BOUNDARY, [filePart('upload', 'big.bin', randomBytes(3 * MAX_FILE_SIZE))]);
  const headers = { Authorization: key, 'Content-Type': MULTIPART, 'Content-Length': body.length };
  // headers only: the answer must come without a byte of the body
  const upFront = await rawRequest(t.url, { path: '/files', headers, body, waitForResponseBeforeBody: true });
  const response = expectError(upFront, 413, 'errorFileSize');
  assert.equal(response.headers.connection, 'close');
  // the whole body sent anyway: an answer or a reset, never a stored file
  const blind = await rawRequest(t.url, { path: '/files', headers, body });
  if (blind.response) expectError(blind, 413, 'errorFileSize');
  else assert.match(String(blind.error.code), /^(ECONNRESET|EPIPE)$/, String(blind.error));
  await expectNothingKept(before);
  await expectHealthy();
});

// --- which part is the file -----------------------------------------------------------------

test('the part named upload is the file; a text field named file is just a field', GUARD, async () => {
  const bytes = randomBytes(2000);
  const outcome = await postParts([fieldPart('file', 'not the file'), filePart('upload', 'chosen.bin', bytes), fieldPart('note', 'x')]);
  await expectStored(outcome, 'chosen.bin', bytes);
  await expectHealthy();
});

test('a part named file is accepted when there is no upload part', GUARD, async () => {
  const bytes = randomBytes(2000);
  const outcome = await postParts([fieldPart('note', 'x'), filePart('file', 'via-file.bin', bytes)]);
  await expectStored(outcome, 'via-file.bin', bytes);
  await expectHealthy();
});

test('a part named upload without a filename is the file, named "file"', GUARD, async () => {
  const bytes = Buffer.from('content of a part without filename\n');
  const outcome = await postParts([filePart('upload', null, bytes)]);
  await expectStored(outcome, 'file', bytes);
  await expectHealthy();
});

// --- file names -----------------------------------------------------------------------------

test('name ../../etc/passwd is stored as passwd', GUARD, async () => {
  const { outcome, bytes } = await uploadNamed('filename="../../etc/passwd"');
  await expectStored(outcome, 'passwd', bytes);
  const windows = await uploadNamed('filename="..\\\\..\\\\windows\\\\win.ini"');
  await expectStored(windows.outcome, 'win.ini', windows.bytes);
  const encoded = await uploadNamed("filename*=UTF-8''..%2F..%2Fetc%2Fshadow");
  await expectStored(encoded.outcome, 'shadow', encoded.bytes);
  await expectHealthy();
});

test('NUL and control characters are stripped from the name', GUARD, async () => {
  const raw = await uploadNamed(Buffer.from('filename="a\x00b\x01c\x07d\x1be\x7f\x1f.txt"', 'latin1'));
  await expectStored(raw.outcome, 'abcde.txt', raw.bytes);
  const encoded = await uploadNamed("filename*=UTF-8''r%00e%01p%1Bo%09r%C2%85t%E2%80%AEfdp.exe");
  await expectStored(encoded.outcome, 'reportfdp.exe', encoded.bytes);
  await expectHealthy();
});

test('a 300-byte name is cut to at most 255 UTF-8 bytes, never inside a character', GUARD, async () => {
  // 'a' + 100 × '€' (3 bytes) = 301 bytes: 255 would fall inside a character
  const euros = await uploadNamed(`filename="a${'€'.repeat(100)}"`);
  const euroName = await expectStored(euros.outcome, `a${'€'.repeat(84)}`, euros.bytes);
  assert.equal(Buffer.byteLength(euroName), 253);
  // 'ab' + 75 × '😀' (4 bytes) = 302 bytes
  const emoji = await uploadNamed(`filename="ab${'😀'.repeat(75)}"`);
  const emojiName = await expectStored(emoji.outcome, `ab${'😀'.repeat(63)}`, emoji.bytes);
  assert.equal(Buffer.byteLength(emojiName), 254);
  // plain ASCII: exactly 255 bytes kept
  const ascii = await uploadNamed(`filename="${'x'.repeat(296)}.txt"`);
  await expectStored(ascii.outcome, 'x'.repeat(255), ascii.bytes);
  await expectHealthy();
});

test('emoji in the name are kept intact', GUARD, async () => {
  const name = '📄 report 👍🏽 👨‍👩‍👧 🇩🇪.txt';
  const { outcome, bytes } = await uploadNamed(`filename="${name}"`);
  await expectStored(outcome, name, bytes);
  await expectHealthy();
});

test('a name with <&"> is escaped in the XML and round-trips', GUARD, async () => {
  const escaped = await uploadNamed('filename="<&\\">\'.txt"');
  const response = responseOf(escaped.outcome);
  assert.doesNotMatch(response.body, /<&">/);
  await expectStored(escaped.outcome, '<&">\'.txt', escaped.bytes);
  const encoded = await uploadNamed("filename*=UTF-8''%3C%26%22%3E%20a%26amp%3B.txt");
  await expectStored(encoded.outcome, '<&"> a&amp;.txt', encoded.bytes);
  await expectHealthy();
});

test('a name that is only .. or empty becomes file', GUARD, async () => {
  for (const param of ['filename=".."', 'filename=""', 'filename="../.."', 'filename="."', 'filename="   "', 'filename="\x01\x02"']) {
    const { outcome, bytes } = await uploadNamed(param);
    await expectStored(outcome, 'file', bytes);
  }
  await expectHealthy();
});

test('a UTF-8 filename sent raw in the Content-Disposition header is decoded as UTF-8', GUARD, async () => {
  const name = 'Grüße – 日本語 Ωmega.pdf';
  const { outcome, bytes } = await uploadNamed(Buffer.from(`filename="${name}"`, 'utf8'));
  await expectStored(outcome, name, bytes);
  await expectHealthy();
});

// --- the client goes away -------------------------------------------------------------------

/** Opens a raw connection and sends the request head for `body`, then `bytes` of it. */
async function startRawUpload(body: Buffer, bytes: number) {
  const socket = await connect(t.url);
  await writeAll(socket, requestHead('POST', '/files', new URL(t.url).host, { Authorization: key, 'Content-Type': MULTIPART, 'Content-Length': body.length }));
  await writeAll(socket, body.subarray(0, bytes));
  return socket;
}

test('a client that disconnects mid-upload leaves no temp file and no row', GUARD, async () => {
  const before = await snapshot();
  const body = multipartBody(BOUNDARY, [filePart('upload', 'half.bin', randomBytes(512 * 1024))]);
  const stagings = t.storage.stagings().length;
  const socket = await startRawUpload(body, Math.floor(body.length / 2));
  // wait until the server is staging the file, so the disconnect hits a running upload
  assert.ok(await stagingReached(stagings, { started: true }), 'the upload never started staging');
  socket.destroy();
  await expectNothingKept(before);
  await expectHealthy();
});

test('a client that disconnects just after the file part begins leaves nothing', GUARD, async () => {
  const before = await snapshot();
  const body = multipartBody(BOUNDARY, [filePart('upload', 'never.bin', randomBytes(1024))]);
  // the part headers and a few bytes of content (the parser looks ahead for a boundary)
  const stagings = t.storage.stagings().length;
  const socket = await startRawUpload(body, body.indexOf('\r\n\r\n') + 4 + 100);
  assert.ok(await stagingReached(stagings, { started: true }), 'the upload never started staging');
  socket.destroy();
  await expectNothingKept(before);
  await expectHealthy();
});

test('a client that disconnects after the whole file but before the closing boundary leaves nothing', GUARD, async () => {
  const before = await snapshot();
  const content = randomBytes(64 * 1024);
  const body = multipartBody(BOUNDARY, [filePart('upload', 'almost.bin', content)]);
  const stagings = t.storage.stagings().length;
  const socket = await startRawUpload(body, body.length - '--\r\n'.length);
  // staged completely, so the discard of a finished staging runs
  assert.ok(await stagingReached(stagings, { staged: content.length }), 'the file was never staged');
  socket.destroy();
  await expectNothingKept(before);
  await expectHealthy();
});

// --- afterwards -----------------------------------------------------------------------------

test('the file uploaded before all of this still downloads with identical bytes', GUARD, async () => {
  await expectHealthy();
  const row = await t.server.services.store.files.byId(good.id);
  assert.ok(row);
  assert.equal(row.sha256, sha256(good.bytes));
  const response = await fetch(`${good.downloadLink}?download=1`);
  assert.equal(response.status, 200);
  const bytes = Buffer.from(await response.arrayBuffer());
  assert.equal(bytes.length, good.bytes.length);
  assert.equal(sha256(bytes), sha256(good.bytes));
  assert.ok(bytes.equals(good.bytes));
  assert.deepEqual(await t.storage.leftovers(), []);
});
