import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { filePart, multipartBody } from '../helpers/raw-upload.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// An upload refused before its body is read (its key, its declared size, the upload
// volume) is answered at once and the connection closes. A client that sends its whole
// body before it reads the answer, as most HTTP libraries do, must still get that answer:
// the server reads and drops the rest of the body (lingering close) instead of closing
// under it, which resets the connection and loses the answer.

const MiB = 1024 * 1024;
const BODY = 8 * MiB;

let t: TestServer;
let ada: TestAccount;
before(async () => {
  t = await startTestServer({ maxFileSize: 4 * MiB, uploadVolumeFree: 5 * MiB });
  ada = await t.account();
});
after(() => t.close());

/**
 * Sends a whole upload over a raw socket, in 64 KiB writes, waiting for each to be taken
 * (as a client that sends first and reads later), then reads the answer to its end.
 */
function sendAllThenRead(headers: Record<string, string>, body: Buffer): Promise<{ head: string; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1');
    const received: Buffer[] = [];
    let failed: string | undefined;
    socket.on('error', (error: NodeJS.ErrnoException) => (failed ??= error.code ?? error.message));
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('utf8');
      const cut = text.indexOf('\r\n\r\n');
      if (cut < 0) resolve({ error: failed ?? 'closed without an answer' });
      else resolve({ head: text.slice(0, cut), body: text.slice(cut + 4) });
    });
    socket.once('connect', async () => {
      const head = [
        `POST /files HTTP/1.1`,
        `Host: 127.0.0.1`,
        `Connection: close`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        `Content-Length: ${body.length}`,
        '',
        '',
      ].join('\r\n');
      socket.write(head);
      // The answer is not looked at until every byte is sent.
      socket.pause();
      for (let at = 0; at < body.length && !failed; at += 64 * 1024) {
        if (!socket.write(body.subarray(at, at + 64 * 1024))) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
      }
      socket.resume();
    });
  });
}

function upload(key: string | null, size: number) {
  const boundary = `----linger${randomBytes(6).toString('hex')}`;
  const body = multipartBody(boundary, [filePart('upload', 'big.bin', randomBytes(size))]);
  return sendAllThenRead({ 'Content-Type': `multipart/form-data; boundary=${boundary}`, ...(key ? { Authorization: key } : {}) }, body);
}

function expectAnswer(outcome: Awaited<ReturnType<typeof upload>>, status: number, code: string): void {
  assert.ok('head' in outcome, `the answer was lost: ${'error' in outcome ? outcome.error : ''}`);
  assert.match(outcome.head, new RegExp(`^HTTP/1\\.1 ${status} `));
  assert.match(outcome.head, /\r\nconnection: close/i);
  assert.match(outcome.body, new RegExp(`<title>${code}</title>`));
}

describe('an upload refused before its body is read', () => {
  test('a wrong key: the client sending all of it first still reads 401 errorPermissionDenied', async () => {
    expectAnswer(await upload('not-a-key', BODY), 401, 'errorPermissionDenied');
  });

  test('a declared size past the limit: 413 errorFileSize', async () => {
    expectAnswer(await upload(ada.key, BODY), 413, 'errorFileSize');
  });

  test('no upload volume left: 429 errorUploadLimit', async () => {
    const bob = await t.account();
    const first = await upload(bob.key, 3 * MiB);
    assert.ok('head' in first && /^HTTP\/1\.1 201 /.test(first.head), JSON.stringify(first).slice(0, 300));
    expectAnswer(await upload(bob.key, 3 * MiB), 429, 'errorUploadLimit');
  });

  test('the server goes on serving, and the refused bodies left nothing behind', async () => {
    const response = await t.fetch('/account', { headers: { Authorization: ada.key } });
    assert.equal(response.status, 200);
    assert.deepEqual(await t.storage.leftovers(), []);
  });
});
