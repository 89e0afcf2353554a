import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { DownloadCounts } from '../../src/downloads/download-counts.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-21T10:04:05Z');
const DAY_MS = 86_400_000;

/**
 * The suite every dialect must pass for download counts (issue 28): counted in memory per
 * file and per day, written in batches by every server on its own, and still exact. Two
 * `DownloadCounts` on two stores of one database stand for two servers; each flushes many
 * times while the other does (a tiny batch size), and the sums must be every download
 * counted once, whatever the interleaving.
 *
 * The mutations this catches: a flush that writes the batch's value instead of adding it
 * (`downloads = n`: the servers overwrite each other), one that forgets to clear what it
 * wrote (counted twice), one that drops a failed batch instead of keeping it, and a stop
 * that does not write what is pending.
 */
export function downloadCountsContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`download counts contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let counter = 0;
    const reported: unknown[] = [];
    const report = (error: unknown) => reported.push(error);

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      reported.length = 0;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const file = async (ownerId: number) =>
      store.files.create({
        id: `F${String(++counter).padStart(9, '0')}`,
        ownerId,
        folderId: null,
        name: 'counted.bin',
        size: 1000,
        sha256: 'a'.repeat(64),
        deleteHash: 'd'.repeat(64),
        createdAt: T0,
      });

    test('downloads counted on two servers at once, flushed in small batches while both run: exact starts, bytes and days', async () => {
      const peer = await harness.openPeer();
      const owner = await contractAccount(store, `counter${++counter}`);
      const files = [await file(owner.id), await file(owner.id)];
      let now = T0;
      // Both servers count both files, the first more often.
      const pick = (i: number) => (i % 3 === 0 ? 1 : 0);
      // Each server's counts flush every 3 downloads: dozens of flushes racing the other's.
      const servers = [store, peer].map((s) => new DownloadCounts({ store: s, clock: () => now, report, flushMs: 5, flushEvents: 3 }));
      const downloads = 120;
      // Past 2^32 bytes in all, so a 32-bit column or a float sum would show.
      const bytes = (i: number) => 70_000_000 + i;
      const race = (from: number, to: number) =>
        Promise.all(
          Array.from({ length: to - from }, async (_, n) => {
            const i = from + n;
            // Spread over the event loop's turns, so flushes interleave with counting.
            await new Promise((resolve) => setTimeout(resolve, i % 7));
            servers[i % 2]!.recordStart(files[pick(i)]!.id);
            servers[i % 2]!.recordBytesServed(files[pick(i)]!.id, bytes(i));
          }),
        );
      await race(0, downloads / 2);
      // The second half is counted on the next day (downloads going on past midnight).
      now = T0 + DAY_MS;
      await race(downloads / 2, downloads);
      await Promise.all(servers.map((counts) => counts.stop()));
      assert.deepEqual(reported, [], 'no flush failed');

      const expectedStarts = new Map<string, number>();
      for (let i = 0; i < downloads; i++) {
        const id = files[pick(i)]!.id;
        expectedStarts.set(id, (expectedStarts.get(id) ?? 0) + 1);
      }
      for (const [id, starts] of expectedStarts) {
        const [row] = await store.files.byIds([id]);
        assert.equal(row!.downloads, starts, `${id}: every start counted once`);
        assert.equal(row!.lastDownloadAt, T0 + DAY_MS, `${id}: the latest start's time`);
      }
      const total = Array.from({ length: downloads }, (_, i) => bytes(i)).reduce((a, b) => a + b, 0);
      const firstHalf = Array.from({ length: downloads / 2 }, (_, i) => bytes(i)).reduce((a, b) => a + b, 0);
      const day = Math.floor(T0 / DAY_MS);
      assert.deepEqual(await store.servedDays.between(day, day + 1), [
        { day, bytes: firstHalf },
        { day: day + 1, bytes: total - firstHalf },
      ]);
      const stats = await store.housekeeping.stats();
      assert.equal(stats.downloads, downloads, 'the starts of both servers, once each');
      assert.equal(stats.bytesServed, total, "the files' totals agree with the days'");
    });

    test('a graceful stop writes what is pending at once; nothing is written before the interval or the batch size', async () => {
      const owner = await contractAccount(store, `counter${++counter}`);
      const { id } = await file(owner.id);
      const counts = new DownloadCounts({ store, clock: () => T0, report, flushMs: 3_600_000, flushEvents: 1000 });
      counts.recordStart(id);
      counts.recordBytesServed(id, 1000);
      counts.recordStart(id);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await store.files.byIds([id]))[0]!.downloads, 0, 'still in memory: no write per download');
      await counts.stop();
      const [row] = await store.files.byIds([id]);
      assert.equal(row!.downloads, 2);
      assert.equal(row!.lastDownloadAt, T0);
      assert.deepEqual(await store.servedDays.between(Math.floor(T0 / DAY_MS), Math.floor(T0 / DAY_MS)), [{ day: Math.floor(T0 / DAY_MS), bytes: 1000 }]);
      assert.equal((await store.housekeeping.stats()).bytesServed, 1000);
    });

    test('a later stamp is never replaced by an earlier one (servers flushing out of order)', async () => {
      const peer = await harness.openPeer();
      const owner = await contractAccount(store, `counter${++counter}`);
      const { id } = await file(owner.id);
      const late = new DownloadCounts({ store, clock: () => T0 + 9, report, flushMs: 3_600_000 });
      const early = new DownloadCounts({ store: peer, clock: () => T0 + 5, report, flushMs: 3_600_000 });
      late.recordStart(id);
      early.recordStart(id);
      await late.stop();
      await early.stop();
      const [row] = await store.files.byIds([id]);
      assert.equal(row!.downloads, 2);
      assert.equal(row!.lastDownloadAt, T0 + 9);
    });

    test('a failed flush keeps its counts: the next one writes them with those taken meanwhile', async () => {
      const owner = await contractAccount(store, `counter${++counter}`);
      const { id } = await file(owner.id);
      let failNext = true;
      // The store's own transaction, made to fail once after writing: its writes roll back.
      const failing: MetadataStore = Object.create(store, {
        transaction: {
          value: <T>(work: Parameters<MetadataStore['transaction']>[0]) =>
            store.transaction(async (repos) => {
              const result = await work(repos);
              if (failNext) {
                failNext = false;
                throw new Error('the database went away');
              }
              return result as T;
            }),
        },
      });
      const counts = new DownloadCounts({ store: failing, clock: () => T0, report, flushMs: 3_600_000 });
      counts.recordStart(id);
      counts.recordBytesServed(id, 700);
      await assert.rejects(counts.flush(), /the database went away/);
      assert.equal((await store.files.byIds([id]))[0]!.downloads, 0, 'the failed batch rolled back');
      counts.recordStart(id);
      counts.recordBytesServed(id, 300);
      await counts.stop();
      assert.deepEqual(reported, []);
      const [row] = await store.files.byIds([id]);
      assert.equal(row!.downloads, 2);
      assert.equal((await store.housekeeping.stats()).bytesServed, 1000);
    });
  });
}
