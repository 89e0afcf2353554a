import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore, UploadRequestRecord } from '../../src/db/repositories/repositories.js';
import { ApiError } from '../../src/domain/errors.js';
import { LEASE_MS } from '../../src/limits/reservations-service.js';
import { type GrantedSlot, RequestSlots, settleSlot } from '../../src/sharing/request-slots.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-21T10:04:05Z');

/**
 * The suite every dialect must pass for the exact limits of upload requests (issue 25):
 * max_files and max_bytes hold when uploads race from two servers on one database,
 * a slot becomes the counts in the file's transaction once, a released or lapsed slot
 * counts no more. Expected values come from the rules, not from the code.
 *
 * The mutations each test catches: without `locks.request` in `reserve`, the race of 12
 * gives more than 3 slots on PostgreSQL; without the re-check in `settleSlot`, a lapsed
 * slot's upload is stored past the limit; without `dropLapsedSlots` (or the lease filter
 * of slotsInFlight), a dead server's slot blocks the request for ever.
 */
export function uploadRequestSlotsContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`upload request slots contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let now = T0;
    const clock = () => now;
    let reported: string[] = [];
    let slotServices: RequestSlots[] = [];
    let owner = 0;
    let requestCounter = 0;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      now = T0;
      reported = [];
      slotServices = [];
      owner = (
        await store.accounts.create({
          login: 'requester',
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
    });
    afterEach(async () => {
      try {
        for (const slots of slotServices) slots.stop();
        assert.deepEqual(reported, [], 'nothing was reported');
      } finally {
        await harness.cleanup();
      }
    });

    const slotsOn = (on: MetadataStore, renewMs?: number) => {
      const slots = new RequestSlots({ store: on, clock, report: (_error, message) => reported.push(message), ...(renewMs ? { renewMs } : {}) });
      slotServices.push(slots);
      return slots;
    };
    const request = async (limits: Partial<Pick<UploadRequestRecord, 'maxFiles' | 'maxBytes' | 'maxFileSize'>>) =>
      store.uploadRequests.create({
        id: `Req${String(++requestCounter).padStart(19, '0')}`,
        ownerId: owner,
        folderId: null,
        title: 'Photos',
        message: '',
        passwordHash: null,
        expiresAt: null,
        maxFiles: limits.maxFiles ?? null,
        maxBytes: limits.maxBytes ?? null,
        maxFileSize: limits.maxFileSize ?? null,
        createdAt: now,
      });
    const codeOf = (outcome: PromiseSettledResult<unknown>) =>
      outcome.status === 'fulfilled'
        ? 'granted'
        : outcome.reason instanceof ApiError
          ? `${outcome.reason.code} ${outcome.reason.status}`
          : String(outcome.reason);
    const counts = async (id: string) => {
      const row = (await store.uploadRequests.byId(id))!;
      return { files: row.files, bytes: row.bytes, inFlight: await store.uploadRequests.slotsInFlight(id, now) };
    };
    const settle = (on: MetadataStore, id: string, slot: GrantedSlot, size: number) => on.transaction((repos) => settleSlot(repos, now, id, slot.id, size));
    const refusedWith = async (work: Promise<unknown>, code: string, status: number) => {
      await assert.rejects(work, (error: unknown) => error instanceof ApiError && error.code === code && error.status === status);
    };

    test('12 uploads racing from two servers into max_files=3: exactly 3 slots, 9 errorUploadLimit; stored, they fill it', async () => {
      const peer = await harness.openPeer();
      const [alpha, beta] = [slotsOn(store), slotsOn(peer)];
      const req = await request({ maxFiles: 3 });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? beta : alpha).reserve(req.id, { declaredBytes: 100, exact: false })),
      );
      const codes = outcomes.map(codeOf);
      assert.equal(codes.filter((code) => code === 'granted').length, 3, codes.join(', '));
      assert.equal(codes.filter((code) => code === 'errorUploadLimit 429').length, 9, codes.join(', '));
      assert.deepEqual(await counts(req.id), { files: 0, bytes: 0, inFlight: { files: 3, bytes: 300 } });

      const granted = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      // The three settle from both servers at once, each in its own transaction.
      await Promise.all(granted.map((slot, i) => settle(i % 2 ? peer : store, req.id, slot, 40 + i)));
      assert.deepEqual(await counts(req.id), { files: 3, bytes: 40 + 41 + 42, inFlight: { files: 0, bytes: 0 } });
      await refusedWith(alpha.reserve(req.id, { exact: false }), 'errorUploadLimit', 429);
    });

    test('max_bytes: exact lengths race for the bytes; an upper bound gets what is left; nothing past the limit is stored', async () => {
      const peer = await harness.openPeer();
      const [alpha, beta] = [slotsOn(store), slotsOn(peer)];
      const req = await request({ maxBytes: 350 });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? beta : alpha).reserve(req.id, { declaredBytes: 100, exact: true })),
      );
      assert.deepEqual(outcomes.map(codeOf).filter((code) => code === 'granted').length, 3);
      assert.deepEqual((await counts(req.id)).inFlight, { files: 3, bytes: 300 });
      // An upper bound of 200 (a multipart body) gets the 50 bytes left; an exact 51 does not fit.
      await refusedWith(alpha.reserve(req.id, { declaredBytes: 51, exact: true }), 'errorUploadLimit', 429);
      const tail = await beta.reserve(req.id, { declaredBytes: 200, exact: false });
      assert.equal(tail.bytes, 50);
      // Now every byte is held: even an unknown length is refused.
      await refusedWith(alpha.reserve(req.id, { exact: false }), 'errorUploadLimit', 429);
      const granted = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      assert.deepEqual(
        granted.map((slot) => slot.bytes),
        [100, 100, 100],
      );
      for (const slot of granted) await settle(store, req.id, slot, 100);
      await settle(peer, req.id, tail, 50);
      assert.deepEqual(await counts(req.id), { files: 4, bytes: 350, inFlight: { files: 0, bytes: 0 } });
    });

    test('an exact length over max_file_size is errorFileSize before any slot; a stored size over it rolls back', async () => {
      const slots = slotsOn(store);
      const req = await request({ maxFileSize: 1000 });
      await refusedWith(slots.reserve(req.id, { declaredBytes: 1001, exact: true }), 'errorFileSize', 413);
      const slot = await slots.reserve(req.id, { declaredBytes: 5000, exact: false });
      assert.equal(slot.bytes, null, 'no max_bytes: nothing to cut at');
      await refusedWith(settle(store, req.id, slot, 1001), 'errorFileSize', 413);
      assert.deepEqual(await counts(req.id), { files: 0, bytes: 0, inFlight: { files: 1, bytes: 5000 } }, 'the settle rolled back whole');
    });

    test('a released slot frees its place at once; releasing twice is harmless', async () => {
      const slots = slotsOn(store);
      const req = await request({ maxFiles: 1, maxBytes: 10 });
      const first = await slots.reserve(req.id, { exact: false });
      assert.equal(first.bytes, 10, 'an unknown length holds every byte still allowed');
      await refusedWith(slots.reserve(req.id, { exact: false }), 'errorUploadLimit', 429);
      await slots.release(first.id);
      await slots.release(first.id);
      const second = await slots.reserve(req.id, { declaredBytes: 4, exact: true });
      await settle(store, req.id, second, 4);
      assert.deepEqual(await counts(req.id), { files: 1, bytes: 4, inFlight: { files: 0, bytes: 0 } });
    });

    test('a dead server’s slot counts until its lease runs out, then is deleted; its late upload is checked again', async () => {
      const peer = await harness.openPeer();
      const dead = slotsOn(peer);
      const alive = slotsOn(store);
      const req = await request({ maxFiles: 1 });
      const orphan = await dead.reserve(req.id, { declaredBytes: 7, exact: true });
      dead.stop();
      now = T0 + LEASE_MS;
      await refusedWith(alive.reserve(req.id, { exact: false }), 'errorUploadLimit', 429);
      now = T0 + LEASE_MS + 1;
      const taker = await alive.reserve(req.id, { declaredBytes: 3, exact: true });
      assert.equal((await store.uploadRequests.takeSlot(orphan.id)) === null, true, 'the lapsed slot was deleted by the check');
      // The stalled server wakes and finishes: its place is taken, so its file is refused.
      await refusedWith(settle(peer, req.id, orphan, 7), 'errorUploadLimit', 429);
      await settle(store, req.id, taker, 3);
      assert.deepEqual(await counts(req.id), { files: 1, bytes: 3, inFlight: { files: 0, bytes: 0 } });
    });

    test('a lapsed slot whose place nobody took is still stored (the re-check finds room)', async () => {
      const slots = slotsOn(store);
      const req = await request({ maxFiles: 2, maxBytes: 100 });
      const slot = await slots.reserve(req.id, { declaredBytes: 60, exact: true });
      slots.stop();
      now = T0 + 10 * LEASE_MS;
      await settle(store, req.id, slot, 60);
      assert.deepEqual(await counts(req.id), { files: 1, bytes: 60, inFlight: { files: 0, bytes: 0 } });
    });

    test('the holder renews its slots’ leases; a detached slot keeps its own lease', async () => {
      const slots = slotsOn(store, 5);
      const req = await request({});
      const held = await slots.reserve(req.id, { exact: false });
      const detached = await slots.reserve(
        req.id,
        { declaredBytes: 9, exact: true },
        { until: T0 + 86_400_000, uploadId: 'u'.repeat(32) },
        async (repos, id) => {
          assert.equal((await repos.uploadRequests.slotsInFlight(req.id, now)).files, 2, `within sees slot ${id} in the same transaction`);
        },
      );
      assert.ok(held.id !== detached.id);
      // Past the first lease only a renewed slot still counts; the detached one always does.
      const later = T0 + LEASE_MS + 500;
      assert.deepEqual(await store.uploadRequests.slotsInFlight(req.id, later), { files: 1, bytes: 9 });
      now = T0 + 1000;
      const deadline = Date.now() + 5000;
      while ((await store.uploadRequests.slotsInFlight(req.id, later)).files < 2) {
        assert.ok(Date.now() < deadline, 'the lease was renewed within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      slots.stored(held.id);
      assert.deepEqual(await store.uploadRequests.slotOfUpload('u'.repeat(32)), {
        id: detached.id,
        requestId: req.id,
        bytes: 9,
        leaseUntil: T0 + 86_400_000,
        createdAt: T0,
        uploadId: 'u'.repeat(32),
      });
      assert.equal(await store.uploadRequests.slotOfUpload('v'.repeat(32)), null);
      // The upload stays bound to its request after its slot goes, until it is forgotten.
      assert.equal(await store.uploadRequests.requestOfUpload('u'.repeat(32)), req.id);
      await store.transaction((repos) => settleSlot(repos, now, req.id, detached.id, 9));
      assert.equal(await store.uploadRequests.slotOfUpload('u'.repeat(32)), null);
      assert.equal(await store.uploadRequests.requestOfUpload('u'.repeat(32)), req.id);
      await store.uploadRequests.unbindUpload('u'.repeat(32));
      assert.equal(await store.uploadRequests.requestOfUpload('u'.repeat(32)), null);
      assert.equal(await store.uploadRequests.requestOfUpload('v'.repeat(32)), null);
    });

    test('a closed or unknown request takes no slot, and a slot of a request closed meanwhile stores nothing', async () => {
      const slots = slotsOn(store);
      const req = await request({});
      const slot = await slots.reserve(req.id, { exact: false });
      assert.equal(await store.uploadRequests.close(req.id), true);
      assert.equal(await store.uploadRequests.close(req.id), false, 'closing twice');
      await refusedWith(slots.reserve(req.id, { exact: false }), 'errorShareNotFound', 404);
      await refusedWith(slots.reserve('Unknown000000000000000', { exact: false }), 'errorShareNotFound', 404);
      await refusedWith(settle(store, req.id, slot, 5), 'errorShareNotFound', 404);
      assert.equal((await counts(req.id)).files, 0);
    });
  });
}
