import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, mkdtemp, open, readdir, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { BlobStorageError, canRecycle, type StagedBlob } from '../../src/blob/blob-store.js';
import { LocalBlobStore } from '../../src/blob/local-blob-store.js';
import { PendingHooks } from '../../src/db/group-commit.js';
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
    missingKey: 'f'.repeat(64),
    cleanup: () => rm(root, { recursive: true, force: true }),
    // A temp file half written, as a server killed mid-upload leaves it.
    startUnfinishedUpload: () => writeFile(path.join(store.tempDir, `${randomBytes(16).toString('hex')}.part`), randomBytes(100), { mode: 0o600 }),
  };
});

/** Every file under `dir`, relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
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

  test('publishes to blobs/aa/bb/<sha256> under the key <sha256>, with no .part left and the mode kept', async () => {
    const bytes = randomBytes(1000);
    const sha256 = sha256Of(bytes);
    const staged = await store.stage(chunked(bytes), { maxBytes: 1000 });
    assert.equal(store.keyFor(staged), sha256);
    assert.equal(await store.publish(staged), sha256);
    const relative = path.join(sha256.slice(0, 2), sha256.slice(2, 4), sha256);
    assert.deepEqual(await listFiles(store.blobDir), [relative]);
    assert.equal(store.blobPath(sha256), path.join(root, 'blobs', relative));
    assert.deepEqual(await readdir(store.tempDir), []);
    assert.equal((await stat(store.blobPath(sha256))).mode & 0o777, 0o600);
  });

  test('a duplicate publish leaves one file under the one key', async () => {
    const bytes = randomBytes(1000);
    for (let i = 0; i < 3; i++) assert.equal(await store.publish(await store.stage(chunked(bytes), { maxBytes: 1000 })), sha256Of(bytes));
    assert.equal((await listFiles(store.blobDir)).length, 1);
    assert.deepEqual(await listFiles(store.tempDir), []);
  });

  test("publishing hands the transaction's COMMIT the fsync of the blob's folder and its parents up to blobs/, also for bytes already there", async () => {
    const bytes = randomBytes(1000);
    const sha256 = sha256Of(bytes);
    const folders = [path.join(store.blobDir, sha256.slice(0, 2), sha256.slice(2, 4)), path.join(store.blobDir, sha256.slice(0, 2)), store.blobDir];
    // The first publish's transaction failed: its hooks never ran, its bytes stay in place.
    const failed = new PendingHooks();
    await store.publish(await store.stage(chunked(bytes), { maxBytes: 1000 }), failed);
    assert.deepEqual([...failed.tasks.keys()].sort(), [...folders].sort(), 'a new folder: every folder up to blobs/');
    // The next transaction naming the digest finds the bytes there: it must make their
    // entries durable itself before its COMMIT.
    const next = new PendingHooks();
    assert.equal(await store.publish(await store.stage(chunked(bytes), { maxBytes: 1000 }), next), sha256);
    assert.deepEqual([...next.tasks.keys()].sort(), [...folders].sort(), 'bytes already there: the same fsyncs');
    await next.run();
    assert.deepEqual(await listFiles(store.tempDir), []);
    // Another digest into the same folders, made by the failed publish: their fsyncs too.
    const other = Buffer.concat([bytes, Buffer.from('x')]);
    const otherHooks = new PendingHooks();
    const otherSha = await store.publish(await store.stage(chunked(other), { maxBytes: 2000 }), otherHooks);
    assert.deepEqual(
      [...otherHooks.tasks.keys()].sort(),
      [path.dirname(store.blobPath(otherSha)), path.dirname(path.dirname(store.blobPath(otherSha))), store.blobDir].sort(),
    );
  });

  test("a folder whose entry an fsync of its parent made durable is not fsynced again; one removed behind the store's back is made again", async () => {
    const bytes = randomBytes(1000);
    const sha256 = sha256Of(bytes);
    const leaf = path.join(store.blobDir, sha256.slice(0, 2), sha256.slice(2, 4));
    const all = [leaf, path.dirname(leaf), store.blobDir].sort();
    const publish = async () => {
      const hooks = new PendingHooks();
      assert.equal(await store.publish(await store.stage(chunked(bytes), { maxBytes: 1000 }), hooks), sha256);
      await hooks.run();
      return [...hooks.tasks.keys()].sort();
    };
    assert.deepEqual(await publish(), all, 'new folders: every folder up to blobs/');
    // The parents' fsyncs succeeded after the folders existed: their entries are durable.
    assert.deepEqual(await publish(), [leaf], "known durable: only the blob's own folder");
    await rm(leaf, { recursive: true });
    assert.deepEqual(await publish(), all, 'a folder gone is made again, and every fsync asked again');
    assert.deepEqual(await listFiles(store.blobDir), [path.relative(store.blobDir, store.blobPath(sha256))]);
    assert.deepEqual(await listFiles(store.tempDir), []);
  });

  test('never builds a path from something that is not a digest or a handle', async () => {
    assert.throws(() => store.blobPath('../../etc/passwd'), /not a sha256/);
    assert.throws(() => store.blobPath('A'.repeat(64)), /not a sha256/);
    await assert.rejects(store.discard({ sha256: 'a'.repeat(64), size: 0, handle: '../secret' }), /not a staged handle/);
    await assert.rejects(store.publish({ sha256: 'a'.repeat(64), size: 0, handle: '../../x.part' }), /not a staged handle/);
    await assert.rejects(store.deleteStaged('../filehaven.db'), /not a staged handle/);
  });

  test('listings leave alone whatever is not shaped like a blob or a temp file', async () => {
    const bytes = randomBytes(100);
    const sha256 = sha256Of(bytes);
    await store.publish(await store.stage(chunked(bytes), { maxBytes: 100 }));
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
    for await (const blob of store.listBlobs()) blobs.push(blob.key);
    assert.deepEqual(blobs, [sha256]);
    const staged = [];
    for await (const entry of store.listStaged()) staged.push(entry.handle);
    assert.deepEqual(staged, []);
  });

  /** Replaces a FileHandle method for one test (FileHandle is not exported as a class). */
  async function patchFileHandle<K extends 'sync' | 'write' | 'writev'>(
    method: K,
    replacement: (original: FileHandle[K]) => FileHandle[K],
  ): Promise<() => void> {
    const probe = await open(path.join(root, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const original = proto[method];
    proto[method] = replacement(original);
    return () => {
      proto[method] = original;
    };
  }

  test('fsyncs the staged file itself before stage resolves, and closes it', async () => {
    let synced = 0;
    const restore = await patchFileHandle(
      'sync',
      (original) =>
        async function (this: FileHandle) {
          await original.call(this);
          synced += 1;
        },
    );
    let staged: StagedBlob;
    try {
      staged = await store.stage(chunked(randomBytes(5000)), { maxBytes: 5000 });
    } finally {
      restore();
    }
    assert.equal(synced, 1);
    // No descriptor of this process still points at the staged file (Linux /proc).
    const fds = await readdir('/proc/self/fd').catch(() => [] as string[]);
    const targets = await Promise.all(fds.map((fd) => readlink(path.join('/proc/self/fd', fd)).catch(() => '')));
    assert.ok(!targets.includes(path.join(store.tempDir, staged.handle)), 'the staged file is still open');
  });

  test("a temp folder that cannot be written is BlobStorageError, not the source's fault", async () => {
    await rm(store.tempDir, { recursive: true });
    await writeFile(store.tempDir, 'not a folder');
    await assert.rejects(store.stage(chunked(randomBytes(1000)), { maxBytes: 1000 }), (error: unknown) => {
      assert.ok(error instanceof BlobStorageError, String(error));
      assert.equal(error.operation, 'open');
      assert.equal((error.cause as NodeJS.ErrnoException).code, 'ENOTDIR');
      return true;
    });
  });

  test('a disk that takes fewer bytes than asked gets the rest in later writes, in order', async () => {
    // At most 777 bytes per writev, so every batch is cut, also inside a chunk.
    const restore = await patchFileHandle(
      'writev',
      (original) =>
        async function (this: FileHandle, buffers: NodeJS.ArrayBufferView[], position?: number) {
          const first = buffers[0] as Buffer;
          return original.call(this, [first.subarray(0, Math.min(777, first.length))], position);
        } as unknown as FileHandle['writev'],
    );
    const bytes = randomBytes(300_000);
    let staged: StagedBlob;
    try {
      staged = await store.stage(chunked(bytes), { maxBytes: bytes.length });
    } finally {
      restore();
    }
    assert.equal(staged.size, bytes.length);
    assert.equal(staged.sha256, sha256Of(bytes));
    const key = await store.publish(staged);
    const chunks: Buffer[] = [];
    for await (const chunk of await store.read(key)) chunks.push(chunk as Buffer);
    assert.ok(Buffer.concat(chunks).equals(bytes), 'the stored bytes are the bytes sent');
  });

  test('a failing write (disk full) is BlobStorageError and leaves nothing', async () => {
    // The staging sink writes its batches with writev.
    const restore = await patchFileHandle(
      'writev',
      () =>
        (async () => {
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }) as unknown as FileHandle['writev'],
    );
    try {
      await assert.rejects(store.stage(chunked(randomBytes(5000)), { maxBytes: 5000 }), (error: unknown) => {
        assert.ok(error instanceof BlobStorageError, String(error));
        assert.equal(error.operation, 'write');
        return true;
      });
    } finally {
      restore();
    }
    assert.deepEqual(await readdir(store.tempDir), []);
  });

  test('a download stream reads into the chunks its reader hands back, and ignores foreign ones', async () => {
    const MiB = 1024 * 1024;
    const bytes = randomBytes(7 * MiB + 12_345);
    const key = await store.publish(await store.stage(chunked(bytes), { maxBytes: bytes.length }));
    for (const range of [undefined, { start: 3, end: bytes.length - 2 }, { start: MiB, end: 2 * MiB }]) {
      const stream = await store.read(key, range);
      assert.ok(canRecycle(stream), 'a file stream takes its chunks back');
      const memories = new Set<ArrayBufferLike>();
      const hash = createHash('sha256');
      let count = 0;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        hash.update(chunk);
        memories.add(chunk.buffer);
        count++;
        // Handed back once consumed, as sendFile does when a write completes; a foreign
        // buffer handed back is ignored, not read into.
        stream.recycle(chunk);
        stream.recycle(Buffer.alloc(chunk.length));
      }
      const wanted = range ? bytes.subarray(range.start, range.end + 1) : bytes;
      assert.equal(hash.digest('hex'), sha256Of(wanted), `the bytes of ${JSON.stringify(range)}`);
      assert.ok(count >= Math.floor(wanted.length / MiB), 'read a chunk at a time');
      // One read ahead and one being read at most: the same few buffers from start to end,
      // for each size the reads grow through (64 KiB to 1 MiB for a fast reader: five).
      const sizes = new Map<number, number>();
      for (const memory of memories) sizes.set(memory.byteLength, (sizes.get(memory.byteLength) ?? 0) + 1);
      assert.ok(sizes.size <= 5, `${sizes.size} sizes`);
      for (const [size, buffers] of sizes) assert.ok(buffers <= 3, `${buffers} buffers of ${size} bytes for ${count} chunks`);
    }
  });

  test('a download stream sizes its reads to its reader: a fast one grows them to 1 MiB, a slow one keeps them at 64 KiB', async () => {
    const KiB = 1024;
    const bytes = randomBytes(6 * 1024 * KiB);
    const key = await store.publish(await store.stage(chunked(bytes), { maxBytes: bytes.length }));
    const fast = await store.read(key);
    const fastSizes: number[] = [];
    for await (const chunk of fast as AsyncIterable<Buffer>) fastSizes.push(chunk.length);
    assert.equal(fastSizes[0], 64 * KiB, 'every download starts small');
    assert.equal(Math.max(...fastSizes), 1024 * KiB, `a reader that takes every chunk at once gets 1 MiB reads: ${fastSizes}`);
    // A reader of about 1 MB/s (64 KiB every 60 ms or slower, however busy the machine):
    // its reads never grow, so it never holds more than three 64 KiB buffers.
    const slow = await store.read(key, { start: 0, end: 1024 * KiB - 1 });
    const slowSizes: number[] = [];
    const memories = new Set<ArrayBufferLike>();
    for await (const chunk of slow as AsyncIterable<Buffer>) {
      slowSizes.push(chunk.length);
      memories.add(chunk.buffer);
      await new Promise((resolve) => setTimeout(resolve, 60));
      (slow as typeof slow & { recycle(chunk: Buffer): void }).recycle(chunk);
    }
    assert.deepEqual(new Set(slowSizes), new Set([64 * KiB]), `a slow reader's reads stay at 64 KiB: ${slowSizes}`);
    assert.ok(memories.size <= 3, `${memories.size} buffers`);
  });

  test('a download stream whose reader keeps its chunks leaves them whole', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 5);
    const key = await store.publish(await store.stage(chunked(bytes), { maxBytes: bytes.length }));
    const chunks: Buffer[] = [];
    for await (const chunk of await store.read(key)) chunks.push(chunk as Buffer);
    assert.ok(Buffer.concat(chunks).equals(bytes));
    assert.equal(new Set(chunks.map((chunk) => chunk.buffer)).size, chunks.length, 'every kept chunk is its own memory');
  });
});

test('check() creates nothing: a data folder whose blobs are gone (an unmounted volume) is not ready until init', async () => {
  const { root, store } = await makeLocal();
  try {
    await store.check();
    await rm(store.blobDir, { recursive: true });
    await assert.rejects(store.check(), /the data folder cannot hold blobs/);
    await assert.rejects(stat(store.blobDir), { code: 'ENOENT' });
    await store.init();
    await store.check();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
