import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore, NewFile } from '../../src/db/repositories/repositories.js';
import { FileStatus, isExpired } from '../../src/domain/types.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-21T10:04:05Z');
const NOW = T0 + 60_000;

/**
 * File expiry in the metadata store (issue 25), on every engine: each query of live files
 * given `liveAt` leaves out (or does not touch) a file whose expires_at is at or before it,
 * exactly as domain/types.ts isExpired decides for one row, so a file is gone from its
 * expiry on whichever way it is reached; gc's pastExpiry lists exactly those files.
 * Mutations this suite catches: `>=` for `>` in rows.ts unexpiredAt (a file lives on at its
 * own expiry moment), a query that drops the `liveAt` filter, setExpiry reviving an
 * expired file.
 */
export function fileExpiryContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`file expiry in the metadata store: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let owner: number;
    let n = 0;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      owner = (await contractAccount(store, 'ada', T0)).id;
      await store.folders.create({ id: 'FOLDER0001', ownerId: owner, parentId: null, name: 'f', createdAt: T0 });
      await store.folders.create({ id: 'FOLDER0002', ownerId: owner, parentId: null, name: 'g', createdAt: T0 });
    });
    afterEach(() => harness.cleanup());

    /** Four files in FOLDER0001: never, expired before NOW, expiring exactly at NOW, expiring after NOW. */
    async function fourFiles(): Promise<Record<'never' | 'before' | 'at' | 'after', string>> {
      const make = async (name: string, expiresAt: number | null) => {
        const row: NewFile = {
          id: `EXP${String(++n).padStart(7, '0')}`,
          ownerId: owner,
          folderId: 'FOLDER0001',
          name,
          size: 100,
          sha256: 'a'.repeat(64),
          deleteHash: 'd'.repeat(64),
          createdAt: T0 + n,
          expiresAt,
        };
        const file = await store.files.create(row);
        assert.equal(file.expiresAt, expiresAt, 'expiresAt round-trips');
        return file.id;
      };
      return { never: await make('never', null), before: await make('before', NOW - 1), at: await make('at', NOW), after: await make('after', NOW + 1) };
    }

    test('list, browse, activeTotals and folderActiveBytes leave out files expired at liveAt (and keep them without it)', async () => {
      const ids = await fourFiles();
      const live = [ids.after, ids.never].sort();
      const listed = await store.files.list({ folderId: 'FOLDER0001', states: [FileStatus.Active], liveAt: NOW, limit: 10 });
      assert.deepEqual(listed.map((f) => f.id).sort(), live);
      for (const file of listed) assert.equal(isExpired(file, NOW), false, 'the SQL rule and isExpired agree');
      assert.equal((await store.files.list({ folderId: 'FOLDER0001', states: [FileStatus.Active], limit: 10 })).length, 4, "the operator's view keeps them");
      const browsed = await store.files.browse({ ownerId: owner, states: [FileStatus.Active], sort: 'name', descending: false, liveAt: NOW, limit: 10 });
      assert.deepEqual(
        browsed.map((f) => f.name),
        ['after', 'never'],
      );
      assert.deepEqual((await store.folders.activeTotals(['FOLDER0001'], NOW)).get('FOLDER0001'), { files: 2, bytes: 200 });
      assert.deepEqual((await store.folders.activeTotals(['FOLDER0001'])).get('FOLDER0001'), { files: 4, bytes: 400 });
      assert.equal(await store.files.folderActiveBytes('FOLDER0001', NOW), 200);
      assert.equal(await store.files.folderActiveBytes('FOLDER0001', NOW - 1), 300, 'a moment earlier, the one expiring at NOW is still there');
    });

    test('moveOwned, rename and namesTaken do not touch expired files', async () => {
      const ids = await fourFiles();
      assert.equal(await store.files.moveOwned([ids.never, ids.before, ids.at, ids.after], owner, 'FOLDER0002', NOW), 2);
      assert.equal((await store.files.byId(ids.before))?.folderId, 'FOLDER0001');
      assert.equal((await store.files.byId(ids.after))?.folderId, 'FOLDER0002');
      assert.equal(await store.files.rename(ids.at, 'renamed', NOW), false);
      assert.equal(await store.files.rename(ids.after, 'renamed', NOW), true);
      const taken = await store.files.namesTaken({ ownerId: owner, folderId: 'FOLDER0001', liveAt: NOW }, ['before', 'at', 'never']);
      assert.deepEqual([...taken].sort(), [], 'the live ones moved away; the expired ones carry no name');
      assert.deepEqual([...(await store.files.namesTaken({ ownerId: owner, folderId: 'FOLDER0001' }, ['before', 'at']))].sort(), ['at', 'before']);
    });

    test('setExpiry changes a live file and never revives an expired one', async () => {
      const ids = await fourFiles();
      assert.equal(await store.files.setExpiry(ids.never, NOW + 5000, NOW), true);
      assert.equal((await store.files.byId(ids.never))?.expiresAt, NOW + 5000);
      assert.equal(await store.files.setExpiry(ids.after, null, NOW), true);
      assert.equal((await store.files.byId(ids.after))?.expiresAt, null);
      assert.equal(await store.files.setExpiry(ids.at, null, NOW), false);
      assert.equal((await store.files.byId(ids.at))?.expiresAt, NOW);
      await store.files.setStatus(ids.never, [FileStatus.Active], FileStatus.Deleted, NOW);
      assert.equal(await store.files.setExpiry(ids.never, null, NOW), false, 'a deleted file');
      assert.equal(await store.files.setExpiry('NOSUCHFILE', null, NOW), false);
    });

    test('pastExpiry lists live files at or past their expiry, soonest first, in batches; countPastExpiry counts them', async () => {
      const ids = await fourFiles();
      assert.deepEqual(await store.housekeeping.pastExpiry(NOW, 10), [ids.before, ids.at]);
      assert.deepEqual(await store.housekeeping.pastExpiry(NOW, 1), [ids.before]);
      assert.equal(await store.housekeeping.countPastExpiry(NOW), 2);
      await store.files.setStatus(ids.before, [FileStatus.Active], FileStatus.Deleted, NOW);
      assert.deepEqual(await store.housekeeping.pastExpiry(NOW, 10), [ids.at], 'deleted files are done');
      assert.equal(await store.housekeeping.countPastExpiry(NOW + 1), 2);
      // The inactivity expiry counts a file past both once when asked to.
      assert.equal(await store.housekeeping.countExpired(NOW + 10 * 60_000), 3);
      assert.equal(await store.housekeeping.countExpired(NOW + 10 * 60_000, NOW + 1), 1);
    });

    test('detachDeleted with liveAt lets a folder holding only expired files go', async () => {
      const ids = await fourFiles();
      await store.files.moveOwned([ids.never, ids.after], owner, null);
      await store.files.detachDeleted('FOLDER0001', NOW);
      assert.equal((await store.files.byId(ids.before))?.folderId, null);
      assert.equal((await store.files.byId(ids.at))?.folderId, null);
      await store.folders.remove('FOLDER0001');
      assert.equal(await store.folders.byId('FOLDER0001'), null);
    });
  });
}
