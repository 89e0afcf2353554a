import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bodyBytes, randomPayload, rawRequest, sha256, uploadNamed } from '../helpers/downloads.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The raw free download `/<id>/<name>?download=1` (API.md 1): bytes, validators,
// conditional GET, HEAD, byte ranges and the attachment name.

const SIZE = 384 * 1024 + 17;
let t: TestServer;
let key: string;
let payload: Buffer;
let raw: string;

before(async () => {
  t = await startTestServer();
  ({ key } = await t.account());
  payload = randomPayload(SIZE);
  const up = await t.upload(key, 'data.bin', payload);
  assert.equal(up.response.status, 201, up.body);
  raw = `${up.downloadLink}?download=1`;
});
after(() => t.close());

/** A ranged GET: asserts a 206 with this Content-Range and exactly these bytes. */
async function expectPartial(headers: Record<string, string>, start: number, end: number): Promise<void> {
  const response = await fetch(raw, { headers });
  const body = await bodyBytes(response);
  assert.equal(response.status, 206, `${JSON.stringify(headers)} → ${response.status}`);
  assert.equal(response.headers.get('content-range'), `bytes ${start}-${end}/${SIZE}`);
  assert.equal(response.headers.get('content-length'), String(end - start + 1));
  assert.equal(body.length, end - start + 1);
  assert.ok(body.equals(payload.subarray(start, end + 1)), 'wrong bytes for the range');
}

/** A GET that must ignore its Range header: 200 and the whole file. */
async function expectWhole(headers: Record<string, string>): Promise<void> {
  const response = await fetch(raw, { headers });
  const body = await bodyBytes(response);
  assert.equal(response.status, 200, `${JSON.stringify(headers)} → ${response.status}`);
  assert.equal(response.headers.get('content-range'), null);
  assert.equal(sha256(body), sha256(payload));
}

