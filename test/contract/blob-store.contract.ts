import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore, type StagedBlob } from '../../src/blob/blob-store.js';

/** One store under test, with what the suite needs to look behind the interface. */
export interface BlobStoreHarness {
  store: BlobStore;
  /**
   * What is left in the store's staging area (temp files, pending multipart uploads...),
   * as names; the suite only checks that failures and commits leave nothing behind.
   */
  stagingEntries(): Promise<string[]>;
  /** Removes everything the store wrote (temp folder, bucket prefix). */
  cleanup(): Promise<void>;
  /**
   * How often each failure case is repeated (default 200). Clean-up races (a temp file
   * created after the failure was reported) only show up now and then, so one attempt
   * would let them pass; a slow remote store may lower this.
   */
  failureRepeats?: number;
}

/** Makes a fresh, empty store for one test. */
export type BlobStoreFactory = () => Promise<BlobStoreHarness>;

export const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A readable that yields `bytes` in chunks of `chunkSize`, like a network upload. */
export function chunked(bytes: Buffer, chunkSize = 1000): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
  return Readable.from(chunks, { objectMode: false });
}

/** Collects a stream into one buffer. */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/**
 * A source that sends `first`, then calls `then()` the next time it is read and sends
 * nothing more until the stream is destroyed: the point where a client stalls, dies or
 * is aborted, reached without any timer.
 */
function stallingSource(first: Buffer, then: (stream: Readable) => void): Readable {
  let reads = 0;
  const stream: Readable = new Readable({
    read() {
      reads += 1;
      if (reads === 1) this.push(first);
      else if (reads === 2) then(stream);
    },
  });
  return stream;
}

const MISSING = 'f'.repeat(64);

/**
 * The suite every BlobStore implementation must pass (STYLE.md: one shared suite).
 * Call it from a `*.test.ts` per implementation with a factory of fresh stores.
 */
