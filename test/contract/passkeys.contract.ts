import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore, PasskeyRecord } from '../../src/db/repositories/repositories.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-28T01:00:00Z');

/**
 * The suite every dialect must pass for passkeys (issue 26): a credential id is registered
 * once (to one account), rename and remove touch only the owner's passkeys, and the
 * signature counter only moves forward in ONE conditional statement. The mutations this
 * catches: recordUse as a read then an unconditional UPDATE (two servers accepting the
 * same cloned assertion both win), and rename/remove by id alone (anyone's passkey).
 */
export function passkeysContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`passkeys contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let ada: number;
    let bob: number;
    let counter = 0;

    const newAccount = async (login: string) => (await contractAccount(store, `${login}${++counter}`, T0)).id;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      ada = await newAccount('ada');
      bob = await newAccount('bob');
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const passkey = (accountId: number, fields: Partial<PasskeyRecord> = {}): Omit<PasskeyRecord, 'lastUsedAt'> => ({
      id: `cred-${++counter}-${'x'.repeat(40)}`,
      accountId,
      name: `Passkey ${counter}`,
      publicKey: 'pQECAyYgASFYIA',
      counter: 0,
      transports: ['internal', 'hybrid'],
      backedUp: false,
      createdAt: T0 + counter,
      ...fields,
    });

    test('create, byId and listForAccount give back what was stored; ids are unique across accounts', async () => {
      const first = passkey(ada, { counter: 7, backedUp: true });
      const second = passkey(ada, { transports: [] });
      await store.passkeys.create(first);
      await store.passkeys.create(second);
      await store.passkeys.create(passkey(bob));
      assert.deepEqual(await store.passkeys.byId(first.id), { ...first, lastUsedAt: null });
      assert.deepEqual(await store.passkeys.byId(second.id), { ...second, lastUsedAt: null });
      assert.equal(await store.passkeys.byId('unknown'), null);
      assert.deepEqual(
        (await store.passkeys.listForAccount(ada)).map((p) => p.id),
        [first.id, second.id],
      );
      await assert.rejects(store.passkeys.create({ ...first, accountId: bob }), { name: 'DuplicateError' });
      assert.equal((await store.passkeys.byId(first.id))?.accountId, ada, 'the first registration stays');
    });

    test('rename and remove act only on the owner’s passkey: another account’s id changes nothing', async () => {
      const adas = passkey(ada);
      await store.passkeys.create(adas);
      assert.equal(await store.passkeys.rename(adas.id, bob, 'stolen'), false);
      assert.equal(await store.passkeys.remove(adas.id, bob), false);
      assert.equal((await store.passkeys.byId(adas.id))?.name, adas.name);
      assert.equal(await store.passkeys.rename(adas.id, ada, 'Laptop'), true);
      assert.equal((await store.passkeys.byId(adas.id))?.name, 'Laptop');
      assert.equal(await store.passkeys.remove(adas.id, ada), true);
      assert.equal(await store.passkeys.byId(adas.id), null);
      assert.equal(await store.passkeys.remove(adas.id, ada), false, 'gone once');
    });

    test('recordUse moves the counter only forward, touches last_used_at, and keeps 0 for authenticators that do not count', async () => {
      const counting = passkey(ada, { counter: 5 });
      await store.passkeys.create(counting);
      assert.equal(await store.passkeys.recordUse(counting.id, 5, false, T0 + 10), false, 'the same counter again');
      assert.equal(await store.passkeys.recordUse(counting.id, 4, false, T0 + 10), false, 'a counter that went back');
      assert.equal((await store.passkeys.byId(counting.id))?.lastUsedAt, null, 'a refused use is not recorded');
      assert.equal(await store.passkeys.recordUse(counting.id, 9, true, T0 + 20), true);
      assert.deepEqual(await store.passkeys.byId(counting.id), { ...counting, counter: 9, backedUp: true, lastUsedAt: T0 + 20 });
      // Counters are unsigned 32-bit (WebAuthn §6.1): past 2^31 on both engines.
      assert.equal(await store.passkeys.recordUse(counting.id, 2 ** 32 - 1, true, T0 + 30), true);
      assert.equal((await store.passkeys.byId(counting.id))?.counter, 2 ** 32 - 1);

      const synced = passkey(ada);
      await store.passkeys.create(synced);
      assert.equal(await store.passkeys.recordUse(synced.id, 0, true, T0 + 40), true);
      assert.equal(await store.passkeys.recordUse(synced.id, 0, true, T0 + 50), true);
      assert.equal((await store.passkeys.byId(synced.id))?.lastUsedAt, T0 + 50);
      assert.equal(await store.passkeys.recordUse('unknown', 1, false, T0), false);
    });

    test('two servers recording the same new counter: exactly one wins, in each of 5 rounds', async () => {
      const peer = await harness.openPeer();
      const row = passkey(ada, { counter: 1 });
      await store.passkeys.create(row);
      for (let round = 0; round < 5; round++) {
        const next = 10 * (round + 1);
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? peer : store).passkeys.recordUse(row.id, next, false, T0 + next)));
        assert.equal(results.filter(Boolean).length, 1, `round ${round}: ${results.filter(Boolean).length} servers accepted counter ${next}`);
        assert.equal((await store.passkeys.byId(row.id))?.counter, next);
      }
    });
  });
}
