import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { Upload } from '@tus/utils';
import type { BlobStore } from '../../src/blob/blob-store.js';
import type { ResumableStorage } from '../../src/blob/resumable-storage.js';
import { chunked, collect, readAll, sha256Of } from './blob-store.contract.js';

/** One resumable storage under test, beside the blob store its finished uploads become blobs of. */
export interface ResumableStorageHarness {
  storage: ResumableStorage;
  /** The blob store the storage stages finished uploads into. */
  blobs: BlobStore;
  /**
   * A second storage on the same place, as another server of the site opens it: an upload
   * one server began, the other resumes.
   */
  sibling(): Promise<ResumableStorage>;
  /**
   * What the storage holds of uploads besides the blobs `blobs.listBlobs` yields (tus's
   * records, upload files, unfinished multipart uploads), as names: a removed or forgotten
   * upload leaves nothing here.
   */
  uploadEntries(): Promise<string[]>;
  /** Removes everything the storage and the blob store wrote. */
  cleanup(): Promise<void>;
}

/** Makes a fresh, empty storage for one test. */
export type ResumableStorageFactory = () => Promise<ResumableStorageHarness>;

const newId = () => randomBytes(16).toString('hex');

/** Blob keys the blob store lists now. */
const blobKeys = async (blobs: BlobStore) => (await collect(blobs.listBlobs())).map((blob) => blob.key);

/**
 * The contract every ResumableStorage passes (tus-node-server's shared store tests, as
 * the blob store's contract does for BlobStore): uploads written in several requests, by
 * any server of the site, read back whole, become blobs without a copy, and leave nothing
 * behind when removed or forgotten. Call it from a `*.test.ts` per implementation;
 * `skip` gives the reason a backend is unavailable.
 */
