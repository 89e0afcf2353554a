import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { StoredThumbnail, ThumbnailStore } from '../../src/blob/thumbnail-store.js';

/** One thumbnail store under test, with what the suite needs to look behind the interface. */
export interface ThumbnailStoreHarness {
  store: ThumbnailStore;
  /**
   * What the store holds besides the thumbnails `list` yields (temp files, stray objects),
   * as names: the suite checks that writes leave nothing there.
   */
  strayEntries(): Promise<string[]>;
  /** Removes everything the store wrote (its folders, its bucket prefix). */
  cleanup(): Promise<void>;
  /** How often the concurrent-write case is repeated (default 20); a remote store may lower it. */
  raceRepeats?: number;
}

/** Makes a fresh, empty store for one test. */
export type ThumbnailStoreFactory = () => Promise<ThumbnailStoreHarness>;

const digest = () => randomBytes(32).toString('hex');

async function listAll(store: ThumbnailStore): Promise<StoredThumbnail[]> {
  const out: StoredThumbnail[] = [];
  for await (const thumbnail of store.list()) out.push(thumbnail);
  return out;
}

/**
 * The ThumbnailStore contract (src/blob/thumbnail-store.ts) every backend passes
 * (STYLE.md: one suite per store interface): bytes round-trip, the empty marker is kept
 * apart from "none", a put replaces whole, delete is idempotent, list yields each
 * thumbnail once and nothing else, and no name is ever built from a malformed digest.
 */
export function thumbnailStoreContract(name: string, makeStore: ThumbnailStoreFactory, options: { skip?: string | false } = {}): void {
  describe(`ThumbnailStore contract: ${name}`, { skip: options.skip }, () => {
    let harness: ThumbnailStoreHarness;
    let store: ThumbnailStore;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    test('put then get returns the bytes; an unknown digest is null', async () => {
      const sha = digest();
      assert.equal(await store.get(sha), null);
      const bytes = randomBytes(20_000);
      await store.put(sha, bytes);
      assert.deepEqual(await store.get(sha), bytes);
      assert.deepEqual(await harness.strayEntries(), []);
    });

    test('the empty marker ("no thumbnail for this content") is stored and read as empty, not as none', async () => {
      const sha = digest();
      await store.put(sha, Buffer.alloc(0));
      const read = await store.get(sha);
      assert.ok(read !== null, 'the marker is kept');
      assert.equal(read.length, 0);
    });

    test('put replaces; delete removes, and deleting what is not there is no error', async () => {
      const sha = digest();
      await store.put(sha, Buffer.from('old'));
      await store.put(sha, Buffer.from('new bytes'));
      assert.deepEqual(await store.get(sha), Buffer.from('new bytes'));
      await store.delete(sha);
      assert.equal(await store.get(sha), null);
      await store.delete(sha);
      await store.delete(digest());
      assert.deepEqual(await listAll(store), []);
    });

    test('list yields every thumbnail once, with its write time, and nothing else', async () => {
      const before = Date.now() - 60_000;
      const shas = Array.from({ length: 5 }, digest);
      for (const sha of shas) await store.put(sha, Buffer.from(sha));
      await store.put(shas[0]!, Buffer.from('again'));
      const listed = await listAll(store);
      assert.deepEqual(listed.map((t) => t.sha256).sort(), [...shas].sort());
      for (const thumbnail of listed) assert.ok(thumbnail.modifiedAt > before && thumbnail.modifiedAt < Date.now() + 60_000, String(thumbnail.modifiedAt));
      assert.deepEqual(await harness.strayEntries(), []);
    });

    test('concurrent puts of one digest: a reader sees one whole version, never a part', async () => {
      const sha = digest();
      const versions = [randomBytes(50_000), randomBytes(70_000)];
      for (let round = 0; round < (harness.raceRepeats ?? 20); round++) {
        const reads: Array<Buffer | null> = [];
        await Promise.all([store.put(sha, versions[0]!), store.put(sha, versions[1]!), store.get(sha).then((read) => reads.push(read))]);
        reads.push(await store.get(sha));
        for (const read of reads)
          if (read !== null)
            assert.ok(
              versions.some((version) => version.equals(read)),
              `a read of ${read.length} bytes is no whole version`,
            );
      }
      assert.deepEqual(await harness.strayEntries(), []);
    });

    test('a malformed digest is refused before any name is built', async () => {
      for (const bad of ['../../etc/passwd', 'ab', 'A'.repeat(64), `${'a'.repeat(63)}/`]) {
        await assert.rejects(store.put(bad, Buffer.from('x')));
        await assert.rejects(store.get(bad));
      }
      assert.deepEqual(await listAll(store), []);
    });
  });
}
