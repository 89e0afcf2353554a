import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { FileStatus } from '../../src/domain/types.js';
import { SETTLE_MS, StatsHistoryService } from '../../src/services/stats-history-service.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-11-01T00:00:00Z');
const digest = (c: string) => c.repeat(64);

/**
 * The console's day figures kept per finished day (site_days, migration 0017) and each
 * day computed from the one before and its own changes (liveBytesChange), on every
 * dialect: they must say what the whole-table sums (liveBytesAt, dailyUploads) say, also
 * when servers compute and keep the same days at once while files come and go.
 * Mutations that break it: a day kept before it settles (the late commit below is lost);
 * liveBytesChange reading only created rows (deletions lost) or counting a content by
 * changed rows instead of by "some file of it live" (de-duplication lost); keep() that
 * overwrites or fails on a day another server kept.
 */
export function siteDaysContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`site days: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let owner: number;
    let n = 0;
    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      owner = (await contractAccount(store, 'a', T0)).id;
    });
    afterEach(() => harness.cleanup());

    const file = (on: MetadataStore, sha: string, size: number, createdAt: number) =>
      on.files.create({
        id: `F${String(++n).padStart(9, '0')}`,
        ownerId: owner,
        folderId: null,
        name: `f${n}`,
        size,
        sha256: digest(sha),
        deleteHash: digest('d'),
        createdAt,
      });
    const remove = (on: MetadataStore, id: string, at: number) => on.files.setStatus(id, [FileStatus.Active, FileStatus.Blocked], FileStatus.Deleted, at);

    /** What the whole table says about each day of `days` ending today (as the service did before 0017). */
    const fromScratch = async (now: number, days: number) => {
      const today = Math.floor(now / DAY);
      const uploads = new Map((await store.operatorQueries.dailyUploads((today - days + 1) * DAY, (today + 1) * DAY)).map((d) => [d.day, d]));
      const expected = [];
      for (let day = today - days + 1; day <= today; day++) {
        const live = await store.operatorQueries.liveBytesAt(Math.min((day + 1) * DAY - 1, now));
        const up = uploads.get(day * DAY);
        expected.push({ day: day * DAY, uploads: up?.files ?? 0, uploadedBytes: up?.bytes ?? 0, ...live });
      }
      return expected;
    };
    const shown = (days: Awaited<ReturnType<StatsHistoryService['days']>>) =>
      days.map(({ day, uploads, uploadedBytes, fileBytes, storedBytes }) => ({ day, uploads, uploadedBytes, fileBytes, storedBytes }));

    test('liveBytesChange is the difference of liveBytesAt: twins, copies, blocks and deletions', async () => {
      const a = await file(store, '1', 100, T0 + 10);
      const twin = await file(store, '1', 100, T0 + DAY + 5);
      const b = await file(store, '2', 30, T0 + DAY + 6);
      const gone = await file(store, '3', 7, T0 + DAY + 7);
      await store.files.setStatus(b.id, [FileStatus.Active], FileStatus.Blocked, T0 + DAY + 8);
      await remove(store, gone.id, T0 + 2 * DAY + 1);
      await remove(store, a.id, T0 + 2 * DAY + 2);
      await remove(store, twin.id, T0 + 3 * DAY + 3);
      const times = [T0 - 1, T0 + 10, T0 + DAY - 1, T0 + DAY + 6, T0 + 2 * DAY - 1, T0 + 2 * DAY + 1, T0 + 2 * DAY + 2, T0 + 3 * DAY + 3, T0 + 5 * DAY];
      for (const from of times) {
        for (const to of times) {
          if (to < from) continue;
          const [before, after] = [await store.operatorQueries.liveBytesAt(from), await store.operatorQueries.liveBytesAt(to)];
          assert.deepEqual(
            await store.operatorQueries.liveBytesChange(from, to),
            { fileBytes: after.fileBytes - before.fileBytes, storedBytes: after.storedBytes - before.storedBytes },
            `from ${from - T0} to ${to - T0}`,
          );
        }
      }
    });

    test('two servers computing and keeping the same days while files come and go agree with the whole table', async () => {
      const peer = await harness.openPeer();
      // Ten days of history: each day a file, a twin of another content, and a deletion (a
      // content's size is its own, as content addressing makes it).
      const made: string[] = [];
      for (let day = 0; day < 10; day++) {
        made.push((await file(store, String(day % 4), 10 + (day % 4), T0 + day * DAY + 1000)).id);
        made.push((await file(store, String((day + 1) % 4), 10 + ((day + 1) % 4), T0 + day * DAY + 2000)).id);
        if (day >= 2) await remove(store, made[2 * (day - 2)]!, T0 + day * DAY + 3000);
      }
      let now = T0 + 10 * DAY + SETTLE_MS + 60_000;
      const clock = () => now;
      const services = [new StatsHistoryService({ store, clock }), new StatsHistoryService({ store: peer, clock })];
      // Both servers open the overview at once, twice over, while both take uploads and
      // deletions of today: every day before today is kept once, by whichever came first.
      const today = T0 + 10 * DAY;
      const traffic = async (on: MetadataStore, k: number) => {
        for (let i = 0; i < 6; i++) {
          const f = await file(on, String((k + i) % 5), 10 + ((k + i) % 5), today + 10_000 + k * 100 + i);
          if (i % 2 === 1) await remove(on, f.id, today + 20_000 + k * 100 + i);
        }
      };
      const [first, second] = await Promise.all([
        services[0]!.days(12),
        services[1]!.days(12),
        traffic(store, 0),
        traffic(peer, 1),
        services[1]!.days(7),
        services[0]!.days(30),
      ]);
      const kept = await store.siteDays.between(0, Math.floor(now / DAY));
      assert.deepEqual(
        kept.map((d) => d.day),
        Array.from({ length: 29 }, (_, i) => Math.floor(today / DAY) - 29 + i),
        'every finished day of the widest range (30 days, today not finished), once',
      );
      const expected = await fromScratch(now, 12);
      // Days before today cannot have moved; today is what it was at each server's moment.
      assert.deepEqual(shown(first!).slice(0, 11), expected.slice(0, 11));
      assert.deepEqual(shown(second!).slice(0, 11), expected.slice(0, 11));
      assert.deepEqual(shown(await services[0]!.days(12)), expected, "today from yesterday's kept figures and today's changes");
      // A day later, today is kept too, with every upload and deletion of the race in it.
      now += DAY;
      assert.deepEqual(shown(await services[1]!.days(13)), await fromScratch(now, 13));
      assert.equal((await store.siteDays.between(Math.floor(today / DAY), Math.floor(today / DAY))).length, 1);
    });

    test('a day is kept only once settled: a write timed before midnight and committed after it counts', async () => {
      const day = T0 + 3 * DAY;
      await file(store, '1', 100, day + 5);
      let now = day + DAY + 1000;
      const history = new StatsHistoryService({ store, clock: () => now });
      await history.days(3);
      assert.deepEqual(await store.siteDays.between(Math.floor(day / DAY), Math.floor(day / DAY)), [], 'not settled yet: not kept');
      // An upload whose transaction took its time before midnight commits now.
      await file(store, '2', 40, day + DAY - 1);
      now = day + DAY + SETTLE_MS;
      const days = await history.days(3);
      assert.deepEqual(shown(days), await fromScratch(now, 3));
      assert.deepEqual(await store.siteDays.between(Math.floor(day / DAY), Math.floor(day / DAY)), [
        { day: Math.floor(day / DAY), uploads: 2, uploadedBytes: 140, fileBytes: 140, storedBytes: 140 },
      ]);
    });
  });
}