export function resumableStorageContract(name: string, makeStorage: ResumableStorageFactory, options: { skip?: string | false } = {}): void {
  describe(`ResumableStorage contract: ${name}`, { skip: options.skip }, () => {
    let h: ResumableStorageHarness;
    beforeEach(async () => {
      h = await makeStorage();
    });
    afterEach(async () => {
      await h.cleanup();
    });

    /** A new upload of `size` bytes, created as @tus/server creates one. */
    const create = async (storage: ResumableStorage, size: number): Promise<string> => {
      const id = newId();
      await storage.dataStore.create(new Upload({ id, size, offset: 0, metadata: { filename: 'f.bin' } }));
      return id;
    };

    test('an upload written in several requests resumes at its offset and reads back whole', async () => {
      const bytes = randomBytes(300_000);
      const id = await create(h.storage, bytes.length);
      assert.equal((await h.storage.dataStore.getUpload(id)).offset, 0);
      assert.equal(await h.storage.dataStore.write(chunked(bytes.subarray(0, 100_000)), id, 0), 100_000);
      assert.equal((await h.storage.dataStore.getUpload(id)).offset, 100_000);
      assert.equal(await h.storage.dataStore.write(chunked(bytes.subarray(100_000)), id, 100_000), bytes.length);
      const upload = await h.storage.dataStore.getUpload(id);
      assert.equal(upload.offset, bytes.length);
      assert.equal(upload.size, bytes.length);
      // Idempotent: a finish retried after a crash completes it again without harm.
      await h.storage.complete(id, bytes.length);
      await h.storage.complete(id, bytes.length);
      assert.deepEqual(await readAll(await h.storage.readFinished(id, 0, bytes.length)), bytes);
      assert.deepEqual(await readAll(await h.storage.readFinished(id, 12_345, bytes.length)), bytes.subarray(12_345));
    });

    test('another server on the same storage resumes an upload one server began', async () => {
      const bytes = randomBytes(200_000);
      const id = await create(h.storage, bytes.length);
      await h.storage.dataStore.write(chunked(bytes.subarray(0, 70_000)), id, 0);
      const other = await h.sibling();
      assert.equal((await other.dataStore.getUpload(id)).offset, 70_000);
      assert.equal(await other.dataStore.write(chunked(bytes.subarray(70_000)), id, 70_000), bytes.length);
      await other.complete(id, bytes.length);
      assert.deepEqual(await readAll(await h.storage.readFinished(id, 0, bytes.length)), bytes);
    });

    test('what is stored of an unfinished upload is synced, and read back exactly where it can be', async () => {
      const bytes = randomBytes(120_000);
      const id = await create(h.storage, bytes.length);
      await h.storage.dataStore.write(chunked(bytes.subarray(0, 50_000)), id, 0);
      await h.storage.sync(id);
      // A digest catching up after a crash reads these bytes, or is told they cannot be read.
      const reader = await h.storage.readUnfinished(id, 1_000, 50_000);
      if (reader !== null) assert.deepEqual(await readAll(reader), bytes.subarray(1_000, 50_000));
    });

    test('checkpoints are a positive whole number of bytes apart, for any length', () => {
      for (const length of [1, 1024 * 1024, 5 * 1024 ** 3, 5 * 1024 ** 4]) {
        const step = h.storage.checkpointStep(length);
        assert.ok(Number.isSafeInteger(step) && step > 0, `${length}: ${step}`);
      }
    });

    test('a finished upload becomes a blob under its digest; forgetting it leaves the blob and nothing else', async () => {
      const bytes = randomBytes(150_000);
      const id = await create(h.storage, bytes.length);
      await h.storage.dataStore.write(chunked(bytes), id, 0);
      await h.storage.complete(id, bytes.length);
      const staged = await h.storage.stage(id, { sha256: sha256Of(bytes), size: bytes.length });
      assert.equal(staged.sha256, sha256Of(bytes));
      assert.equal(staged.size, bytes.length);
      const key = await h.blobs.publish(staged);
      // The key names this upload where the blob is the upload's own bytes (S3), else nothing.
      assert.ok([id, null].includes(h.storage.uploadIdOfKey(key)), `uploadIdOfKey(${key})`);
      await h.storage.forgetFinished(id);
      assert.deepEqual(await h.uploadEntries(), []);
      assert.deepEqual(await blobKeys(h.blobs), [key]);
      assert.deepEqual(await readAll(await h.blobs.read(key)), bytes);
      await assert.rejects(h.storage.dataStore.getUpload(id));
    });

    test('keys that are no upload name no upload', () => {
      for (const key of ['', 'f'.repeat(64), 'f'.repeat(32), `uploads/${'F'.repeat(32)}`, 'uploads/../x', `blobs/${'a'.repeat(32)}`]) {
        assert.equal(h.storage.uploadIdOfKey(key), null, key);
      }
    });

    test('remove takes an upload, finished or not, with its bytes; a missing one is fine', async () => {
      const bytes = randomBytes(80_000);
      const unfinished = await create(h.storage, bytes.length);
      await h.storage.dataStore.write(chunked(bytes.subarray(0, 30_000)), unfinished, 0);
      const finished = await create(h.storage, bytes.length);
      await h.storage.dataStore.write(chunked(bytes), finished, 0);
      await h.storage.complete(finished, bytes.length);
      for (const id of [unfinished, finished]) {
        await h.storage.remove(id);
        await assert.rejects(h.storage.dataStore.getUpload(id));
        await h.storage.remove(id);
      }
      await h.storage.remove(newId());
      assert.deepEqual(await h.uploadEntries(), []);
      assert.deepEqual(await blobKeys(h.blobs), []);
    });

    test('names that are not upload ids are refused, never turned into a path or an object name', async () => {
      for (const id of ['../../etc/passwd', '', 'A'.repeat(32), `${'a'.repeat(31)}/`, `${'a'.repeat(32)}.json`]) {
        await assert.rejects(async () => h.storage.stage(id, { sha256: 'a'.repeat(64), size: 1 }), /not an upload id/, id);
        await assert.rejects(async () => h.storage.remove(id), /not an upload id/, id);
        await assert.rejects(async () => h.storage.forgetFinished(id), /not an upload id/, id);
      }
    });
  });
}
