import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exchange } from '../helpers/raw-exchange.js';
import { listFiles } from '../helpers/raw-upload.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

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
  for (const path of ['/healthz', '/apikeys', '/account', '/folders', '/files', '/file', '/signin', '/nonexistent', '/my/files', '/my/files/move', '/ABCDEFGHIJ/delete/00']) {
    it(`a truncated multipart body to ${path} is answered and the server lives on`, async () => {
      const request = `POST ${path} HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${truncated.length}\r\nConnection: close\r\n\r\n${truncated}`;
      const answer = await exchange(t.url, request);
      assert.ok(answer.status >= 400 && answer.status < 500, `a 4xx, got ${answer.status}: ${answer.raw.slice(0, 200)}`);
      await alive();
    });
  }

  it('a truncated file part with a valid key leaves nothing in tmp/', async () => {
    const { key } = await t.account();
    const body = truncated.replace('name="f"', 'name="upload"');
    const request = `POST /files HTTP/1.1\r\nHost: ${host()}\r\nAuthorization: ${key}\r\nContent-Type: multipart/form-data; boundary=XB\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
    const answer = await exchange(t.url, request);
    assert.equal(answer.status, 400);
    assert.match(answer.body, /<title>errorUploadFaild<\/title>/);
    await alive();
    assert.deepEqual(await listFiles(`${t.dataDir}/tmp`), []);
  });
});
