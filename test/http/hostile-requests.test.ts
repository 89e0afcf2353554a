import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Exchange, exchange } from '../helpers/raw-exchange.js';
import { eventually } from '../helpers/raw-upload.js';
import { atomError, startTestServer, type TestServer } from '../helpers/server.js';
import { parseAtom } from '../helpers/xml.js';

/**
 * Requests an attacker sends without a key: each must get an answer (or a closed
 * connection), never take the process down (issue 7).
 */
describe('hostile requests', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ apiRatePerIp: 0, apiRatePerKey: 0 });
  });
  after(() => t.close());

  const host = () => new URL(t.url).host;
  const alive = async () => assert.equal((await t.fetch('/healthz')).status, 200, 'the server still answers');

  // A file part cut before its closing boundary: busboy reports it on the part's stream,
  // which crashed the process when nothing listened there.
  const truncated = '--XB\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nabcdef';
  for (const path of [
    '/healthz',
    '/apikeys',
    '/account',
    '/folders',
    '/files',
    '/file',
    '/signin',
    '/nonexistent',
    '/my/files',
    '/my/files/move',
    '/ABCDEFGHIJ/delete/00',
  ]) {
    it(`a truncated multipart body to ${path} is answered and the server lives on`, async () => {
      const request = `POST ${path} HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${truncated.length}\r\nConnection: close\r\n\r\n${truncated}`;
      const answer = await exchange(t.url, request);
      assert.ok(answer.status >= 400 && answer.status < 500, `a 4xx, got ${answer.status}: ${answer.raw.slice(0, 200)}`);
      await alive();
    });
  }

  // busboy's parser stalled for good on a part it skips (no form-data disposition) whose
  // header, more than 16 KiB of data and end came in one chunk (found by the fuzz tests).
  for (const path of ['/apikeys', '/healthz', '/files']) {
    it(`a 20 KB part busboy skips, sent in one piece to ${path}, is answered`, async () => {
      const { key } = await t.account();
      const body = `--a\r\nContent-Disposition: form-data; name="login"\r\n\r\nx\r\n--a\r\nX-Other: 1\r\n\r\n${'E'.repeat(20_000)}\r\n--a--\r\n`;
      const answer = await exchange(
        t.url,
        `POST ${path} HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: ${key}\r\nContent-Type: multipart/form-data; boundary=a\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        { timeoutMs: 10_000 },
      );
      assert.ok(
        answer.status >= 400 && answer.status < 500,
        `answered with a 4xx, got ${answer.status} after ${answer.closedByServer ? 'a close' : 'the timeout'}`,
      );
      await alive();
    });
  }

  // Node may have parsed a whole body while its tail still waits for the multipart parser;
  // a client that then resets or half-closes takes that tail along (found by the fuzz tests).
  for (const ending of ['reset', 'half-close'] as const) {
    it(`a whole upload whose client ${ending}s right after its last byte leaves no staged upload or unnamed blob`, async () => {
      const { key } = await t.account();
      const body = `--XB\r\nContent-Disposition: form-data; name="upload"; filename="big.bin"\r\n\r\n${'z'.repeat(150_000)}\r\n--XB--\r\n`;
      const net = await import('node:net');
      const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1');
      socket.on('error', () => {});
      await new Promise((resolve) => socket.once('connect', resolve));
      const request = `POST /files HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: ${key}\r\nContent-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      await new Promise<void>((resolve) => socket.write(request, () => resolve()));
      if (ending === 'reset') socket.resetAndDestroy();
      else socket.end();
      let left: string[] = [];
      for (let i = 0; i < 100; i++) {
        left = await t.storage.leftovers();
        if (left.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      socket.destroy();
      assert.deepEqual(left, [], 'nothing staged outlives the upload');
      await alive();
    });
  }

  it("bytes after a whole upload on the same connection do not take the upload's answer", async () => {
    const { key } = await t.account();
    const body = `--XB\r\nContent-Disposition: form-data; name="upload"; filename="kept.txt"\r\n\r\nkept\r\n--XB--\r\n`;
    const answer = await exchange(
      t.url,
      `POST /files HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: ${key}\r\nContent-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${body.length}\r\n\r\n${body}garbage\r\n\r\n`,
    );
    assert.equal(answer.status, 201, answer.raw);
    assert.match(answer.body, /<title>kept\.txt<\/title>/);
    assert.match(answer.body, /title="delete_link"/);
    assert.ok(answer.closedByServer, 'the connection closes after the answer');
  });

  it('a truncated file part with a valid key leaves no staged upload or unnamed blob', async () => {
    const { key } = await t.account();
    const body = truncated.replace('name="f"', 'name="upload"');
    const request = `POST /files HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: ${key}\r\nContent-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    const answer = await exchange(t.url, request);
    assert.equal(answer.status, 400);
    assert.match(answer.body, /<title>errorUploadFaild<\/title>/);
    await alive();
    assert.ok(await eventually(async () => (await t.storage.leftovers()).length === 0), `left behind: ${(await t.storage.leftovers()).join(', ')}`);
  });
});

/** An answer in the API's Atom error shape, with this status and code. */
function assertRawAtomError(answer: Exchange, status: number, code: string): void {
  const context = answer.raw.slice(0, 600);
  assert.equal(answer.status, status, context);
  assert.equal(answer.headers['content-type'], 'application/atom+xml; charset=utf-8', context);
  parseAtom(answer.body);
  assert.equal(atomError(answer.body)?.code, code, context);
}

/**
 * Refusals by Node's parser or Fastify itself go through the one error catalogue: API
 * clients always get the Atom error feed (API.md 3), never JSON or a bodiless answer.
 */
describe('framework-level refusals answer Atom', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ apiRatePerIp: 0, apiRatePerKey: 0 });
  });
  after(() => t.close());
  const host = () => new URL(t.url).host;

  const malformed: Array<[string, string]> = [
    ['a Content-Length that is not a number', 'POST /account HTTP/1.1\r\nHost: H\r\nContent-Length: abc\r\n\r\n'],
    ['a method the parser does not know', 'FOO /account HTTP/1.1\r\nHost: H\r\n\r\n'],
    ['Content-Length with Transfer-Encoding', 'POST /account HTTP/1.1\r\nHost: H\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    [
      'a chunk size that is not hex',
      'POST /folders HTTP/1.1\r\nHost: H\r\nTransfer-Encoding: chunked\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n',
    ],
    ['a header name with a space', 'GET /account HTTP/1.1\r\nHost: H\r\nBad Header: y\r\n\r\n'],
    ['HTTP/3.0 on the request line', 'GET /account HTTP/3.0\r\nHost: H\r\n\r\n'],
  ];
  for (const [what, request] of malformed) {
    it(`${what}: 400 errorBadRequest in Atom`, async () => {
      const answer = await exchange(t.url, request.replace('Host: H', `Host: ${host()}`));
      assertRawAtomError(answer, 400, 'errorBadRequest');
      assert.ok(answer.closedByServer, 'the connection is closed after a parse error');
    });
  }

  it('oversized headers: 431 errorBadRequest in Atom', async () => {
    const answer = await exchange(t.url, `GET /account HTTP/1.1\r\nHost: ${host()}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assertRawAtomError(answer, 431, 'errorBadRequest');
  });

  it("an HTTP/1.1 request without Host: 400 in Atom (not Node's empty answer)", async () => {
    const answer = await exchange(t.url, 'GET /account HTTP/1.1\r\nConnection: close\r\n\r\n');
    assertRawAtomError(answer, 400, 'errorBadRequest');
    assert.match(answer.body, /Missing Host header/);
  });

  for (const method of ['PROPFIND', 'TRACE', 'MKCOL', 'LOCK']) {
    it(`${method} on API paths with Accept: text/html answers Atom (405 on a known path, 404 on an unknown one)`, async () => {
      for (const [path, status, code] of [
        ['/account', 405, 'errorMethodNotAllowed'],
        ['/files/ABCDEFGHIJ', 405, 'errorMethodNotAllowed'],
        ['/files', 405, 'errorMethodNotAllowed'],
        ['/folders/X/Y/Z', 404, 'errorNotFound'],
      ] as const) {
        const answer = await exchange(t.url, `${method} ${path} HTTP/1.1\r\nHost: ${host()}\r\nAccept: text/html\r\nConnection: close\r\n\r\n`);
        assertRawAtomError(answer, status, code);
      }
    });
  }

  it('a request target that is not a path: 400 in Atom (GET * served the home page)', async () => {
    for (const target of ['*', 'account', 'files/ABCDEFGHIJ']) {
      const answer = await exchange(t.url, `GET ${target} HTTP/1.1\r\nHost: ${host()}\r\nConnection: close\r\n\r\n`);
      assertRawAtomError(answer, 400, 'errorBadRequest');
      // Node's parser refuses a target without a slash itself; `*` reaches the server's own check.
      if (target === '*') assert.match(answer.body, /Invalid request target/);
    }
  });

  it('an Expect header other than 100-continue: 417 in Atom', async () => {
    const answer = await exchange(t.url, `GET /account HTTP/1.1\r\nHost: ${host()}\r\nExpect: something\r\nConnection: close\r\n\r\n`);
    assertRawAtomError(answer, 417, 'errorBadRequest');
  });

  it('CONNECT: 405 errorMethodNotAllowed in Atom, connection closed', async () => {
    const answer = await exchange(t.url, `CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n`);
    assertRawAtomError(answer, 405, 'errorMethodNotAllowed');
    assert.ok(answer.closedByServer);
  });

  it('an API path written with a double slash is still an API path (Atom, not a page)', async () => {
    for (const target of ['//account', '//folders/X/Y/Z']) {
      const answer = await exchange(t.url, `PROPFIND ${target} HTTP/1.1\r\nHost: ${host()}\r\nAccept: text/html\r\nConnection: close\r\n\r\n`);
      assertRawAtomError(answer, 404, 'errorNotFound');
    }
  });

  it('PROPFIND on a web path with Accept: text/html still gets the page', async () => {
    const answer = await exchange(t.url, `PROPFIND /nothing-here HTTP/1.1\r\nHost: ${host()}\r\nAccept: text/html\r\nConnection: close\r\n\r\n`);
    assert.equal(answer.status, 404);
    assert.match(answer.headers['content-type'] ?? '', /^text\/html/);
  });

  it('a request that arrives on an open connection while the server shuts down is served, and closes the connection', async () => {
    const closing = await startTestServer();
    const { key } = await closing.account();
    // An upload in flight keeps close() waiting; a second request pipelined behind it on
    // the same connection is read only once the upload is done, so it arrives while closing.
    const net = await import('node:net');
    const socket = net.connect(Number(new URL(closing.url).port), '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    const replies: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => replies.push(chunk));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    const body = '--XB\r\nContent-Disposition: form-data; name="upload"; filename="a.txt"\r\n\r\nhello\r\n--XB--\r\n';
    socket.write(
      `POST /files HTTP/1.1\r\nHost: x\r\nAuthorization: ${key}\r\nContent-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closed = closing.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.write(`${body.slice(10)}GET /account HTTP/1.1\r\nHost: x\r\nAuthorization: ${key}\r\n\r\n`);
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 5000))]);
    socket.destroy();
    await closed;
    const text = Buffer.concat(replies).toString('utf8');
    assert.match(text, /^HTTP\/1\.1 201 /, 'the upload in flight finishes');
    const second = text.slice(text.indexOf('HTTP/1.1', 10));
    assert.match(second, /^HTTP\/1\.1 200 /, text);
    assert.match(second, /\r\nconnection: close\r\n/i, 'nothing more is sent on a draining connection');
    assert.match(second, /<title>Account Info<\/title>/);
  });
});
