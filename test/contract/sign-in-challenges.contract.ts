import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore, SignInChallenge } from '../../src/db/repositories/repositories.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-28T01:00:00Z');

/**
 * The suite every dialect must pass for the state of sign-ins in progress (issue 26): a
 * challenge is single-use across servers (an OIDC callback opened twice, on two servers,
 * signs in once), a value of one kind is never taken as another, and an expired one is
 * worth nothing. The mutation this catches: `take` as a SELECT then a DELETE, where two
 * servers both read the row before either deletes it.
 */
export function signInChallengesContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`sign-in challenges contract: ${name}`, () => {
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

    const challenge = (fields: Partial<SignInChallenge> = {}): SignInChallenge => ({
      id: `c${String(++counter).padStart(63, '0')}`,
      kind: 'oidc',
      accountId: null,
      payload: '{"nonce":"n"}',
      createdAt: T0,
      expiresAt: T0 + 600_000,
      ...fields,
    });

    test('a challenge is taken once: of 20 concurrent takes on two servers, exactly one gets it', async () => {
      const peer = await harness.openPeer();
      for (let round = 0; round < 5; round++) {
        const row = challenge();
        await store.signInChallenges.create(row);
        const takes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? peer : store).signInChallenges.take(row.id, 'oidc', T0 + 1)));
        const winners = takes.filter((taken) => taken !== null);
        assert.equal(winners.length, 1, `round ${round}: ${winners.length} takers got the challenge`);
        assert.deepEqual(winners[0], row);
        assert.equal(await store.signInChallenges.peek(row.id, 'oidc', T0 + 1), null, 'gone after the take');
      }
    });

    test('peek leaves the challenge; setPayload replaces what the next step reads', async () => {
      const row = challenge({ kind: 'second-factor', accountId: 7 });
      await store.signInChallenges.create(row);
      assert.deepEqual(await store.signInChallenges.peek(row.id, 'second-factor', T0 + 1), row);
      assert.equal(await store.signInChallenges.setPayload(row.id, '{"wrong":1}'), true);
      assert.equal((await store.signInChallenges.peek(row.id, 'second-factor', T0 + 1))?.payload, '{"wrong":1}');
      assert.equal((await store.signInChallenges.take(row.id, 'second-factor', T0 + 1))?.payload, '{"wrong":1}');
      assert.equal(await store.signInChallenges.setPayload(row.id, '{}'), false, 'nothing to update once taken');
    });

    test('a value issued for one step is not accepted by another, and is not spent by trying', async () => {
      const row = challenge({ kind: 'passkey-register' });
      await store.signInChallenges.create(row);
      assert.equal(await store.signInChallenges.peek(row.id, 'passkey-sign-in', T0 + 1), null);
      assert.equal(await store.signInChallenges.take(row.id, 'passkey-sign-in', T0 + 1), null);
      assert.deepEqual(await store.signInChallenges.take(row.id, 'passkey-register', T0 + 1), row);
    });

    test('an expired challenge is worth nothing, and removeExpired sweeps only expired ones', async () => {
      const old = challenge({ expiresAt: T0 + 1000 });
      const young = challenge({ expiresAt: T0 + 5000 });
      await store.signInChallenges.create(old);
      await store.signInChallenges.create(young);
      assert.equal(await store.signInChallenges.peek(old.id, 'oidc', T0 + 1000), null, 'expired at its expiry moment');
      assert.equal(await store.signInChallenges.take(old.id, 'oidc', T0 + 2000), null);
      const other = challenge({ expiresAt: T0 + 1500 });
      await store.signInChallenges.create(other);
      assert.equal(await store.signInChallenges.removeExpired(T0 + 2000), 1);
      assert.deepEqual(await store.signInChallenges.peek(young.id, 'oidc', T0 + 2000), young);
    });

    test('ids are unique', async () => {
      const row = challenge();
      await store.signInChallenges.create(row);
      await assert.rejects(store.signInChallenges.create({ ...row }), { name: 'DuplicateError' });
    });
  });
}