export function blobStoreContract(name: string, makeStore: BlobStoreFactory): void {
  describe(`BlobStore contract: ${name}`, () => {
    let harness: BlobStoreHarness;
    let store: BlobStore;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const assertStagingEmpty = async (why: string) => {
      assert.deepEqual(await harness.stagingEntries(), [], `staging not empty ${why}`);
    };

    /**
     * Runs a failing stage `failureRepeats` times, checks each rejection, then lets pending
     * I/O land (one full stage and discard) before asserting that staging is empty.
     */
    const assertFailsCleanly = async (
      why: string,
      attempt: () => { source: Readable; maxBytes?: number; signal?: AbortSignal },
      check: (error: unknown) => boolean,
    ) => {
      for (let i = 0; i < (harness.failureRepeats ?? 200); i++) {
        const { source, maxBytes = 1_000_000, signal } = attempt();
        await assert.rejects(store.stage(source, { maxBytes, signal }), check);
      }
      await store.discard(await store.stage(chunked(randomBytes(10)), { maxBytes: 10 }));
      await assertStagingEmpty(why);
    };

    const stageAndCommit = async (bytes: Buffer): Promise<StagedBlob> => {
      const staged = await store.stage(chunked(bytes), { maxBytes: bytes.length });
      await store.commit(staged);
      return staged;
    };

    describe('stage', () => {
      test('computes the sha256 and size of a multi-chunk stream', async () => {
        const bytes = randomBytes(100_000);
        const staged = await store.stage(chunked(bytes, 4096), { maxBytes: 1_000_000 });
        assert.equal(staged.sha256, sha256Of(bytes));
        assert.equal(staged.size, bytes.length);
        assert.equal(typeof staged.handle, 'string');
        await store.discard(staged);
      });

      test('stages an empty stream as the empty digest', async () => {
        const staged = await store.stage(Readable.from([]), { maxBytes: 10 });
        assert.equal(staged.size, 0);
        assert.equal(staged.sha256, sha256Of(Buffer.alloc(0)));
        await store.discard(staged);
      });

      test('gives each staging its own handle, even for the same bytes', async () => {
        const bytes = Buffer.from('same bytes');
        const [a, b] = await Promise.all([store.stage(chunked(bytes), { maxBytes: 100 }), store.stage(chunked(bytes), { maxBytes: 100 })]);
        assert.equal(a.sha256, b.sha256);
        assert.notEqual(a.handle, b.handle);
        await store.discard(a);
        await store.discard(b);
      });

      test('accepts exactly maxBytes', async () => {
        const bytes = randomBytes(5000);
        const staged = await store.stage(chunked(bytes), { maxBytes: 5000 });
        assert.equal(staged.size, 5000);
        await store.discard(staged);
      });

      test('one byte over maxBytes is BlobTooLargeError and nothing is left', async () => {
        await assertFailsCleanly(
          'after BlobTooLargeError',
          () => ({ source: chunked(randomBytes(5001)), maxBytes: 5000 }),
          (error) => {
            assert.ok(error instanceof BlobTooLargeError, String(error));
            assert.equal(error.limit, 5000);
            return true;
          },
        );
      });

      test('a source far over the limit is BlobTooLargeError in the first chunk too', async () => {
        await assertFailsCleanly('after an oversized first chunk', () => ({ source: Readable.from([randomBytes(1000)]), maxBytes: 10 }), (error) => error instanceof BlobTooLargeError);
      });

      test('stops reading a source far over the limit', async () => {
        let produced = 0;
        const endless = new Readable({
          read() {
            produced += 1024;
            // Would run forever if the store kept reading after the limit.
            this.push(Buffer.alloc(1024));
          },
        });
        await assert.rejects(store.stage(endless, { maxBytes: 10_000 }), BlobTooLargeError);
        assert.ok(produced < 10_000_000, `read ${produced} bytes for a 10000-byte limit`);
        await assertStagingEmpty('after an oversized endless source');
      });

      test('a source that errors midway rejects with its error and leaves nothing', async () => {
        const boom = new Error('client went away');
        await assertFailsCleanly(
          'after a source error',
          () => ({ source: stallingSource(randomBytes(3000), (stream) => stream.destroy(boom)) }),
          (error) => error === boom,
        );
      });

      test('a source that errors before any byte rejects and leaves nothing', async () => {
        const boom = new Error('no bytes at all');
        const source = () =>
          new Readable({
            read() {
              this.destroy(boom);
            },
          });
        await assertFailsCleanly('after an immediate source error', () => ({ source: source() }), (error) => error === boom);
      });

      test('a signal aborted midway rejects with an AbortError and leaves nothing', async () => {
        const sources: Readable[] = [];
        await assertFailsCleanly(
          'after an abort',
          () => {
            const controller = new AbortController();
            const source = stallingSource(randomBytes(3000), () => controller.abort());
            sources.push(source);
            return { source, signal: controller.signal };
          },
          (error) => {
            assert.equal((error as Error).name, 'AbortError', String(error));
            return true;
          },
        );
        assert.ok(sources.every((s) => s.destroyed), 'the source is destroyed on abort');
      });

      test('an already aborted signal rejects and leaves nothing', async () => {
        await assertFailsCleanly(
          'after a pre-aborted signal',
          () => ({ source: chunked(randomBytes(3000)), signal: AbortSignal.abort() }),
          (error) => (error as Error).name === 'AbortError',
        );
      });

      test('staged bytes are not visible under the digest', async () => {
        const bytes = randomBytes(100);
        const staged = await store.stage(chunked(bytes), { maxBytes: 100 });
        assert.equal(await store.has(staged.sha256), false);
        await assert.rejects(store.read(staged.sha256), BlobNotFoundError);
        await store.discard(staged);
      });
    });

    describe('commit', () => {
      test('makes the blob readable under its digest and empties staging', async () => {
        const bytes = randomBytes(20_000);
        const staged = await stageAndCommit(bytes);
        assert.equal(await store.has(staged.sha256), true);
        assert.deepEqual(await readAll(await store.read(staged.sha256)), bytes);
        await assertStagingEmpty('after commit');
      });

      test('of an existing digest keeps one copy with the same bytes', async () => {
        const bytes = randomBytes(2000);
        const first = await stageAndCommit(bytes);
        const second = await store.stage(chunked(bytes), { maxBytes: 2000 });
        await store.commit(second);
        assert.equal(second.sha256, first.sha256);
        assert.deepEqual(await readAll(await store.read(first.sha256)), bytes);
        await assertStagingEmpty('after committing a duplicate');
        // One copy, not a reference count: a single delete removes it.
        await store.delete(first.sha256);
        assert.equal(await store.has(first.sha256), false);
      });

      test('two concurrent commits of the same digest both succeed', async () => {
        const bytes = randomBytes(50_000);
        const [a, b] = await Promise.all([1, 2].map(() => store.stage(chunked(bytes), { maxBytes: bytes.length })));
        await Promise.all([store.commit(a!), store.commit(b!)]);
        assert.deepEqual(await readAll(await store.read(a!.sha256)), bytes);
        await assertStagingEmpty('after concurrent commits');
      });

      test('keeps blobs of different digests apart', async () => {
        const one = randomBytes(300);
        const two = randomBytes(300);
        const a = await stageAndCommit(one);
        const b = await stageAndCommit(two);
        assert.deepEqual(await readAll(await store.read(a.sha256)), one);
        assert.deepEqual(await readAll(await store.read(b.sha256)), two);
        await store.delete(a.sha256);
        assert.equal(await store.has(b.sha256), true);
      });
    });

    describe('read', () => {
      test('a range returns exactly the inclusive bytes asked for', async () => {
        const bytes = randomBytes(10_000);
        const { sha256 } = await stageAndCommit(bytes);
        const ranges: Array<[number, number]> = [
          [0, 0],
          [0, 9_999],
          [1, 1],
          [100, 4_195],
          [9_999, 9_999],
          [5_000, 9_999],
        ];
        for (const [start, end] of ranges) {
          const got = await readAll(await store.read(sha256, { start, end }));
          assert.deepEqual(got, bytes.subarray(start, end + 1), `range ${start}-${end}`);
        }
      });

      test('reads can run side by side', async () => {
        const bytes = randomBytes(30_000);
        const { sha256 } = await stageAndCommit(bytes);
        const [whole, part] = await Promise.all([store.read(sha256).then(readAll), store.read(sha256, { start: 10, end: 19 }).then(readAll)]);
        assert.deepEqual(whole, bytes);
        assert.deepEqual(part, bytes.subarray(10, 20));
      });

      test('a missing digest is BlobNotFoundError', async () => {
        await assert.rejects(store.read(MISSING), (error: unknown) => {
          assert.ok(error instanceof BlobNotFoundError, String(error));
          assert.equal(error.sha256, MISSING);
          return true;
        });
        await assert.rejects(store.read(MISSING, { start: 0, end: 0 }), BlobNotFoundError);
        assert.equal(await store.has(MISSING), false);
      });
    });

    describe('delete', () => {
      test('removes the blob and is idempotent', async () => {
        const { sha256 } = await stageAndCommit(randomBytes(100));
        await store.delete(sha256);
        assert.equal(await store.has(sha256), false);
        await assert.rejects(store.read(sha256), BlobNotFoundError);
        await store.delete(sha256);
        await store.delete(MISSING);
      });

      test('a deleted digest can be stored again', async () => {
        const bytes = randomBytes(100);
        const { sha256 } = await stageAndCommit(bytes);
        await store.delete(sha256);
        await stageAndCommit(bytes);
        assert.deepEqual(await readAll(await store.read(sha256)), bytes);
      });
    });

    describe('discard', () => {
      test('removes the staged bytes, publishes nothing, and may be repeated', async () => {
        const staged = await store.stage(chunked(randomBytes(4000)), { maxBytes: 4000 });
        assert.notDeepEqual(await harness.stagingEntries(), [], 'staging holds the staged bytes');
        await store.discard(staged);
        await assertStagingEmpty('after discard');
        assert.equal(await store.has(staged.sha256), false);
        await store.discard(staged);
      });

      test('of one staging leaves another of the same bytes alone', async () => {
        const bytes = randomBytes(4000);
        const a = await store.stage(chunked(bytes), { maxBytes: 4000 });
        const b = await store.stage(chunked(bytes), { maxBytes: 4000 });
        await store.discard(a);
        await store.commit(b);
        assert.deepEqual(await readAll(await store.read(b.sha256)), bytes);
        await assertStagingEmpty('after discard and commit');
      });
    });

    describe('listing (gc)', () => {
      const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
        const all: T[] = [];
        for await (const item of items) all.push(item);
        return all;
      };
      /** Modification times are wall-clock times; file systems may round them to a second or two. */
      const assertRecent = (modifiedAt: number, since: number) => {
        assert.equal(typeof modifiedAt, 'number');
        assert.ok(modifiedAt >= since - 2000 && modifiedAt <= Date.now() + 2000, `modifiedAt ${modifiedAt} not near now`);
      };

      test('an empty store lists no blobs and nothing staged', async () => {
        assert.deepEqual(await collect(store.listBlobs()), []);
        assert.deepEqual(await collect(store.listStaged()), []);
      });

      test('listBlobs yields every committed blob once with its size, and no staged bytes', async () => {
        const since = Date.now();
        const committed = new Map<string, number>();
        for (let i = 0; i < 40; i++) {
          const staged = await stageAndCommit(randomBytes(1 + i * 37));
          committed.set(staged.sha256, staged.size);
        }
        const pending = await store.stage(chunked(randomBytes(500)), { maxBytes: 500 });
        const listed = await collect(store.listBlobs());
        assert.equal(listed.length, committed.size, 'each blob exactly once');
        for (const blob of listed) {
          assert.equal(blob.size, committed.get(blob.sha256), `size of ${blob.sha256}`);
          assertRecent(blob.modifiedAt, since);
        }
        assert.ok(!listed.some((b) => b.sha256 === pending.sha256), 'staged bytes are not a blob');
        await store.discard(pending);
      });

      test('a deleted blob is no longer listed', async () => {
        const keep = await stageAndCommit(randomBytes(100));
        const gone = await stageAndCommit(randomBytes(100));
        await store.delete(gone.sha256);
        assert.deepEqual((await collect(store.listBlobs())).map((b) => b.sha256), [keep.sha256]);
      });

      test('blobs can be deleted while the listing walks them (as gc does)', async () => {
        for (let i = 0; i < 30; i++) await stageAndCommit(randomBytes(64));
        const seen = new Set<string>();
        for await (const blob of store.listBlobs()) {
          assert.ok(!seen.has(blob.sha256), `${blob.sha256} listed twice`);
          seen.add(blob.sha256);
          await store.delete(blob.sha256);
        }
        assert.equal(seen.size, 30);
        assert.deepEqual(await collect(store.listBlobs()), []);
      });

      test('listStaged yields the uploads not yet committed or discarded', async () => {
        const since = Date.now();
        const a = await store.stage(chunked(randomBytes(300)), { maxBytes: 300 });
        const b = await store.stage(chunked(randomBytes(300)), { maxBytes: 300 });
        const c = await store.stage(chunked(randomBytes(300)), { maxBytes: 300 });
        const d = await store.stage(chunked(randomBytes(300)), { maxBytes: 300 });
        await store.commit(c);
        await store.discard(d);
        const listed = await collect(store.listStaged());
        assert.deepEqual(listed.map((s) => s.handle).sort(), [a.handle, b.handle].sort());
        for (const entry of listed) assertRecent(entry.modifiedAt, since);
        await store.discard(a);
        await store.discard(b);
      });

      test('deleteStaged removes a staged upload, which then cannot be published; a missing one is no error', async () => {
        const staged = await store.stage(chunked(randomBytes(300)), { maxBytes: 300 });
        await store.deleteStaged(staged.handle);
        assert.deepEqual(await collect(store.listStaged()), []);
        await assertStagingEmpty('after deleteStaged');
        await store.deleteStaged(staged.handle);
        // What gc does to an abandoned upload: should its client come back, the commit fails
        // rather than publishing bytes that are gone.
        await store.commit(staged).catch(() => {});
        assert.equal(await store.has(staged.sha256), false);
      });
    });
  });
}
