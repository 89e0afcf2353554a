import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { TEST_BACKEND } from '../helpers/backend.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Uploads, copies and deletes of the same content race each other; afterwards every live
// file must still have its bytes, and bytes with no live file must be gone
// (src/services/blob-lifecycle.ts).

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

test('racing uploads, copies and deletes of one digest never lose live bytes', async () => {
  await race([t]);
});

// Two servers of one site (issue 10): a delete on one races uploads of the same digest
// landing on the other. In one process the two servers would share one SQLite thread
// (limits-shared.test.ts says why): PostgreSQL + S3, the fleet's setup, only.
test('two servers: uploads landing on one while the other deletes and copies the same digest never lose live bytes', {
  skip: TEST_BACKEND === 'sqlite-local' && 'two servers in one process cannot share one SQLite file: run with FILEHAVEN_TEST_BACKEND=postgres-s3',
}, async () => {
  const other = await t.sibling();
  try {
    await race([t, other]);
  } finally {
    await other.close();
  }
});

/** Rounds of racing work of one account, spread over `servers` (request i on server i mod n). */
async function race(servers: TestServer[]): Promise<void> {
  const on = (i: number) => servers[i % servers.length]!;
  const { key } = await t.account();
  const content = 'the same bytes, over and over\n'.repeat(1000);
  const sha256 = createHash('sha256').update(content).digest('hex');

  for (let round = 0; round < 5; round++) {
    const first = await t.upload(key, `seed-${round}.txt`, content);
    assert.equal(first.response.status, 201, first.body);
    // Delete the seed while others upload and copy the same digest.
    const work: Promise<unknown>[] = [
      on(0).fetch(`/files/${first.id}`, { method: 'DELETE', headers: { Authorization: key } }),
      ...Array.from({ length: 6 }, (_, i) => on(i + 1).upload(key, `racer-${round}-${i}.txt`, content)),
      on(1).fetch(`/files/copy/${first.id}`, { method: 'POST', headers: { Authorization: key } }),
    ];
    const results = await Promise.all(work);
    const uploads = results.slice(1, 7) as Awaited<ReturnType<TestServer['upload']>>[];
    for (const u of uploads) assert.equal(u.response.status, 201, u.body);

    // Every live file with this digest downloads intact.
    for (const u of uploads) {
      const response = await fetch(`${u.downloadLink}?download=1`);
      assert.equal(response.status, 200);
      assert.equal(
        createHash('sha256')
          .update(Buffer.from(await response.arrayBuffer()))
          .digest('hex'),
        sha256,
      );
    }
    const blobKey = await t.storage.keyOf(sha256);
    assert.ok(blobKey !== null && (await t.storage.hasBytes(blobKey)), 'blob must exist while live files point at it');

    // Delete them all, concurrently: the blob goes once the last live row is gone.
    const live = [...uploads.map((u) => u.id)];
    const copy = results[7] as Response;
    if (copy.status === 201) live.push(/<entry>\s*<id>([^<]+)</.exec(await copy.text())![1]!);
    const deletes = await Promise.all(live.map((id, i) => on(i).fetch(`/files/${id}`, { method: 'DELETE', headers: { Authorization: key } })));
    for (const d of deletes) assert.equal(d.status, 200);
    assert.equal(await t.storage.keyOf(sha256), null, 'the blob row must be removed with its last live file');
    assert.equal(await t.storage.hasBytes(blobKey), false, 'the bytes must be removed with the last live file');
    assert.deepEqual(await t.storage.leftovers(), [], 'no other copy of the bytes is left');
  }
}
