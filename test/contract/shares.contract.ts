import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore, ShareCountRefusal, ShareRecord } from '../../src/db/repositories/repositories.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-21T10:04:05Z');

/**
 * The suite every dialect must pass for the exact download count of shares (issue 25):
 * `countDownload` is one conditional UPDATE, so counts raced from two stores on the same
 * database (two servers) never pass `max_downloads`, and a refusal says why. Expected
 * values come from the rules ("30 simultaneous downloads of a share with
 * max_downloads=5 ... give exactly 5 downloads"), not from the code.
 *
 * The mutation this catches: reading `downloads`, comparing in JavaScript, then writing
 * `downloads + 1` (or the read value + 1) in a second statement. On PostgreSQL two
 * servers then both read 4 and both count; the race below sees 6 or more successes.
 */
export function sharesContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`shares contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let counter = 0;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const owner = async () =>
      (
        await store.accounts.create({
          login: `sharer${++counter}`,
          passwordHash: 'scrypt$1$1$1$c2FsdA==$aGFzaA==',
          name: 'Ada',
          email: 'ada@example.com',
          premiumStart: null,
          premiumEnd: null,
          trafficLeft: 0,
          isOperator: false,
          createdAt: T0,
        })
      ).id;
    const share = async (ownerId: number, fields: Partial<ShareRecord> = {}) =>
      store.shares.create({
        id: `share${String(++counter).padStart(17, '0')}`,
        ownerId,
        fileId: 'FILE000001',
        folderId: null,
        passwordHash: null,
        expiresAt: null,
        maxDownloads: null,
        fast: false,
        createdAt: T0 + counter,
        ...fields,
      });

    test('30 counts raced from two stores on one database: exactly max_downloads succeed, the rest are "limit"', async () => {
      const peer = await harness.openPeer();
      const ownerId = await owner();
      for (const [runs, max] of [
        [30, 5],
        [40, 1],
        [24, 23],
      ] as const) {
        const { id } = await share(ownerId, { maxDownloads: max });
        const stores = [store, peer];
        const outcomes = await Promise.all(Array.from({ length: runs }, (_, i) => stores[i % 2]!.shares.countDownload(id, T0)));
        const counted = outcomes.filter((outcome) => outcome === null).length;
        assert.equal(counted, max, `exactly ${max} of ${runs} counted`);
        assert.deepEqual(
          outcomes.filter((outcome) => outcome !== null),
          Array.from({ length: runs - max }, (): ShareCountRefusal => 'limit'),
        );
        assert.equal((await store.shares.byId(id))!.downloads, max, 'the stored count is the limit');
        assert.equal((await peer.shares.byId(id))!.downloads, max, 'and the other server sees the same');
      }
    });

    test('unlimited shares count every download, from both stores', async () => {
      const peer = await harness.openPeer();
      const { id } = await share(await owner());
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? peer : store).shares.countDownload(id, T0)));
      assert.deepEqual(
        outcomes,
        Array.from({ length: 20 }, () => null),
      );
      assert.equal((await store.shares.byId(id))!.downloads, 20);
    });

    test('refusals say why: unknown and revoked are not-found, expired from its very millisecond, and nothing is counted', async () => {
      const ownerId = await owner();
      assert.equal(await store.shares.countDownload('nosuchshare00000000000', T0), 'not-found');
      const expiring = await share(ownerId, { expiresAt: T0 + 1000, maxDownloads: 3 });
      assert.equal(await store.shares.countDownload(expiring.id, T0 + 999), null, 'counted a millisecond before');
      assert.equal(await store.shares.countDownload(expiring.id, T0 + 1000), 'expired', 'expired at its moment');
      assert.equal(await store.shares.countDownload(expiring.id, T0 + 5000), 'expired');
      assert.equal((await store.shares.byId(expiring.id))!.downloads, 1);

      const revoked = await share(ownerId, { maxDownloads: 1 });
      assert.equal(await store.shares.revoke(revoked.id, ownerId + 1000, T0), false, 'another owner cannot revoke it');
      assert.equal(await store.shares.revoke(revoked.id, ownerId, T0), true);
      assert.equal(await store.shares.revoke(revoked.id, ownerId, T0), false, 'once');
      assert.equal(await store.shares.countDownload(revoked.id, T0), 'not-found');
      assert.equal((await store.shares.byId(revoked.id))!.downloads, 0);

      // Revoked and expired both: revoked wins (the link is gone, not merely over).
      const both = await share(ownerId, { expiresAt: T0 });
      await store.shares.revoke(both.id, ownerId, T0);
      assert.equal(await store.shares.countDownload(both.id, T0 + 1), 'not-found');
    });

    test('change keeps the count, raises or lifts the limit; a revoked share cannot be changed', async () => {
      const ownerId = await owner();
      const { id } = await share(ownerId, { maxDownloads: 2 });
      assert.equal(await store.shares.countDownload(id, T0), null);
      assert.equal(await store.shares.countDownload(id, T0), null);
      assert.equal(await store.shares.countDownload(id, T0), 'limit');
      assert.equal(await store.shares.change(id, ownerId + 1000, { maxDownloads: 3 }), null, 'another owner cannot change it');
      const raised = await store.shares.change(id, ownerId, { maxDownloads: 3, expiresAt: T0 + 10, passwordHash: 'h', fast: true });
      assert.deepEqual(
        { downloads: raised?.downloads, max: raised?.maxDownloads, exp: raised?.expiresAt, hash: raised?.passwordHash, fast: raised?.fast },
        { downloads: 2, max: 3, exp: T0 + 10, hash: 'h', fast: true },
      );
      assert.equal(await store.shares.countDownload(id, T0), null);
      assert.equal(await store.shares.countDownload(id, T0), 'limit');
      assert.equal((await store.shares.change(id, ownerId, { maxDownloads: null, expiresAt: null }))?.maxDownloads, null);
      assert.equal(await store.shares.countDownload(id, T0 + 100), null);
      assert.equal((await store.shares.byId(id))!.downloads, 4);
      await store.shares.revoke(id, ownerId, T0);
      assert.equal(await store.shares.change(id, ownerId, { maxDownloads: 10 }), null);
    });

    test("list: the owner's live shares, newest first, keyset pages", async () => {
      const a = await owner();
      const b = await owner();
      const mine: ShareRecord[] = [];
      for (let i = 0; i < 5; i++) mine.push(await share(a, { createdAt: T0 + (i < 2 ? 0 : i) }));
      await share(b);
      await store.shares.revoke(mine[3]!.id, a, T0);
      const expected = [mine[4]!, mine[2]!, ...[mine[0]!, mine[1]!].sort((x, y) => (x.id < y.id ? 1 : -1))].map((s) => s.id);
      const first = await store.shares.list({ ownerId: a, limit: 2 });
      const last = first.at(-1)!;
      const second = await store.shares.list({ ownerId: a, limit: 10, before: { createdAt: last.createdAt, id: last.id } });
      assert.deepEqual(
        [...first, ...second].map((s) => s.id),
        expected,
      );
    });
  });
}