describe('raw download', () => {
  test('sends the exact bytes as an attachment with validators', async () => {
    const response = await fetch(raw);
    const body = await bodyBytes(response);
    assert.equal(response.status, 200);
    assert.equal(body.length, SIZE);
    assert.equal(sha256(body), sha256(payload));
    assert.equal(response.headers.get('content-length'), String(SIZE));
    assert.equal(response.headers.get('content-type'), 'application/octet-stream');
    assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename=("?)data\.bin\1$/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('accept-ranges'), 'bytes');
    assert.match(response.headers.get('etag') ?? '', /^"[^"]+"$/);
    const lastModified = response.headers.get('last-modified') ?? '';
    assert.ok(!Number.isNaN(Date.parse(lastModified)), `Last-Modified: ${lastModified}`);
  });

  test('a different name in the URL still serves the file by its id', async () => {
    const response = await fetch(raw.replace('/data.bin?', '/other-name.bin?'));
    assert.equal(response.status, 200);
    assert.equal(sha256(await bodyBytes(response)), sha256(payload));
  });

  test('If-None-Match with the ETag answers 304 with no body', async () => {
    const etag = (await fetch(raw, { method: 'HEAD' })).headers.get('etag')!;
    for (const value of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const response = await rawRequest(raw, { headers: { 'If-None-Match': value } });
      assert.equal(response.status, 304, `If-None-Match: ${value}`);
      assert.equal(response.body.length, 0);
      assert.equal(response.headers.etag, etag);
    }
    const other = await rawRequest(raw, { headers: { 'If-None-Match': '"something-else"' } });
    assert.equal(other.status, 200);
    assert.equal(sha256(other.body), sha256(payload));
  });

  test('If-Modified-Since at Last-Modified answers 304', async () => {
    const lastModified = (await fetch(raw, { method: 'HEAD' })).headers.get('last-modified')!;
    const response = await rawRequest(raw, { headers: { 'If-Modified-Since': lastModified } });
    assert.equal(response.status, 304);
    assert.equal(response.body.length, 0);
    const older = await rawRequest(raw, { headers: { 'If-Modified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' } });
    assert.equal(older.status, 200);
    assert.equal(older.body.length, SIZE);
  });

  test('HEAD sends the headers with Content-Length and no body', async () => {
    const response = await fetch(raw, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-length'), String(SIZE));
    assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename=("?)data\.bin\1$/);
    assert.ok(response.headers.get('etag'));
    assert.equal((await bodyBytes(response)).length, 0);
  });

  test('HEAD of a range describes the part', async () => {
    const response = await fetch(raw, { method: 'HEAD', headers: { Range: 'bytes=10-99' } });
    assert.equal(response.status, 206);
    assert.equal(response.headers.get('content-range'), `bytes 10-99/${SIZE}`);
    assert.equal(response.headers.get('content-length'), '90');
    assert.equal((await bodyBytes(response)).length, 0);
  });

  test('Range bytes=10-99 answers 206 with those bytes', async () => {
    await expectPartial({ Range: 'bytes=10-99' }, 10, 99);
  });

  test('single-byte, first-byte and last-byte ranges', async () => {
    await expectPartial({ Range: 'bytes=0-0' }, 0, 0);
    await expectPartial({ Range: `bytes=${SIZE - 1}-${SIZE - 1}` }, SIZE - 1, SIZE - 1);
    await expectPartial({ Range: 'bytes=0-' }, 0, SIZE - 1);
  });

  test('suffix range bytes=-100 answers the last 100 bytes', async () => {
    await expectPartial({ Range: 'bytes=-100' }, SIZE - 100, SIZE - 1);
  });

  test('open range bytes=100- answers from 100 to the end', async () => {
    await expectPartial({ Range: 'bytes=100-' }, 100, SIZE - 1);
  });

  test('a range past the end is cut to the file', async () => {
    await expectPartial({ Range: `bytes=${SIZE - 10}-${SIZE + 5000}` }, SIZE - 10, SIZE - 1);
  });

  test('an unsatisfiable range answers 416 with Content-Range bytes */size', async () => {
    for (const range of [`bytes=${SIZE}-`, `bytes=${SIZE + 100}-${SIZE + 200}`]) {
      const response = await fetch(raw, { headers: { Range: range } });
      const body = await bodyBytes(response);
      assert.equal(response.status, 416, range);
      assert.equal(response.headers.get('content-range'), `bytes */${SIZE}`);
      assert.ok(body.length < 100, 'a 416 carries no file bytes');
    }
  });

  test('a malformed Range is ignored: 200 and the whole file', async () => {
    for (const range of ['bytes=abc', 'items=0-10', 'bytes', 'bytes=x-y', '0-10', '']) {
      await expectWhole({ Range: range });
    }
  });

  test('If-Range with the current ETag honours the Range; another validator gets the whole file', async () => {
    const head = await fetch(raw, { method: 'HEAD' });
    const etag = head.headers.get('etag')!;
    await expectPartial({ Range: 'bytes=10-99', 'If-Range': etag }, 10, 99);
    await expectWhole({ Range: 'bytes=10-99', 'If-Range': '"0000000000000000"' });
    // A weak tag never matches for If-Range (RFC 9110 13.1.5).
    await expectWhole({ Range: 'bytes=10-99', 'If-Range': `W/${etag}` });
    await expectWhole({ Range: 'bytes=10-99', 'If-Range': 'Thu, 01 Jan 1970 00:00:00 GMT' });
  });

  test('a multi-range request gets the whole file (RFC 9110 allows it)', async () => {
    await expectWhole({ Range: 'bytes=0-9,100-199' });
    await expectWhole({ Range: 'bytes=0-9,-5' });
  });

  test('a download start is counted for no Range, an empty one, or one from byte 0; never for a resumed range', async () => {
    const up = await uploadNamed(t, key, 'counted.bin', randomPayload(4096));
    // Counts are written in batches: the ones taken so far first.
    const countOf = async () => {
      await t.server.services.downloads.countsWritten();
      return (await t.server.services.store.files.byId(up.id))!.downloads;
    };
    const download = async (headers: Record<string, string>) => bodyBytes(await fetch(`${up.downloadLink}?download=1`, { headers }));
    for (const [headers, counted] of [
      [{}, 1],
      [{ Range: '' }, 1],
      [{ Range: 'bytes=0-99' }, 1],
      [{ Range: 'bytes=100-' }, 0],
    ] as const) {
      const before = await countOf();
      await download(headers);
      // Counted before the first byte is sent (so by the time the body is read).
      assert.equal((await countOf()) - before, counted, JSON.stringify(headers));
    }
  });

  test('overlapping ranges that combine into one are served as that one range', async () => {
    await expectPartial({ Range: 'bytes=0-99,50-149' }, 0, 149);
  });
});

describe('Content-Disposition', () => {
  /** The attachment header of a fresh upload with this exact name. */
  async function dispositionFor(name: string): Promise<string> {
    const up = await uploadNamed(t, key, name, 'content');
    const response = await fetch(`${up.downloadLink}?download=1`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'content');
    const header = response.headers.get('content-disposition');
    assert.ok(header, 'no Content-Disposition');
    return header;
  }

  /** The filename parameter (quoted-string, unescaped) and the decoded filename* (RFC 8187). */
  function params(header: string): { filename?: string; extended?: string } {
    assert.match(header, /^attachment;/);
    const quoted = /;\s*filename="((?:[^"\\]|\\.)*)"/.exec(header)?.[1];
    const ext = /;\s*filename\*=UTF-8''([^;\s]+)/i.exec(header)?.[1];
    if (ext !== undefined) assert.match(ext, /^[A-Za-z0-9!#$&+.^_`|~%-]+$/, 'filename* holds only attr-char and %XX');
    return {
      filename: quoted?.replace(/\\(.)/g, '$1'),
      extended: ext === undefined ? undefined : decodeURIComponent(ext),
    };
  }

  test('a non-ASCII name has an ASCII fallback and a filename* that decodes to the exact name', async () => {
    const name = 'résumé 😀.pdf';
    const header = await dispositionFor(name);
    assert.match(header, /^[\x20-\x7e]+$/, `header must be ASCII: ${header}`);
    const { filename, extended } = params(header);
    assert.equal(extended, name);
    assert.ok(filename, `no ASCII fallback in ${header}`);
    assert.match(filename, /^[\x20-\x7e]+$/);
    assert.ok(filename.endsWith('.pdf'), filename);
  });

  test('names from other scripts round-trip through filename*', async () => {
    for (const name of ['отчёт 2026.txt', '報告書.docx', 'naïve café.txt']) {
      const header = await dispositionFor(name);
      assert.match(header, /^[\x20-\x7e]+$/, `header must be ASCII: ${header}`);
      assert.equal(params(header).extended, name);
    }
  });

  test('a double quote in the name is escaped', async () => {
    const name = 'say "hi" now.txt';
    const header = await dispositionFor(name);
    const { filename, extended } = params(header);
    // Either a quoted-pair in filename, or %22 in filename*: never a bare quote that ends the string early.
    assert.equal(extended ?? filename, name);
    if (extended === undefined) assert.ok(header.includes('\\"hi\\"'), header);
  });

  test('a semicolon, a percent sequence and other separators survive', async () => {
    for (const name of ['a;b.txt', '100%25 sure.txt', "it's (final), ok.txt"]) {
      const header = await dispositionFor(name);
      assert.match(header, /^[\x20-\x7e]+$/, `header must be ASCII: ${header}`);
      const { filename, extended } = params(header);
      assert.equal(extended ?? filename, name, header);
    }
  });
});
