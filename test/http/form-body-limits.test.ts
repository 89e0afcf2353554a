import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FORM_BODY_LIMIT } from '../../src/http/plugins/body-parsers.js';
import { fieldPart, filePart, multipartBody, type RawOutcome, type RawResponse, rawRequest } from '../helpers/raw-upload.js';
import { atomError, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Multipart bodies of non-upload requests (body-parsers.ts): file parts are skipped
 * whatever their size, the parser always answers, and a body past FORM_BODY_LIMIT is
 * refused with 413 (Atom on API routes, a page on web routes) instead of read in full.
 */

const BOUNDARY = '----filehaven-form-limit-boundary-3kQ9';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
/** A hang guard, not a speed check: a server that never answers fails the test instead of stalling the run. */
const GUARD = { timeout: 60_000 };
const CLIENT_TIMEOUT_MS = 30_000;

let t: TestServer;

before(async () => {
  t = await startTestServer();
});
after(() => t.close());

/** POSTs a multipart body, failing (instead of hanging) if no answer comes. */
async function post(path: string, body: Buffer, options: { declareLength?: boolean; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const outcome = await Promise.race([
    rawRequest(t.url, {
      path,
      headers: { ...options.headers, 'Content-Type': MULTIPART, ...(options.declareLength === false ? {} : { 'Content-Length': body.length }) },
      body,
    }),
    new Promise<RawOutcome>((_resolve, reject) =>
      setTimeout(() => reject(new Error(`no answer to POST ${path} within ${CLIENT_TIMEOUT_MS} ms`)), CLIENT_TIMEOUT_MS).unref(),
    ),
  ]);
  assert.ok(outcome.response, `POST ${path}: ${outcome.error?.message}`);
  return outcome.response;
}

test('a multipart POST /apikeys with a 100 KiB file part is answered (fields read, file skipped)', GUARD, async () => {
  const { login, password } = await t.account();
  const junk = Buffer.alloc(100 * 1024, 0x61);
  const good = await post(
    '/apikeys',
    multipartBody(BOUNDARY, [fieldPart('login', login), fieldPart('password', password), filePart('junk', '100k.bin', junk)]),
  );
  assert.equal(good.status, 201, good.body);
  assert.match(good.body, /<content type="text">[A-Za-z0-9]{32}<\/content>/);

  const wrong = await post(
    '/apikeys',
    multipartBody(BOUNDARY, [fieldPart('login', login), fieldPart('password', 'not the password'), filePart('junk', '100k.bin', junk)]),
  );
  assert.equal(wrong.status, 401, wrong.body);
  assert.equal(atomError(wrong.body)?.code, 'errorWrongCredentials');

  // The file part before the fields, and several of them.
  const first = await post(
    '/apikeys',
    multipartBody(BOUNDARY, [filePart('a', 'a.bin', junk), filePart('b', 'b.bin', junk), fieldPart('login', login), fieldPart('password', password)]),
  );
  assert.equal(first.status, 201, first.body);
});

test('a multipart body past the form limit is refused with 413 errorBadRequest, declared or chunked', GUARD, async () => {
  const { key } = await t.account();
  const big = multipartBody(BOUNDARY, [fieldPart('name', 'big'), filePart('junk', 'big.bin', Buffer.alloc(3 * 1024 * 1024, 0x62))]);
  assert.ok(big.length > FORM_BODY_LIMIT);
  for (const declareLength of [true, false]) {
    const response = await post('/folders', big, { declareLength, headers: { Authorization: key } });
    assert.equal(response.status, 413, `declared length ${declareLength}: ${response.body}`);
    assert.match(String(response.headers['content-type']), /^application\/atom\+xml/);
    assert.equal(atomError(response.body)?.code, 'errorBadRequest', response.body);
  }
  // The server is fine afterwards, and a small multipart form still works.
  const ok = await post('/folders', multipartBody(BOUNDARY, [fieldPart('name', 'small')]), { headers: { Authorization: key } });
  assert.equal(ok.status, 201, ok.body);
});

test('a web form past the limit gets the 413 page', GUARD, async () => {
  const big = multipartBody(BOUNDARY, [fieldPart('login', 'x'), fieldPart('password', 'y'), filePart('junk', 'big.bin', Buffer.alloc(3 * 1024 * 1024, 0x63))]);
  for (const declareLength of [true, false]) {
    const response = await post('/signin', big, { declareLength, headers: { Accept: 'text/html' } });
    assert.equal(response.status, 413, `declared length ${declareLength}: ${response.body}`);
    assert.match(String(response.headers['content-type']), /^text\/html/);
  }
});

test('a multipart form past its field, part or field-size limits is refused, not acted on in part', GUARD, async () => {
  const { key } = await t.account();
  const many = (n: number) => Array.from({ length: n }, (_, i) => fieldPart(`f${i}`, 'x'));
  for (const [what, parts] of [
    ['201 fields', [fieldPart('name', 'Many'), ...many(200)]],
    ['301 parts', [fieldPart('name', 'Parts'), ...Array.from({ length: 300 }, (_, i) => filePart(`p${i}`, 'a.txt', 'x'))]],
    ['a 65 KiB field', [fieldPart('name', 'y'.repeat(65 * 1024))]],
  ] as const) {
    const response = await post('/folders', multipartBody(BOUNDARY, [...parts]), { headers: { Authorization: key } });
    assert.equal(response.status, 400, `${what}: ${response.body}`);
    assert.equal(atomError(response.body)?.code, 'errorBadRequest', what);
  }
  const folders = await (await t.fetch('/folders', { headers: { Authorization: key } })).text();
  assert.doesNotMatch(folders, /<title>(Many|Parts)<\/title>/, 'no folder was made from a form read in part');
});
