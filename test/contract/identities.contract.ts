import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { DuplicateError, type MetadataStore } from '../../src/db/repositories/repositories.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-28T01:00:00Z');
const ISSUER = 'https://id.example.org';

/**
 * The suite every dialect must pass for single sign-on identities (issue 26): an identity
 * (issuer + subject) links one account, even when two servers link it to two accounts at
 * the same moment. The mutation this catches: `link` as a SELECT for the pair, then an
 * INSERT (or an INSERT without the unique constraint), where both servers see no row and
 * both link, so one person signs in to two accounts.
 */
export function identitiesContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`identities contract: ${name}`, () => {
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

    const account = () => contractAccount(store, `sso${++counter}`, T0);

    test('two servers linking one identity to two accounts at once: exactly one wins', async () => {
      const peer = await harness.openPeer();
      const [a, b] = [await account(), await account()];
      for (let round = 0; round < 5; round++) {
        const subject = `person-${round}`;
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? peer : store).identities.link({ accountId: i % 2 ? b.id : a.id, issuer: ISSUER, subject, email: '', createdAt: T0 }),
          ),
        );
        const won = results.filter((result) => result.status === 'fulfilled');
        assert.equal(won.length, 1, `round ${round}: ${won.length} links written`);
        for (const result of results) if (result.status === 'rejected') assert.ok(result.reason instanceof DuplicateError, String(result.reason));
        const linked = await store.identities.byIssuerSubject(ISSUER, subject);
        assert.equal(linked?.accountId, (won[0] as PromiseFulfilledResult<{ accountId: number }>).value.accountId);
      }
    });

    test('the same subject at another issuer is another identity', async () => {
      const [a, b] = [await account(), await account()];
      await store.identities.link({ accountId: a.id, issuer: ISSUER, subject: 'same', email: 'a@example.org', createdAt: T0 });
      await store.identities.link({ accountId: b.id, issuer: 'https://other.example.org', subject: 'same', email: '', createdAt: T0 });
      assert.equal((await store.identities.byIssuerSubject(ISSUER, 'same'))?.accountId, a.id);
      assert.equal((await store.identities.byIssuerSubject('https://other.example.org', 'same'))?.accountId, b.id);
      assert.equal(await store.identities.byIssuerSubject(ISSUER, 'nobody'), null);
    });

    test('listForAccount, touch, and unlink only by the owner', async () => {
      const [a, b] = [await account(), await account()];
      const first = await store.identities.link({ accountId: a.id, issuer: ISSUER, subject: 's1', email: 'a@example.org', createdAt: T0 });
      await store.identities.link({ accountId: a.id, issuer: ISSUER, subject: 's2', email: '', createdAt: T0 + 1 });
      assert.deepEqual(
        (await store.identities.listForAccount(a.id)).map((identity) => identity.subject),
        ['s1', 's2'],
      );
      assert.deepEqual(await store.identities.listForAccount(b.id), []);
      await store.identities.touch(first.id, T0 + 5000);
      assert.equal((await store.identities.byIssuerSubject(ISSUER, 's1'))?.lastUsedAt, T0 + 5000);
      assert.equal(await store.identities.unlink(first.id, b.id), false, 'another account cannot unlink it');
      assert.equal(await store.identities.unlink(first.id, a.id), true);
      assert.equal(await store.identities.unlink(first.id, a.id), false, 'gone already');
      assert.equal(await store.identities.byIssuerSubject(ISSUER, 's1'), null);
      assert.equal((await store.accounts.signInMethods(a.id)).identities, 1);
    });
  });
}
