import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { BlobNotFoundError, type BlobStore, BlobTooLargeError, type StagedBlob } from '../../src/blob/blob-store.js';

/** One store under test, with what the suite needs to look behind the interface. */
export interface BlobStoreHarness {
  store: BlobStore;
  /**
   * What the store holds besides the blobs `listBlobs` yields (temp files, unfinished
   * multipart uploads, stray objects...), as names; the suite checks that failures,
   * publishes and discards leave nothing there. A store that stages to where it publishes
   * (S3) shows a staged blob in `listBlobs` instead, so the suite never assumes either.
   */
  stagingEntries(): Promise<string[]>;
  /** A well-formed key no test ever stores bytes under (a digest, an object id). */
  missingKey: string;
  /** Removes everything the store wrote (temp folder, bucket prefix). */
  cleanup(): Promise<void>;
  /**
   * How often each failure case is repeated (default 200). Clean-up races (a temp file
   * created after the failure was reported) only show up now and then, so one attempt
   * would let them pass; a slow remote store may lower this.
   */
  failureRepeats?: number;
  /**
   * Leaves an upload unfinished the way a crashed server would (a temp file half written,
   * a multipart upload with a part and no completion), for the listStaged/deleteStaged
   * cases; those are skipped for a harness that cannot.
   */
  startUnfinishedUpload?(): Promise<void>;
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
export function stallingSource(first: Buffer, then: (stream: Readable) => void): Readable {
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

/** Everything an async iterable yields. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** Names no store makes: each must be refused, never turned into a path or an object name. */
const NOT_KEYS = ['../../etc/passwd', '', 'A'.repeat(64), `${'a'.repeat(32)}/../${'b'.repeat(32)}`, `blobs/${'c'.repeat(32)}`];

/**
 * The suite every BlobStore implementation must pass (STYLE.md: one shared suite).
 * Call it from a `*.test.ts` per implementation with a factory of fresh stores; `skip`
 * names why a store cannot be tested here (no server configured).
 */
export function blobStoreContract(name: string, makeStore: BlobStoreFactory, options: { skip?: string | false } = {}): void {
  describe(`BlobStore contract: ${name}`, { skip: options.skip }, () => {
    let harness: BlobStoreHarness;
    let store: BlobStore;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const listedKeys = async () => (await collect(store.listBlobs())).map((blob) => blob.key).sort();

    /**
     * Nothing is left but the blobs published under `keys`: staging is empty and listBlobs
     * yields exactly those keys (where a store that stages in place would show a leftover).
     */
    const assertOnly = async (why: string, keys: Iterable<string> = []) => {
      assert.deepEqual(await harness.stagingEntries(), [], `staging not empty ${why}`);
      assert.deepEqual(await listedKeys(), [...new Set(keys)].sort(), `blobs other than the published ones ${why}`);
    };

    /**
     * Runs a failing stage `failureRepeats` times, checks each rejection, then lets pending
     * I/O land (one full stage and discard) before asserting that nothing is left.
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
      await assertOnly(why);
    };

    /** Stages and publishes `bytes`, checking that publish returns keyFor(staged). */
    const stageAndPublish = async (bytes: Buffer): Promise<{ staged: StagedBlob; key: string }> => {
      const staged = await store.stage(chunked(bytes), { maxBytes: bytes.length });
      const expected = store.keyFor(staged);
      const key = await store.publish(staged);
      assert.equal(key, expected, 'publish returns keyFor(staged)');
      return { staged, key };
    };

    /** Where gc sees a staged blob: as an upload in listStaged, as a blob under keyFor in listBlobs. */
    const gcView = async (staged: StagedBlob) => ({
      inStaging: (await collect(store.listStaged())).some((entry) => entry.handle === staged.handle),
      asBlob: (await listedKeys()).includes(store.keyFor(staged)),
    });

    /** Modification times are wall-clock times; file systems and S3 may round them to a second or two. */
    const assertRecent = (modifiedAt: number, since: number) => {
      assert.equal(typeof modifiedAt, 'number');
      assert.ok(modifiedAt >= since - 2000 && modifiedAt <= Date.now() + 2000, `modifiedAt ${modifiedAt} not near now`);
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
        await assertFailsCleanly(
          'after an oversized first chunk',
          () => ({ source: Readable.from([randomBytes(1000)]), maxBytes: 10 }),
          (error) => error instanceof BlobTooLargeError,
        );
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
        await assertOnly('after an oversized endless source');
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
        await assertFailsCleanly(
          'after an immediate source error',
          () => ({ source: source() }),
          (error) => error === boom,
        );
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
        assert.ok(
          sources.every((s) => s.destroyed),
          'the source is destroyed on abort',
        );
      });

      test('an already aborted signal rejects and leaves nothing', async () => {
        await assertFailsCleanly(
          'after a pre-aborted signal',
          () => ({ source: chunked(randomBytes(3000)), signal: AbortSignal.abort() }),
          (error) => (error as Error).name === 'AbortError',
        );
      });

      // Readers find bytes through blob rows, and a staged blob has none yet; a store may
      // still stage in place (S3: the upload is the object). What must never be seen under
      // the key is part of the bytes.
      test('before publish, keyFor(staged) holds nothing or all of the staged bytes, never a part', async () => {
        const bytes = randomBytes(100);
        const staged = await store.stage(chunked(bytes), { maxBytes: 100 });
        const key = store.keyFor(staged);
        if (await store.has(key)) assert.deepEqual(await readAll(await store.read(key)), bytes);
        else await assert.rejects(store.read(key), BlobNotFoundError);
        await store.discard(staged);
        assert.equal(await store.has(key), false);
      });
    });

    describe('keyFor', () => {
      test('is the same before and after publish, and publish returns it', async () => {
        const staged = await store.stage(chunked(randomBytes(100)), { maxBytes: 100 });
        const key = store.keyFor(staged);
        assert.equal(typeof key, 'string');
        assert.equal(store.keyFor(staged), key);
        assert.equal(await store.publish(staged), key);
        assert.equal(store.keyFor(staged), key);
      });
    });

    describe('publish', () => {
      test('makes the blob readable under keyFor(staged) and leaves only the blob', async () => {
        const bytes = randomBytes(20_000);
        const { key } = await stageAndPublish(bytes);
        assert.equal(await store.has(key), true);
        assert.deepEqual(await readAll(await store.read(key)), bytes);
        await assertOnly('after publish', [key]);
      });

      // Local: the same key (the digest), the staged copy dropped. S3: its own key. The
      // suite assumes neither; the blob row records whichever key publish returns.
      test('a second staged copy of the same bytes publishes to a key that reads the same bytes', async () => {
        const bytes = randomBytes(2000);
        const first = await stageAndPublish(bytes);
        const second = await stageAndPublish(bytes);
        assert.equal(second.staged.sha256, first.staged.sha256);
        assert.deepEqual(await readAll(await store.read(first.key)), bytes);
        assert.deepEqual(await readAll(await store.read(second.key)), bytes);
        await assertOnly('after publishing a duplicate', [first.key, second.key]);
        // One copy per key, not a reference count: a single delete removes the bytes under it.
        await store.delete(first.key);
        assert.equal(await store.has(first.key), false);
        if (second.key !== first.key) assert.deepEqual(await readAll(await store.read(second.key)), bytes);
      });

      test('two concurrent publishes of the same bytes both succeed', async () => {
        const bytes = randomBytes(50_000);
        const [a, b] = await Promise.all([1, 2].map(() => store.stage(chunked(bytes), { maxBytes: bytes.length })));
        const [keyA, keyB] = await Promise.all([store.publish(a!), store.publish(b!)]);
        assert.equal(keyA, store.keyFor(a!));
        assert.equal(keyB, store.keyFor(b!));
        assert.deepEqual(await readAll(await store.read(keyA!)), bytes);
        assert.deepEqual(await readAll(await store.read(keyB!)), bytes);
        await assertOnly('after concurrent publishes', [keyA!, keyB!]);
      });

      test('keeps blobs of different digests apart', async () => {
        const one = randomBytes(300);
        const two = randomBytes(300);
        const a = await stageAndPublish(one);
        const b = await stageAndPublish(two);
        assert.notEqual(a.key, b.key);
        assert.deepEqual(await readAll(await store.read(a.key)), one);
        assert.deepEqual(await readAll(await store.read(b.key)), two);
        await store.delete(a.key);
        assert.equal(await store.has(b.key), true);
      });

      test('of a discarded staged blob rejects with BlobNotFoundError and publishes nothing', async () => {
        const staged = await store.stage(chunked(randomBytes(300)), { maxBytes: 300 });
        await store.discard(staged);
        await assert.rejects(store.publish(staged), BlobNotFoundError);
        assert.equal(await store.has(store.keyFor(staged)), false);
        await assertOnly('after publishing a discarded blob');
      });
    });

    describe('read', () => {
      test('a range returns exactly the inclusive bytes asked for', async () => {
        const bytes = randomBytes(10_000);
        const { key } = await stageAndPublish(bytes);
        const ranges: Array<[number, number, string]> = [
          [0, 0, 'first byte'],
          [0, 9_999, 'whole'],
          [1, 1, 'second byte'],
          [100, 4_195, 'middle'],
          [9_999, 9_999, 'last byte'],
          [5_000, 9_999, 'tail'],
        ];
        for (const [start, end, what] of ranges) {
          const got = await readAll(await store.read(key, { start, end }));
          assert.deepEqual(got, bytes.subarray(start, end + 1), `${what}: range ${start}-${end}`);
        }
      });

      test('reads can run side by side', async () => {
        const bytes = randomBytes(30_000);
        const { key } = await stageAndPublish(bytes);
        const [whole, part] = await Promise.all([store.read(key).then(readAll), store.read(key, { start: 10, end: 19 }).then(readAll)]);
        assert.deepEqual(whole, bytes);
        assert.deepEqual(part, bytes.subarray(10, 20));
      });

      test('an unknown but well-formed key is BlobNotFoundError, has false, delete a no-op', async () => {
        const missing = harness.missingKey;
        await assert.rejects(store.read(missing), (error: unknown) => {
          assert.ok(error instanceof BlobNotFoundError, String(error));
          assert.equal(error.key, missing);
          return true;
        });
        await assert.rejects(store.read(missing, { start: 0, end: 0 }), BlobNotFoundError);
        assert.equal(await store.has(missing), false);
        await store.delete(missing);
        await assertOnly('after touching a missing key');
      });

      test('a reader destroyed early leaves the blob readable and deletable', async () => {
        const bytes = randomBytes(300_000);
        const { key } = await stageAndPublish(bytes);
        for (let i = 0; i < 20; i++) {
          const stream = await store.read(key);
          const first = await stream[Symbol.asyncIterator]().next();
          assert.equal(first.done, false);
          stream.destroy();
        }
        assert.deepEqual(await readAll(await store.read(key)), bytes);
        await store.delete(key);
        assert.equal(await store.has(key), false);
      });

      test('a malformed key or handle is refused, never used as a name', async () => {
        for (const bad of NOT_KEYS) {
          const what = JSON.stringify(bad);
          await assert.rejects(store.read(bad), `read(${what})`);
          await assert.rejects(store.delete(bad), `delete(${what})`);
          assert.equal(await store.has(bad), false, `has(${what})`);
          const forged: StagedBlob = { sha256: 'a'.repeat(64), size: 0, handle: bad };
          await assert.rejects(store.publish(forged), `publish of handle ${what}`);
          await assert.rejects(store.discard(forged), `discard of handle ${what}`);
          await assert.rejects(store.deleteStaged(bad), `deleteStaged(${what})`);
        }
      });
    });

    describe('delete', () => {
      test('removes the blob and is idempotent', async () => {
        const { key } = await stageAndPublish(randomBytes(100));
        await store.delete(key);
        assert.equal(await store.has(key), false);
        await assert.rejects(store.read(key), BlobNotFoundError);
        await store.delete(key);
        await store.delete(harness.missingKey);
      });

      test('bytes whose key was deleted can be stored again', async () => {
        const bytes = randomBytes(100);
        const { key } = await stageAndPublish(bytes);
        await store.delete(key);
        const again = await stageAndPublish(bytes);
        assert.deepEqual(await readAll(await store.read(again.key)), bytes);
        await assertOnly('after storing deleted bytes again', [again.key]);
      });
    });

    describe('discard', () => {
      test('removes the staged bytes, publishes nothing, and may be repeated', async () => {
        const staged = await store.stage(chunked(randomBytes(4000)), { maxBytes: 4000 });
        const held = [...(await harness.stagingEntries()), ...(await listedKeys())];
        assert.notDeepEqual(held, [], 'the store holds the staged bytes');
        await store.discard(staged);
        await assertOnly('after discard');
        assert.equal(await store.has(store.keyFor(staged)), false);
        await store.discard(staged);
      });

      test('of one staging leaves another of the same bytes alone', async () => {
        const bytes = randomBytes(4000);
        const a = await store.stage(chunked(bytes), { maxBytes: 4000 });
        const b = await store.stage(chunked(bytes), { maxBytes: 4000 });
        await store.discard(a);
        const key = await store.publish(b);
        assert.equal(key, store.keyFor(b));
        assert.deepEqual(await readAll(await store.read(key)), bytes);
        await assertOnly('after discard and publish', [key]);
      });
    });

    describe('listing (gc)', () => {
      test('an empty store lists no blobs and nothing staged', async () => {
        assert.deepEqual(await collect(store.listBlobs()), []);
        assert.deepEqual(await collect(store.listStaged()), []);
      });

      test('listBlobs yields every published blob once with its size, and a staged blob at most under its own key', async () => {
        const since = Date.now();
        const published = new Map<string, number>();
        for (let i = 0; i < 40; i++) {
          const { staged, key } = await stageAndPublish(randomBytes(1 + i * 37));
          published.set(key, staged.size);
        }
        const pending = await store.stage(chunked(randomBytes(500)), { maxBytes: 500 });
        const listed = await collect(store.listBlobs());
        assert.equal(new Set(listed.map((b) => b.key)).size, listed.length, 'each blob exactly once');
        const expected = new Map(published);
        // A store that stages in place (S3) lists the pending upload's object; gc keeps it
        // for its grace and because no row names it yet, it is not a published blob.
        if (listed.some((b) => b.key === store.keyFor(pending))) expected.set(store.keyFor(pending), 500);
        assert.equal(listed.length, expected.size, 'every published blob, nothing else');
        for (const blob of listed) {
          assert.equal(blob.size, expected.get(blob.key), `size of ${blob.key}`);
          assertRecent(blob.modifiedAt, since);
        }
        await store.discard(pending);
      });

      test('a deleted blob is no longer listed', async () => {
        const keep = await stageAndPublish(randomBytes(100));
        const gone = await stageAndPublish(randomBytes(100));
        await store.delete(gone.key);
        assert.deepEqual(await listedKeys(), [keep.key]);
      });

      test('blobs can be deleted while the listing walks them (as gc does)', async () => {
        for (let i = 0; i < 30; i++) await stageAndPublish(randomBytes(64));
        const seen = new Set<string>();
        for await (const blob of store.listBlobs()) {
          assert.ok(!seen.has(blob.key), `${blob.key} listed twice`);
          seen.add(blob.key);
          await store.delete(blob.key);
        }
        assert.equal(seen.size, 30);
        assert.deepEqual(await collect(store.listBlobs()), []);
      });

      test('every staged blob not yet published or discarded is seen by gc, exactly one way', async () => {
        const since = Date.now();
        const stage = () => store.stage(chunked(randomBytes(300)), { maxBytes: 300 });
        const [a, b, c, d] = [await stage(), await stage(), await stage(), await stage()];
        await store.publish(c);
        await store.discard(d);
        for (const pending of [a, b]) {
          const { inStaging, asBlob } = await gcView(pending);
          assert.ok(inStaging !== asBlob, `a pending upload is listed once by listStaged or listBlobs (staged ${inStaging}, blob ${asBlob})`);
        }
        assert.deepEqual(await gcView(c), { inStaging: false, asBlob: true }, 'a published blob');
        assert.deepEqual(await gcView(d), { inStaging: false, asBlob: false }, 'a discarded one');
        const staged = await collect(store.listStaged());
        assert.ok(
          staged.every((entry) => entry.handle === a.handle || entry.handle === b.handle),
          'listStaged: only pending uploads',
        );
        for (const entry of staged) assertRecent(entry.modifiedAt, since);
        await store.discard(a);
        await store.discard(b);
        await assertOnly('after the pending uploads are discarded', [store.keyFor(c)]);
      });

      test('removing an abandoned staged blob as gc does (deleteStaged or delete) makes its publish fail', async () => {
        const staged = await store.stage(chunked(randomBytes(300)), { maxBytes: 300 });
        const { inStaging, asBlob } = await gcView(staged);
        for (const entry of await collect(store.listStaged())) {
          if (entry.handle !== staged.handle) continue;
          await store.deleteStaged(entry.handle);
          // A missing one is no error.
          await store.deleteStaged(entry.handle);
        }
        if (asBlob) await store.delete(store.keyFor(staged));
        assert.ok(inStaging || asBlob, 'gc could see the staged blob');
        assert.deepEqual(await collect(store.listStaged()), []);
        await assertOnly('after gc removed a staged blob');
        // Should its client come back, the publish fails rather than naming bytes that are gone.
        await assert.rejects(store.publish(staged), BlobNotFoundError);
        assert.equal(await store.has(store.keyFor(staged)), false);
      });

      test('an unfinished upload is listed fresh by listStaged, not by listBlobs, and deleteStaged removes it', async (t) => {
        if (!harness.startUnfinishedUpload) return t.skip('the harness cannot leave an upload unfinished');
        const since = Date.now();
        await harness.startUnfinishedUpload();
        const staged = await collect(store.listStaged());
        assert.equal(staged.length, 1, 'one unfinished upload');
        assertRecent(staged[0]!.modifiedAt, since);
        assert.deepEqual(await collect(store.listBlobs()), []);
        assert.notDeepEqual(await harness.stagingEntries(), []);
        await store.deleteStaged(staged[0]!.handle);
        assert.deepEqual(await collect(store.listStaged()), []);
        await assertOnly('after deleteStaged');
        await store.deleteStaged(staged[0]!.handle);
      });
    });
  });
}
