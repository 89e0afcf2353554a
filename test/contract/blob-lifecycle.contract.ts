import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { BlobStore } from '../../src/blob/blob-store.js';
import type { MetadataStore, Repositories } from '../../src/db/repositories/repositories.js';
import { FileStatus } from '../../src/domain/types.js';
import { abandonStagedBlob, admitStagedBlob, dropUnreferencedBlobRow, removeUnnamedBytes } from '../../src/services/blob-lifecycle.js';

/** A metadata store and a blob store together, fresh for one test. */
export interface StorageHarness {
  store: MetadataStore;
  blobs: BlobStore;
  /** Closes both and removes what they wrote. */
  cleanup(): Promise<void>;
}

export type StorageFactory = () => Promise<StorageHarness>;

/**
 * The blob protocol of services/blob-lifecycle.ts on one pairing of engines (STYLE.md: one
 * suite, every backend): each interleaving placed by hand, then the same steps run
 * concurrently. The invariant checked throughout: every live file's digest has a row, and
 * the key it names has bytes.
 */
export function blobLifecycleContract(name: string, makeStorage: StorageFactory): void {
  describe(`blob lifecycle: ${name}`, () => {
    let harness: StorageHarness;
    let store: MetadataStore;
    let blobs: BlobStore;
    let owner: number;
    let counter = 0;

    beforeEach(async () => {
      harness = await makeStorage();
      ({ store, blobs } = harness);
      owner = (
        await store.accounts.create({
          login: `ada${++counter}`,
          passwordHash: 'x',
          name: '',
          email: '',
          premiumStart: null,
          premiumEnd: null,
          trafficLeft: 0,
          isOperator: false,
          createdAt: 0,
        })
      ).id;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const fileRow = (sha256: string, size: number) => ({
      id: `FILE${String(++counter).padStart(6, '0')}`,
      ownerId: owner,
      folderId: null,
      name: 'a.txt',
      size,
      sha256,
      deleteHash: 'h',
      createdAt: 1,
    });

    /** Uploads `content` as a new file through admitStagedBlob, as FilesService does. */
    async function upload(content: string | Buffer): Promise<{ id: string; sha256: string }> {
      const staged = await blobs.stage(Readable.from([Buffer.from(content)]), { maxBytes: 1 << 24 });
      try {
        const { result, duplicate } = await store.transaction((repos) =>
          admitStagedBlob(repos, blobs, staged, 1, () => repos.files.create(fileRow(staged.sha256, staged.size))),
        );
        if (duplicate) await blobs.discard(staged);
        return { id: result.id, sha256: staged.sha256 };
      } catch (error) {
        await abandonStagedBlob(store, blobs, staged);
        throw error;
      }
    }

    /** The first step of a delete, as FilesService.markDeleted runs it: the key to remove, or null. */
    const markDeleted = (id: string, sha256: string) =>
      store.transaction(async (repos) => {
        await repos.locks.blob(sha256);
        assert.ok(await repos.files.setStatus(id, [FileStatus.Active, FileStatus.Blocked], FileStatus.Deleted, 2));
        return dropUnreferencedBlobRow(repos, sha256);
      });

    const keyOf = async (sha256: string) => {
      const key = await store.blobs.keyOf(sha256);
      assert.ok(key, `no blob row for ${sha256}`);
      return key;
    };

    /** Keys whose bytes are stored but no row names. */
    async function unnamedKeys(): Promise<string[]> {
      const keys: string[] = [];
      for await (const blob of blobs.listBlobs()) if (!(await store.blobs.namesKey(blob.key))) keys.push(blob.key);
      return keys;
    }

    /** Every live file's digest has a row naming a key with bytes. */
    async function assertLiveFilesHaveBytes(ids: string[]): Promise<void> {
      for (const id of ids) {
        const file = await store.files.byId(id);
        if (!file || file.status === FileStatus.Deleted) continue;
        const key = await keyOf(file.sha256);
        assert.ok(await blobs.has(key), `live file ${id} lost its bytes`);
      }
    }

    it('the first step leaves the bytes; the second removes them', async () => {
      const file = await upload('only copy');
      const key = await keyOf(file.sha256);
      assert.equal(await markDeleted(file.id, file.sha256), key);
      assert.equal(await blobs.has(key), true, 'bytes stay until the second step');
      assert.equal(await removeUnnamedBytes(store, blobs, key), true);
      assert.equal(await blobs.has(key), false);
      assert.equal(await store.blobs.keyOf(file.sha256), null);
    });

    it('a second upload of the same bytes adds a row, not bytes', async () => {
      const first = await upload('twice');
      const second = await upload('twice');
      assert.equal(second.sha256, first.sha256);
      assert.deepEqual(await unnamedKeys(), [], 'the duplicate staged copy was dropped');
      assert.equal(await markDeleted(first.id, first.sha256), null, 'the second file holds the blob');
      await assertLiveFilesHaveBytes([second.id]);
    });

    it('an upload of the same bytes between the two steps keeps them readable', async () => {
      const first = await upload('same bytes');
      const key = (await markDeleted(first.id, first.sha256))!;
      assert.ok(key);
      const second = await upload('same bytes');
      // On a content-addressed store the new row names the same key, which must stay; on
      // a store with a key per upload the old key is unnamed and goes.
      const removed = await removeUnnamedBytes(store, blobs, key);
      assert.equal(removed, (await store.blobs.keyOf(second.sha256)) !== key);
      await assertLiveFilesHaveBytes([second.id]);
      assert.deepEqual(await unnamedKeys(), []);
    });

    it("a crash between the bytes' removal and COMMIT of the second step leaves the file deleted, never live without bytes", async () => {
      const file = await upload('crash in step two');
      const key = (await markDeleted(file.id, file.sha256))!;
      // A store whose delete removes the bytes, then fails as a crash before COMMIT would.
      const crashing: BlobStore = Object.create(blobs);
      crashing.delete = async (k: string) => {
        await blobs.delete(k);
        throw new Error('killed before COMMIT');
      };
      await assert.rejects(removeUnnamedBytes(store, crashing, key), /killed before COMMIT/);
      assert.equal((await store.files.byId(file.id))?.status, FileStatus.Deleted, 'the delete stays done');
      assert.equal(await store.blobs.keyOf(file.sha256), null, 'no row for bytes that are gone');
      const again = await upload('crash in step two');
      await assertLiveFilesHaveBytes([again.id]);
    });

    it('a crash between the two steps leaves unnamed bytes, which the second step (gc) removes later', async () => {
      const file = await upload('crash between steps');
      const key = (await markDeleted(file.id, file.sha256))!;
      assert.deepEqual(await unnamedKeys(), [key]);
      assert.equal(await removeUnnamedBytes(store, blobs, key), true);
      assert.deepEqual(await unnamedKeys(), []);
    });

    it('a transaction that fails after publishing leaves no bytes behind once abandoned', async () => {
      const staged = await blobs.stage(Readable.from([randomBytes(3000)]), { maxBytes: 1 << 20 });
      await assert.rejects(
        store.transaction(async (repos) => {
          await admitStagedBlob(repos, blobs, staged, 1, () => repos.files.create(fileRow(staged.sha256, staged.size)));
          throw new Error('COMMIT lost');
        }),
        /COMMIT lost/,
      );
      await abandonStagedBlob(store, blobs, staged);
      assert.deepEqual(await unnamedKeys(), []);
      assert.equal(await store.blobs.keyOf(staged.sha256), null);
    });

    it('a transaction that failed after its COMMIT landed (an fsync failed): abandoning keeps the bytes its rows name', async () => {
      const staged = await blobs.stage(Readable.from([randomBytes(3000)]), { maxBytes: 1 << 20 });
      const { result } = await store.transaction((repos) =>
        admitStagedBlob(repos, blobs, staged, 1, () => repos.files.create(fileRow(staged.sha256, staged.size))),
      );
      // The caller heard an error (the outcome is unknown) and abandons its upload.
      await abandonStagedBlob(store, blobs, staged);
      const key = await store.blobs.keyOf(staged.sha256);
      assert.notEqual(key, null);
      assert.equal(await blobs.has(key!), true, `file ${result.id}: its bytes are still there`);
      assert.deepEqual(await unnamedKeys(), []);
    });

    it('concurrent uploads and deletes of one digest never leave a live file without bytes', async () => {
      // Statements run with random pauses between them, so the interleavings that a missing
      // lock lets through (a reference check on a snapshot older than a new file row) show
      // up in a few dozen transactions rather than once in a thousand.
      const store = withJitter(harness.store);
      const content = randomBytes(20_000);
      // Staging is slow and uneven (S3 round trips): stage everything first, so that the
      // transactions below really run at the same moment.
      const staged = await Promise.all(Array.from({ length: 30 }, () => blobs.stage(Readable.from([content]), { maxBytes: 1 << 20 })));
      const admit = async (one: (typeof staged)[number]) => {
        try {
          const { result, duplicate } = await store.transaction((repos) =>
            admitStagedBlob(repos, blobs, one, 1, () => repos.files.create(fileRow(one.sha256, one.size))),
          );
          if (duplicate) await blobs.discard(one);
          return result.id;
        } catch (error) {
          await abandonStagedBlob(store, blobs, one);
          throw error;
        }
      };
      const remove = async (id: string) => {
        const key = await store.transaction(async (repos) => {
          await repos.locks.blob(staged[0]!.sha256);
          assert.ok(await repos.files.setStatus(id, [FileStatus.Active], FileStatus.Deleted, 2));
          return dropUnreferencedBlobRow(repos, staged[0]!.sha256);
        });
        if (key !== null) await removeUnnamedBytes(store, blobs, key);
      };
      // Each step uploads the bytes again while the file of the step before, then the only
      // live one, is deleted: the delete must either see the new file (and keep the blob)
      // or come first (and the upload stores the bytes anew). Pairs of steps overlap too.
      const ids: string[] = [];
      let previous: string | null = null;
      for (const one of staged) {
        const [uploaded]: [string, unknown] = await Promise.all([admit(one), previous === null ? null : remove(previous)]);
        ids.push(uploaded);
        await assertLiveFilesHaveBytes(ids);
        previous = uploaded;
      }
      await assertLiveFilesHaveBytes(ids);
      assert.deepEqual(await unnamedKeys(), []);
    });
  });
}

/** A store whose every repository call inside a transaction first waits 0-3 ms. */
function withJitter(store: MetadataStore): MetadataStore {
  const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
  const jitterRepos = (repos: Repositories): Repositories =>
    Object.fromEntries(
      Object.entries(repos).map(([name, repo]) => [
        name,
        new Proxy(repo as object, {
          get(target, property, receiver) {
            const value = Reflect.get(target, property, receiver);
            if (typeof value !== 'function') return value;
            return async (...args: unknown[]) => {
              await pause();
              return value.apply(target, args);
            };
          },
        }),
      ]),
    ) as unknown as Repositories;
  return { ...store, transaction: (work) => store.transaction((repos) => work(jitterRepos(repos))) };
}
