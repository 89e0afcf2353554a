import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-28T01:00:00Z');
const STEP = Math.floor(T0 / 30_000);
const hash = (n: number) => n.toString(16).padStart(64, '0');

/**
 * The suite every dialect must pass for TOTP factors and recovery codes (issue 26): a time
 * step is accepted once and a recovery code spent once, of 20 concurrent tries on two
 * servers; an unconfirmed factor never verifies; a new set-up never replaces a confirmed
 * factor. The mutations this catches: `useTotpStep` or `useRecoveryCode` as a SELECT then
 * an UPDATE (both servers read the old row, both accept the code), and a `where confirmed`
 * left out.
 */
export function secondFactorsContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`second factors contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let accountId: number;
    let counter = 0;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      accountId = (await contractAccount(store, `user${++counter}`, T0)).id;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const confirmed = async () => {
      assert.equal(await store.secondFactors.beginTotp(accountId, 'sealed', T0), true);
      assert.equal(await store.secondFactors.confirmTotp(accountId, STEP, T0), true);
    };

    test('a time step is accepted once: of 20 concurrent tries on two servers, exactly one wins', async () => {
      await confirmed();
      const peer = await harness.openPeer();
      for (let round = 1; round <= 5; round++) {
        const tries = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? peer : store).secondFactors.useTotpStep(accountId, STEP + round)));
        assert.equal(tries.filter(Boolean).length, 1, `round ${round}: ${tries.filter(Boolean).length} tries accepted the step`);
      }
      assert.equal((await store.secondFactors.totp(accountId))?.lastStep, STEP + 5);
      assert.equal(await store.secondFactors.useTotpStep(accountId, STEP + 4), false, 'an older step is refused');
    });

    test('a recovery code is spent once: of 20 concurrent tries on two servers, exactly one wins', async () => {
      await confirmed();
      await store.secondFactors.replaceRecoveryCodes(accountId, [hash(1), hash(2), hash(3)], T0);
      const peer = await harness.openPeer();
      for (const code of [hash(1), hash(2)]) {
        const tries = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? peer : store).secondFactors.useRecoveryCode(accountId, code, T0 + 1)));
        assert.equal(tries.filter(Boolean).length, 1, `${tries.filter(Boolean).length} tries spent the code`);
      }
      assert.equal(await store.secondFactors.recoveryCodesLeft(accountId), 1);
      assert.equal(await store.secondFactors.useRecoveryCode(accountId + 1, hash(3), T0), false, "another account's id does not spend it");
      await store.secondFactors.replaceRecoveryCodes(accountId, [hash(4)], T0);
      assert.equal(await store.secondFactors.useRecoveryCode(accountId, hash(3), T0), false, 'replaced codes stop working');
      assert.equal(await store.secondFactors.recoveryCodesLeft(accountId), 1);
    });

    test('an unconfirmed factor never verifies, and a new set-up replaces it', async () => {
      assert.equal(await store.secondFactors.beginTotp(accountId, 'first', T0), true);
      assert.equal(await store.secondFactors.useTotpStep(accountId, STEP), false);
      assert.equal(await store.secondFactors.beginTotp(accountId, 'second', T0 + 1), true);
      const factor = await store.secondFactors.totp(accountId);
      assert.deepEqual(factor, { accountId, sealedSecret: 'second', confirmedAt: null, lastStep: 0, createdAt: T0 + 1 });
      // A code of the secret a page showed confirms only that secret, never one begun since.
      assert.equal(await store.secondFactors.confirmTotp(accountId, STEP, T0 + 2, 'first'), false);
      assert.equal(await store.secondFactors.confirmTotp(accountId, STEP, T0 + 2, 'second'), true);
      assert.equal(await store.secondFactors.confirmTotp(accountId, STEP + 1, T0 + 2), false, 'confirmed once');
      assert.equal(await store.secondFactors.useTotpStep(accountId, STEP), false, 'the confirming code is spent');
    });

    test('a new set-up never replaces a confirmed factor; remove takes the factor and the codes', async () => {
      await confirmed();
      await store.secondFactors.replaceRecoveryCodes(accountId, [hash(7)], T0);
      assert.equal(await store.secondFactors.beginTotp(accountId, 'attacker', T0 + 1), false);
      assert.equal((await store.secondFactors.totp(accountId))?.sealedSecret, 'sealed');
      assert.equal((await store.accounts.signInMethods(accountId)).totp, true);
      assert.equal((await store.operatorQueries.signInMethodsOf([accountId, accountId + 99])).get(accountId)?.totp, true);
      assert.equal(await store.secondFactors.remove(accountId), true);
      assert.equal(await store.secondFactors.totp(accountId), null);
      assert.equal(await store.secondFactors.recoveryCodesLeft(accountId), 0);
      assert.equal(await store.secondFactors.remove(accountId), false);
      assert.deepEqual((await store.operatorQueries.signInMethodsOf([accountId])).get(accountId), { totp: false, passkeys: 0, identities: 0 });
    });
  });
}
