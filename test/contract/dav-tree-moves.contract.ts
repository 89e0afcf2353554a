import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { cryptoIds } from '../../src/domain/ids.js';
import type { Account, Folder } from '../../src/domain/types.js';
import { FoldersService } from '../../src/services/folders-service.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const T0 = Date.parse('2026-11-21T10:04:05Z');
const ROUNDS = 8;

/**
 * WebDAV's collection MOVE (issue 27) as FoldersService.relocate: two servers moving two
 * folders into each other at once must never both succeed, or the folders would hang in a
 * cycle unreachable from the top. The rule: the cycle check and the write are one step
 * under the account's tree lock (locks.davTree). The mutation that breaks it: take the
 * davTree lock out of relocate; the two moves then hold only their own new parents'
 * locks, both checks see the old tree and both moves commit (on PostgreSQL).
 * `samePeer`: the second "server" is the same store (SQLite: two connections of one process
 * would block its event loop on busy_timeout while the other's transaction waits for it;
 * two SQLite processes wait for each other in the kernel, as one process's transactions
 * queue on its connection).
 */
export function davTreeMovesContract(name: string, makeStore: MetadataStoreFactory, options: { samePeer?: boolean } = {}): void {
  describe(`WebDAV tree moves contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let logins = 0;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterEach(() => harness.cleanup());

    const service = (on: MetadataStore) =>
      new FoldersService({
        store: on,
        ids: cryptoIds,
        clock: () => T0,
        files: {
          deleteOwnedIn: () => {
            throw new Error('no file is deleted here');
          },
        },
      });
    const owner = (): Promise<Account> => contractAccount(store, `mover${++logins}`, T0);

    /** Whether every folder of the owner reaches the top by its parents. */
    const reachesTop = async (folders: Folder[]) => {
      for (const folder of folders) {
        const seen = new Set<string>();
        let at: string | null = folder.id;
        while (at !== null) {
          if (seen.has(at)) return false;
          seen.add(at);
          at = (await store.folders.byId(at))?.parentId ?? null;
        }
      }
      return true;
    };

    test('two servers moving two folders into each other: one move wins, the other is refused, no cycle', async () => {
      const peer = options.samePeer ? store : await harness.openPeer();
      const account = await owner();
      const [here, there] = [service(store), service(peer)];
      for (let round = 0; round < ROUNDS; round++) {
        const x = await here.create(account, `x${round}`);
        const y = await here.create(account, `y${round}`);
        const outcomes = await Promise.allSettled([here.relocate(account, x.id, y.id, 'x'), there.relocate(account, y.id, x.id, 'y')]);
        assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
        const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
        assert.match(String(refused.reason?.message), /cannot be moved into itself/);
        assert.ok(await reachesTop([x, y]), `round ${round}: a cycle`);
      }
    });

    test('a move into a folder removed meanwhile fails and moves nothing', async () => {
      const peer = options.samePeer ? store : await harness.openPeer();
      const account = await owner();
      const moving = await service(store).create(account, 'moving');
      const target = await service(store).create(account, 'target');
      const outcomes = await Promise.allSettled([service(store).relocate(account, moving.id, target.id, 'moved'), service(peer).remove(account, target.id)]);
      const after = await store.folders.byId(moving.id);
      if (outcomes[1].status === 'fulfilled') {
        assert.equal(outcomes[0].status, 'rejected');
        assert.equal(after?.parentId, null, 'still at the top');
        assert.equal(after?.name, 'moving');
      } else {
        assert.equal(outcomes[0].status, 'fulfilled');
        assert.equal(after?.parentId, target.id);
      }
    });
  });
}
