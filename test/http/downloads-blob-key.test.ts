import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { TEST_BACKEND } from '../helpers/backend.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Downloads remember a blob's key (downloads/file-bytes.ts). The same contents deleted and
 * stored again get a new blob (on S3 under a new key): a download of the new file must not
 * read the remembered key of the removed one.
 */
let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t?.close());

test(`contents deleted and stored again are downloaded from their new blob (${TEST_BACKEND})`, async () => {
  const user = await t.account();
  const content = randomBytes(64 * 1024);
  const first = await t.upload(user.key, 'first.bin', content);
  assert.equal(first.response.status, 201, first.body);
  const before = await t.fetch(`${new URL(first.downloadLink).pathname}?download=1`);
  assert.equal(before.status, 200);
  assert.deepEqual(Buffer.from(await before.arrayBuffer()), content);

  // The only file of these contents goes, and its blob with it.
  const removed = await t.fetch(`/files/${first.id}`, { method: 'DELETE', headers: { Authorization: user.key } });
  assert.equal(removed.status, 200, await removed.text());
  const sha256 = (await t.server.services.store.files.byId(first.id))!.sha256;
  assert.equal(await t.server.services.store.blobs.keyOf(sha256), null, 'the blob went with its last file');

  const second = await t.upload(user.key, 'second.bin', content);
  assert.equal(second.response.status, 201, second.body);
  const after = await t.fetch(`${new URL(second.downloadLink).pathname}?download=1`);
  assert.equal(after.status, 200);
  assert.deepEqual(Buffer.from(await after.arrayBuffer()), content);
});
