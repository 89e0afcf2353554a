import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { LocalBlobStore } from '../../src/blob/local-blob-store.js';
import { blobStoreContract, chunked, sha256Of } from './blob-store.contract.js';

async function makeLocal(): Promise<{ root: string; store: LocalBlobStore }> {
  const root = await mkdtemp(path.join(tmpdir(), 'filehaven-blobs-'));
  const store = new LocalBlobStore(root);
  await store.init();
  return { root, store };
}

blobStoreContract('LocalBlobStore', async () => {
  const { root, store } = await makeLocal();
  return {
    store,
    stagingEntries: () => readdir(store.tempDir),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

/** Every file under `dir`, relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name))).sort();
}

describe('LocalBlobStore on disk', () => {
  let root: string;
  let store: LocalBlobStore;
  beforeEach(async () => {
    ({ root, store } = await makeLocal());
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('stages to tmp/<random>.part with mode 0600', async () => {
    const staged = await store.stage(chunked(randomBytes(1000)), { maxBytes: 1000 });
    assert.match(staged.handle, /^[0-9a-f]{32}\.part$/);
    assert.deepEqual(await readdir(store.tempDir), [staged.handle]);
    const info = await stat(path.join(store.tempDir, staged.handle));
    assert.equal(info.mode & 0o777, 0o600);
    assert.equal(info.size, 1000);
    await store.discard(staged);
  });

  test('commits to blobs/aa/bb/<sha256> with no .part left and the mode kept', async () => {
    const bytes = randomBytes(1000);
    const sha256 = sha256Of(bytes);
    const staged = await store.stage(chunked(bytes), { maxBytes: 1000 });
    await store.commit(staged);
    const relative = path.join(sha256.slice(0, 2), sha256.slice(2, 4), sha256);
    assert.deepEqual(await listFiles(store.blobDir), [relative]);
    assert.equal(store.blobPath(sha256), path.join(root, 'blobs', relative));
    assert.deepEqual(await readdir(store.tempDir), []);
    assert.equal((await stat(store.blobPath(sha256))).mode & 0o777, 0o600);
  });

  test('a duplicate commit leaves one file', async () => {
    const bytes = randomBytes(1000);
    for (let i = 0; i < 3; i++) await store.commit(await store.stage(chunked(bytes), { maxBytes: 1000 }));
    assert.equal((await listFiles(store.blobDir)).length, 1);
    assert.deepEqual(await listFiles(store.tempDir), []);
  });

  test('never builds a path from something that is not a digest or a handle', async () => {
    assert.throws(() => store.blobPath('../../etc/passwd'), /not a sha256/);
    assert.throws(() => store.blobPath('A'.repeat(64)), /not a sha256/);
    await assert.rejects(store.discard({ sha256: 'a'.repeat(64), size: 0, handle: '../secret' }), /not a staged handle/);
    await assert.rejects(store.commit({ sha256: 'a'.repeat(64), size: 0, handle: '../../x.part' }), /not a staged handle/);
    await assert.rejects(store.deleteStaged('../filehaven.db'), /not a staged handle/);
  });

  test('listings leave alone whatever is not shaped like a blob or a temp file', async () => {
    const bytes = randomBytes(100);
    const sha256 = sha256Of(bytes);
    await store.commit(await store.stage(chunked(bytes), { maxBytes: 100 }));
    const stray = 'e'.repeat(64);
    await mkdir(path.join(store.blobDir, 'zz', '00'), { recursive: true });
    await writeFile(path.join(store.blobDir, 'zz', '00', stray), 'x');
    // A digest in the wrong bucket is not at its address: not a blob.
    await mkdir(path.join(store.blobDir, 'ab', 'cd'), { recursive: true });
    await writeFile(path.join(store.blobDir, 'ab', 'cd', stray), 'x');
    await mkdir(path.join(store.blobDir, stray.slice(0, 2), stray.slice(2, 4), stray), { recursive: true });
    await writeFile(path.join(store.blobDir, 'README'), 'x');
    await writeFile(path.join(store.tempDir, 'notes.txt'), 'x');
    await writeFile(path.join(store.tempDir, `${'0'.repeat(32)}.part.bak`), 'x');
    const blobs = [];
    for await (const blob of store.listBlobs()) blobs.push(blob.sha256);
    assert.deepEqual(blobs, [sha256]);
    const staged = [];
    for await (const entry of store.listStaged()) staged.push(entry.handle);
    assert.deepEqual(staged, []);
  });
});
