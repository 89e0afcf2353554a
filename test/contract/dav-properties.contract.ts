import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { type Account, FileStatus } from '../../src/domain/types.js';
import { DavProperties, MAX_PROPERTIES_PER_RESOURCE, MAX_VALUE_BYTES, type PropertyUpdate } from '../../src/webdav/dav-properties.js';
import { contractAccount } from './contract-accounts.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const Z = 'http://example.com/z';
const set = (name: string, valueXml = name, namespace = Z): PropertyUpdate => ({ action: 'set', property: { namespace, name, valueXml } });
const remove = (name: string, namespace = Z): PropertyUpdate => ({ action: 'remove', namespace, name });

/**
 * The suite every dialect must pass for WebDAV dead properties (issue 27, RFC 4918 9.2):
 * a PROPPATCH is all or nothing in document order, and a resource never holds more than
 * MAX_PROPERTIES_PER_RESOURCE, also when two servers add properties to it at once.
 */
export function davPropertiesContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`WebDAV dead properties contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let owner: Account;
    let logins = 0;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
      owner = await contractAccount(store, `dav-props-${++logins}`);
    });
    afterEach(() => harness.cleanup());

    const namesOf = async (key: string) => (await store.davProperties.list(owner.id, key)).map((property) => property.name).sort();

    test('housekeeping removes the properties of files and folders gone by any door, and keeps the rest', async () => {
      const T0 = 1_800_000_000_000;
      await store.folders.create({ id: 'DAVFOLDER1', ownerId: owner.id, parentId: null, name: 'kept', createdAt: T0 });
      await store.folders.create({ id: 'DAVFOLDER2', ownerId: owner.id, parentId: null, name: 'removed', createdAt: T0 });
      const file = (id: string, expiresAt: number | null) =>
        store.files.create({
          id,
          ownerId: owner.id,
          folderId: null,
          name: id,
          size: 1,
          sha256: 'a'.repeat(64),
          deleteHash: 'd'.repeat(64),
          createdAt: T0,
          expiresAt,
        });
      await file('DAVFILE001', null);
      await file('DAVFILE002', null);
      await file('DAVFILE003', T0 + 10);
      for (const key of ['top', 'folder:DAVFOLDER1', 'folder:DAVFOLDER2', 'file:DAVFILE001', 'file:DAVFILE002', 'file:DAVFILE003', 'file:NEVERWAS00']) {
        await store.davProperties.set(owner.id, key, [{ namespace: Z, name: 'p', valueXml: 'v' }]);
      }
      await store.files.setStatus('DAVFILE002', [FileStatus.Active], FileStatus.Deleted, T0 + 1);
      await store.folders.remove('DAVFOLDER2');
      assert.equal(await store.davProperties.removeOrphans(T0 + 20), 4, 'the deleted file, the expired one, the removed folder, the unknown id');
      const left = await store.davProperties.listMany(owner.id, [
        'top',
        'folder:DAVFOLDER1',
        'folder:DAVFOLDER2',
        'file:DAVFILE001',
        'file:DAVFILE002',
        'file:DAVFILE003',
        'file:NEVERWAS00',
      ]);
      assert.deepEqual([...left.keys()].sort(), ['file:DAVFILE001', 'folder:DAVFOLDER1', 'top']);
    });

    test('steps apply in document order: set then remove leaves nothing, remove then set leaves the value', async () => {
      const properties = new DavProperties({ store });
      const outcomes = await properties.update(owner, 'file:AAAAAAAAAA', [set('a'), remove('a'), remove('b'), set('b', '<x xmlns="urn:x">1</x>')]);
      assert.deepEqual(
        outcomes.map((outcome) => outcome.problem),
        [null, null, null, null],
      );
      assert.deepEqual(await store.davProperties.list(owner.id, 'file:AAAAAAAAAA'), [{ namespace: Z, name: 'b', valueXml: '<x xmlns="urn:x">1</x>' }]);
    });

    test('all or nothing: one refused step (a live property, a value too large) leaves every other unwritten, 424', async () => {
      const properties = new DavProperties({ store });
      await properties.update(owner, 'top', [set('kept')]);
      const protectedStep = await properties.update(owner, 'top', [set('new'), remove('kept'), set('getetag', '"x"', 'DAV:')]);
      assert.deepEqual(
        protectedStep.map((outcome) => outcome.problem),
        ['failed-dependency', 'failed-dependency', 'protected'],
      );
      const tooLarge = await properties.update(owner, 'top', [remove('kept'), set('big', 'x'.repeat(MAX_VALUE_BYTES + 1))]);
      assert.deepEqual(
        tooLarge.map((outcome) => outcome.problem),
        ['failed-dependency', 'too-large'],
      );
      assert.deepEqual(await namesOf('top'), ['kept']);
    });

    test(`two servers adding at once never take a resource past ${MAX_PROPERTIES_PER_RESOURCE} properties`, async () => {
      // Mutation: read the resource's properties outside the transaction, or drop the
      // locks.davTree call in DavProperties.update: both servers then count the same
      // rows, both pass the bound and the resource ends with more than it may hold.
      const peer = await harness.openPeer();
      const here = new DavProperties({ store });
      const there = new DavProperties({ store: peer });
      for (let round = 0; round < 5; round++) {
        const key = `folder:RACE${String(round).padStart(6, '0')}`;
        const start = Array.from({ length: MAX_PROPERTIES_PER_RESOURCE - 2 }, (_, index) => set(`p${index}`));
        await here.update(owner, key, start);
        const [first, second] = await Promise.all([
          here.update(owner, key, [set(`here${round}a`), set(`here${round}b`)]),
          there.update(owner, key, [set(`there${round}a`), set(`there${round}b`)]),
        ]);
        const succeeded = [first, second].filter((outcomes) => outcomes.every((outcome) => outcome.problem === null));
        assert.equal(succeeded.length, 1, `round ${round}: exactly one of the two fits`);
        const failed = first === succeeded[0] ? second : first;
        assert.deepEqual(
          failed.map((outcome) => outcome.problem),
          ['too-many', 'too-many'],
        );
        assert.equal((await namesOf(key)).length, MAX_PROPERTIES_PER_RESOURCE);
      }
    });
  });
}
