import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { directLink, sha256 } from '../helpers/downloads.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';
import { createUpload, OFFSET_STREAM, patchUpload, TUS, uploadMetadata } from '../helpers/tus.js';

// Issue 23, defect 2: tus 1.0 answers every successful PATCH with 204 No Content, and
// strict clients (go-tus) take any other status for a failure, the last PATCH's too. The
// finishing PATCH names the file in headers; the `File upload result` feed comes only to
// a client that asks (Accept: application/atom+xml, or Prefer: return=representation).
// Issue 23, defect 3: every answer says the largest PATCH to send (Filehaven-Max-Chunk-Size).

const KiB = 1024;
const MiB = 1024 * KiB;
const CHUNK_SIZE = 3 * MiB;
/** A hang guard, not a speed check. */
const GUARD = { timeout: 120_000 };

let t: TestServer;
let ada: TestAccount;
before(async () => {
  t = await startTestServer({ uploadChunkSize: CHUNK_SIZE });
  ada = await t.account({ premiumDays: 30, trafficBytes: 1024 * MiB });
});
after(() => t.close());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request as go-tus sends it (net/http: no Accept, no Prefer; only the tus headers,
 * the key, and Content-Length), over a connection of its own.
 */
function goTusRequest(url: string, method: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        agent: false,
        headers: { 'User-Agent': 'Go-http-client/1.1', ...TUS, Authorization: ada.key, 'Content-Length': String(body?.length ?? 0), ...headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** go-tus's rule for a status: anything but the one the protocol names is an error (it returns ErrUnexpectedResponse). */
function expectStatus(what: string, answer: Answer, expected: number): void {
  if (answer.status !== expected) assert.fail(`${what}: tus 1.0 answers ${expected}, got ${answer.status} (a strict client fails here)\n${answer.body}`);
}

/** go-tus's upload loop: create, then PATCH chunk after chunk from the offset each answer names. */
async function strictUpload(name: string, content: Buffer, chunk: number): Promise<{ url: string; last: Answer }> {
  const created = await goTusRequest(`${t.url}/uploads`, 'POST', {
    'Upload-Length': String(content.length),
    'Upload-Metadata': uploadMetadata({ filename: name }),
  });
  expectStatus('creation POST', created, 201);
  const url = new URL(String(created.headers.location), t.url).href;
  let offset = 0;
  let last: Answer | null = null;
  while (offset < content.length) {
    const body = content.subarray(offset, offset + chunk);
    last = await goTusRequest(url, 'PATCH', { 'Upload-Offset': String(offset), 'Content-Type': OFFSET_STREAM }, body);
    expectStatus(`PATCH at ${offset} of ${content.length}`, last, 204);
    assert.equal(last.body, '', '204 No Content has no body');
    const next = Number(last.headers['upload-offset']);
    assert.equal(next, offset + body.length, 'Upload-Offset is where the next PATCH starts');
    offset = next;
  }
  return { url, last: last! };
}

async function downloaded(fileId: string): Promise<Buffer> {
  const response = await fetch(await directLink(t, ada.key, fileId), { headers: { Authorization: ada.key } });
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

describe('a strict tus 1.0 client (as go-tus)', () => {
  test('201 to the creation, 204 to every PATCH including the last, which names the file; HEAD names it too; the download is byte-exact', GUARD, async () => {
    const content = randomBytes(5 * MiB + 321);
    const { url, last } = await strictUpload('strict.bin', content, 2 * MiB);
    const fileId = String(last.headers['filehaven-file-id']);
    assert.match(fileId, /^[A-Z0-9]{10}$/);
    assert.equal(last.headers['filehaven-download-link'], `${t.server.webUrl}/${fileId}/strict.bin`);
    assert.match(String(last.headers['filehaven-delete-link']), new RegExp(`/${fileId}/delete/[0-9a-f]{32}$`));
    assert.equal(last.headers['cache-control'], 'no-store', 'the delete link is a secret');

    const head = await goTusRequest(url, 'HEAD', {});
    expectStatus('HEAD of the finished upload', head, 200);
    assert.equal(head.headers['upload-offset'], String(content.length));
    assert.equal(head.headers['upload-length'], String(content.length));
    assert.equal(head.headers['filehaven-file-id'], fileId);
    assert.equal(sha256(await downloaded(fileId)), sha256(content));
  });

  test(
    'a PATCH again to an upload that already became a file (its answer was lost) is 204 too, and names the file without its delete link',
    GUARD,
    async () => {
      const content = randomBytes(300 * KiB);
      const { url, last } = await strictUpload('again.bin', content, 200 * KiB);
      const again = await goTusRequest(url, 'PATCH', { 'Upload-Offset': String(content.length), 'Content-Type': OFFSET_STREAM });
      expectStatus('PATCH of a finished upload', again, 204);
      assert.equal(again.body, '');
      assert.equal(again.headers['upload-offset'], String(content.length));
      assert.equal(again.headers['filehaven-file-id'], last.headers['filehaven-file-id']);
      assert.equal(again.headers['filehaven-delete-link'], undefined, 'the delete secret is shown once');
    },
  );
});

describe('the feed, for a client that asks', () => {
  /** Creates an upload and sends all of it in one PATCH with `headers`. */
  async function finishWith(name: string, headers: Record<string, string>) {
    const content = randomBytes(100 * KiB);
    const created = await createUpload(t, ada.key, { length: content.length, metadata: { filename: name } });
    assert.equal(created.response.status, 201, created.body);
    const last = await patchUpload(t, ada.key, created.id, 0, content, headers);
    return { id: created.id, content, ...last };
  }

  test('Accept naming application/atom+xml, or Prefer: return=representation, gets 200 and the File upload result; a wildcard does not', GUARD, async () => {
    for (const accept of ['application/atom+xml', 'text/html, application/atom+xml;q=0.9, */*;q=0.1']) {
      const { response, body } = await finishWith('accept.bin', { Accept: accept });
      assert.equal(response.status, 200, `${accept}: ${body}`);
      const fileId = response.headers.get('filehaven-file-id')!;
      assert.match(body, /<title>File upload result<\/title>/);
      assert.match(body, new RegExp(`<id>${fileId}</id>`));
      assert.match(body, /title="delete_link"/);
      assert.match(response.headers.get('content-type') ?? '', /^application\/atom\+xml/);
      assert.equal(response.headers.get('upload-offset'), String(100 * KiB));
    }
    const preferred = await finishWith('prefer.bin', { Prefer: 'return=representation' });
    assert.equal(preferred.response.status, 200, preferred.body);
    assert.match(preferred.body, /<title>File upload result<\/title>/);
    assert.equal(preferred.response.headers.get('preference-applied'), 'return=representation');

    const plain: Record<string, string>[] = [{ Accept: '*/*' }, { Accept: 'application/atom+xml;q=0' }, { Prefer: 'return=minimal' }];
    for (const headers of plain) {
      const { response, body } = await finishWith('plain.bin', headers);
      assert.equal(response.status, 204, `${JSON.stringify(headers)}: ${body}`);
      assert.equal(body, '');
      assert.match(response.headers.get('filehaven-file-id') ?? '', /^[A-Z0-9]{10}$/);
    }
  });

  test('a PATCH again to a finished upload, asking for the feed, gets it without the delete link', GUARD, async () => {
    const { id, content, response } = await finishWith('again feed.bin', {});
    assert.equal(response.status, 204);
    const again = await patchUpload(t, ada.key, id, content.length, Buffer.alloc(0), { Accept: 'application/atom+xml' });
    assert.equal(again.response.status, 200, again.body);
    assert.match(again.body, new RegExp(`<id>${response.headers.get('filehaven-file-id')}</id>`));
    assert.doesNotMatch(again.body, /delete_link/);
  });

  test('a creation that carries the whole file still answers 201 with the feed', GUARD, async () => {
    const content = randomBytes(50 * KiB);
    const done = await createUpload(t, ada.key, { length: content.length, metadata: { filename: 'one go.bin' }, body: content });
    assert.equal(done.response.status, 201, done.body);
    assert.match(done.body, /<title>File upload result<\/title>/);
  });
});

describe('Filehaven-Max-Chunk-Size', () => {
  test('OPTIONS, the creation and HEAD say the largest PATCH to send (--upload-chunk-size), and browsers may read it', GUARD, async () => {
    const origin = { Origin: 'https://elsewhere.example' };
    const options = await t.fetch('/uploads', { method: 'OPTIONS', headers: origin });
    assert.equal(options.status, 204);
    assert.equal(options.headers.get('filehaven-max-chunk-size'), String(CHUNK_SIZE));
    const created = await createUpload(t, ada.key, { length: 10, metadata: { filename: 'ten.bin' }, headers: origin });
    assert.equal(created.response.status, 201, created.body);
    assert.equal(created.response.headers.get('filehaven-max-chunk-size'), String(CHUNK_SIZE));
    const exposed = (created.response.headers.get('access-control-expose-headers') ?? '').split(',').map((name) => name.trim().toLowerCase());
    assert.ok(exposed.includes('filehaven-max-chunk-size'), `exposed to a page's script: ${exposed.join(', ')}`);
    const head = await t.fetch(`/uploads/${created.id}`, { method: 'HEAD', headers: { ...TUS, Authorization: ada.key } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('filehaven-max-chunk-size'), String(CHUNK_SIZE));
  });
});
