import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { DuplicateError, type MetadataStore, type NewAccount, type NewFile, type Repositories } from '../../src/db/repositories/repositories.js';
import { type Account, type FileRecord, FileStatus, type Folder } from '../../src/domain/types.js';

/** One store under test. */
export interface MetadataStoreHarness {
  /** A migrated, empty store. */
  store: MetadataStore;
  /** Closes the store and removes what it wrote (temp folder, schema, database). */
  cleanup(): Promise<void>;
  /**
   * A second store on the same database, with connections of its own: another server
   * or the operator's CLI. The harness closes it in cleanup.
   */
  openPeer(): Promise<MetadataStore>;
}

/** Makes a fresh, empty store for one test (SQLite file, PostgreSQL schema, ...). */
export type MetadataStoreFactory = () => Promise<MetadataStoreHarness>;

const T0 = Date.parse('2026-11-21T10:04:05Z');
const digest = (c: string) => c.repeat(64);

/**
 * The suite every MetadataStore (every SQL dialect) must pass (STYLE.md: one shared suite,
 * Kysely's loop over dialects). Call it from a `*.test.ts` per dialect with a factory.
 */
export function metadataStoreContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`MetadataStore contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    let accountCounter = 0;
    let fileCounter = 0;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.cleanup();
    });

    const newAccount = (overrides: Partial<NewAccount> = {}): NewAccount => ({
      login: `user${++accountCounter}`,
      passwordHash: 'scrypt$1$1$1$c2FsdA==$aGFzaA==',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      premiumStart: null,
      premiumEnd: null,
      trafficLeft: 0,
      isOperator: false,
      createdAt: T0,
      ...overrides,
    });
    const account = (overrides: Partial<NewAccount> = {}) => store.accounts.create(newAccount(overrides));

    const newFile = (ownerId: number, overrides: Partial<NewFile> = {}): NewFile => ({
      id: `F${String(++fileCounter).padStart(9, '0')}`,
      ownerId,
      folderId: null,
      name: 'report.pdf',
      size: 1234,
      sha256: digest('a'),
      deleteHash: digest('d'),
      createdAt: T0 + fileCounter,
      ...overrides,
    });
    const file = (ownerId: number, overrides: Partial<NewFile> = {}) => store.files.create(newFile(ownerId, overrides));
    const folder = (ownerId: number, id: string, parentId: string | null = null) =>
      store.folders.create({ id, ownerId, parentId, name: `folder ${id}`, createdAt: T0 });

    describe('accounts', () => {
      test('create returns the stored account; byId, byLogin and credentials find it', async () => {
        const created = await account({
          login: 'ada',
          premiumStart: T0,
          premiumEnd: T0 + 86_400_000,
          trafficLeft: 10 * 1024 ** 3,
          isOperator: true,
        });
        const expected: Account = {
          id: created.id,
          login: 'ada',
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          balanceCents: 0,
          premiumStart: T0,
          premiumEnd: T0 + 86_400_000,
          trafficLeft: 10 * 1024 ** 3,
          isOperator: true,
          disabled: false,
          createdAt: T0,
        };
        assert.deepEqual(created, expected);
        assert.ok(Number.isInteger(created.id) && created.id > 0);
        assert.deepEqual(await store.accounts.byId(created.id), expected);
        assert.deepEqual(await store.accounts.byLogin('ada'), expected);
        assert.deepEqual(await store.accounts.credentials('ada'), { account: expected, passwordHash: 'scrypt$1$1$1$c2FsdA==$aGFzaA==' });
      });

      test('unknown ids and logins are null', async () => {
        assert.equal(await store.accounts.byId(424242), null);
        assert.equal(await store.accounts.byLogin('nobody'), null);
        assert.equal(await store.accounts.credentials('nobody'), null);
        assert.equal(await store.accounts.byApiKeyHash(digest('0')), null);
        assert.equal(await store.accounts.sealedApiKey(424242), null);
      });

      test('a taken login is DuplicateError and the first account stays as it was', async () => {
        const first = await account({ login: 'taken', name: 'First' });
        await assert.rejects(account({ login: 'taken', name: 'Second' }), DuplicateError);
        assert.deepEqual(await store.accounts.byLogin('taken'), first);
        assert.equal(await store.accounts.count(), 1);
      });

      test('list is oldest first and count counts', async () => {
        assert.deepEqual(await store.accounts.list(), []);
        assert.equal(await store.accounts.count(), 0);
        const a = await account({ login: 'a-first' });
        const b = await account({ login: 'b-second' });
        const c = await account({ login: '0-third' });
        assert.deepEqual(
          (await store.accounts.list()).map((x) => x.id),
          [a.id, b.id, c.id],
        );
        assert.equal(await store.accounts.count(), 3);
        assert.equal(new Set([a.id, b.id, c.id]).size, 3);
      });

      test('setPremium sets period and traffic, and clears them with nulls', async () => {
        const a = await account();
        await store.accounts.setPremium(a.id, T0, T0 + 1000, 5000);
        assert.deepEqual(await store.accounts.byId(a.id), { ...a, premiumStart: T0, premiumEnd: T0 + 1000, trafficLeft: 5000 });
        await store.accounts.setPremium(a.id, null, null, 0);
        assert.deepEqual(await store.accounts.byId(a.id), { ...a, premiumStart: null, premiumEnd: null, trafficLeft: 0 });
      });

      test('setPremiumPeriod leaves traffic alone; addTraffic adds in place, concurrently too', async () => {
        const a = await account({ trafficLeft: 1000 });
        await store.accounts.setPremiumPeriod(a.id, T0, T0 + 5);
        assert.deepEqual(await store.accounts.byId(a.id), { ...a, premiumStart: T0, premiumEnd: T0 + 5, trafficLeft: 1000 });
        await Promise.all([
          store.accounts.addTraffic(a.id, 500),
          store.accounts.reserveTraffic(a.id, 300),
          store.accounts.addTraffic(a.id, 0),
          store.accounts.refundTraffic(a.id, 100),
        ]);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 1300);
      });

      test('large byte counts and times survive the round trip', async () => {
        const a = await account({ trafficLeft: 2 ** 53 - 1, premiumStart: 0, premiumEnd: 8_640_000_000_000_000 });
        const again = (await store.accounts.byId(a.id))!;
        assert.equal(again.trafficLeft, 2 ** 53 - 1);
        assert.equal(again.premiumStart, 0);
        assert.equal(again.premiumEnd, 8_640_000_000_000_000);
      });
    });

    describe('api keys', () => {
      test('setApiKeyIfAbsent sets once; a second key is refused and the first one kept', async () => {
        const a = await account();
        assert.equal(await store.accounts.setApiKeyIfAbsent(a.id, digest('1'), 'sealed-one'), true);
        assert.equal(await store.accounts.setApiKeyIfAbsent(a.id, digest('2'), 'sealed-two'), false);
        assert.equal(await store.accounts.sealedApiKey(a.id), 'sealed-one');
        assert.deepEqual(await store.accounts.byApiKeyHash(digest('1')), a);
        assert.equal(await store.accounts.byApiKeyHash(digest('2')), null);
      });

      test('concurrent setApiKeyIfAbsent: exactly one wins', async () => {
        const a = await account();
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => store.accounts.setApiKeyIfAbsent(a.id, i.toString(16).repeat(64), `sealed-${i}`)),
        );
        assert.equal(results.filter(Boolean).length, 1);
        const winner = results.indexOf(true);
        assert.equal(await store.accounts.sealedApiKey(a.id), `sealed-${winner}`);
      });

      test('setApiKey replaces the key; the old hash stops finding the account', async () => {
        const a = await account();
        await store.accounts.setApiKey(a.id, digest('1'), 'sealed-one');
        await store.accounts.setApiKey(a.id, digest('2'), 'sealed-two');
        assert.equal(await store.accounts.byApiKeyHash(digest('1')), null);
        assert.deepEqual(await store.accounts.byApiKeyHash(digest('2')), a);
        assert.equal(await store.accounts.sealedApiKey(a.id), 'sealed-two');
      });

      test('keys belong to one account each', async () => {
        const a = await account();
        const b = await account();
        await store.accounts.setApiKey(a.id, digest('1'), 'sealed-a');
        await store.accounts.setApiKey(b.id, digest('2'), 'sealed-b');
        assert.equal((await store.accounts.byApiKeyHash(digest('1')))?.id, a.id);
        assert.equal((await store.accounts.byApiKeyHash(digest('2')))?.id, b.id);
        assert.equal(await store.accounts.sealedApiKey(b.id), 'sealed-b');
      });
    });

    describe('traffic', () => {
      test('reserveTraffic takes what is there, down to exactly zero, and refuses more', async () => {
        const a = await account({ trafficLeft: 1000 });
        assert.equal(await store.accounts.reserveTraffic(a.id, 400), true);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 600);
        assert.equal(await store.accounts.reserveTraffic(a.id, 601), false);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 600);
        assert.equal(await store.accounts.reserveTraffic(a.id, 600), true);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 0);
        assert.equal(await store.accounts.reserveTraffic(a.id, 1), false);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 0);
      });

      test('reserveTraffic of an unknown account is false', async () => {
        assert.equal(await store.accounts.reserveTraffic(424242, 1), false);
      });

      test('50 concurrent reservations never drive traffic below zero', async () => {
        const a = await account({ trafficLeft: 1234 });
        const other = await account({ trafficLeft: 1234 });
        const results = await Promise.all(Array.from({ length: 50 }, () => store.accounts.reserveTraffic(a.id, 100)));
        assert.equal(results.filter(Boolean).length, 12);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 34);
        // Nobody else's traffic moved.
        assert.equal((await store.accounts.byId(other.id))!.trafficLeft, 1234);
      });

      test('concurrent reservations and refunds add up', async () => {
        const a = await account({ trafficLeft: 5000 });
        await Promise.all([
          ...Array.from({ length: 25 }, () => store.accounts.reserveTraffic(a.id, 100)),
          ...Array.from({ length: 25 }, () => store.accounts.refundTraffic(a.id, 10)),
        ]);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 5000 - 2500 + 250);
      });

      test('refundTraffic gives bytes back; zero and negative refunds change nothing', async () => {
        const a = await account({ trafficLeft: 100 });
        await store.accounts.refundTraffic(a.id, 50);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 150);
        await store.accounts.refundTraffic(a.id, 0);
        await store.accounts.refundTraffic(a.id, -500);
        assert.equal((await store.accounts.byId(a.id))!.trafficLeft, 150);
      });
    });

    describe('files', () => {
      test('create stores an active file; byId, byIds and deleteHash read it', async () => {
        const owner = await account();
        const created = await file(owner.id, { id: 'ABCDEFGHIJ', name: 'Ünïcødé 文件.txt', size: 11 * 1024 ** 3, createdAt: T0 });
        assert.deepEqual(created, {
          id: 'ABCDEFGHIJ',
          ownerId: owner.id,
          folderId: null,
          name: 'Ünïcødé 文件.txt',
          size: 11 * 1024 ** 3,
          sha256: digest('a'),
          status: FileStatus.Active,
          createdAt: T0,
          downloads: 0,
          lastDownloadAt: null,
          expiresAt: null,
        });
        assert.deepEqual(await store.files.byId('ABCDEFGHIJ'), created);
        assert.deepEqual(await store.files.byIds(['ABCDEFGHIJ', 'NOSUCHFILE']), [created]);
        assert.deepEqual(await store.files.byIds([]), []);
        assert.equal(await store.files.deleteHash('ABCDEFGHIJ'), digest('d'));
        assert.equal(await store.files.byId('NOSUCHFILE'), null);
        assert.equal(await store.files.deleteHash('NOSUCHFILE'), null);
      });

      test('a taken file id is DuplicateError', async () => {
        const owner = await account();
        await file(owner.id, { id: 'SAMEID0000' });
        await assert.rejects(file(owner.id, { id: 'SAMEID0000', name: 'other' }), DuplicateError);
        assert.equal((await store.files.byId('SAMEID0000'))!.name, 'report.pdf');
      });

      test('setStatus follows only the allowed transitions', async () => {
        const owner = await account();
        const { id } = await file(owner.id);
        const status = async () => (await store.files.byId(id))!.status;
        const A = FileStatus.Active;
        const B = FileStatus.Blocked;
        const D = FileStatus.Deleted;

        assert.equal(await store.files.setStatus(id, [B], A, T0), false, 'unblock of an active file');
        assert.equal(await status(), A);
        assert.equal(await store.files.setStatus(id, [A], B, T0), true, 'block');
        assert.equal(await status(), B);
        assert.equal(await store.files.setStatus(id, [A], B, T0), false, 'block of a blocked file');
        assert.equal(await store.files.setStatus(id, [B], A, T0), true, 'unblock');
        assert.equal(await status(), A);
        assert.equal(await store.files.setStatus(id, [A, B], D, T0), true, 'delete');
        assert.equal(await status(), D);
        assert.equal(await store.files.setStatus(id, [A, B], D, T0), false, 'delete again');
        assert.equal(await store.files.setStatus(id, [B], A, T0), false, 'undelete');
        assert.equal(await store.files.setStatus(id, [A], B, T0), false, 'block a deleted file');
        assert.equal(await status(), D);
        assert.equal(await store.files.setStatus('NOSUCHFILE', [A, B], D, T0), false, 'missing row');
      });

      test('concurrent deletes of one file: exactly one changes it', async () => {
        const owner = await account();
        const { id } = await file(owner.id);
        const results = await Promise.all(
          Array.from({ length: 10 }, () => store.files.setStatus(id, [FileStatus.Active, FileStatus.Blocked], FileStatus.Deleted, T0)),
        );
        assert.equal(results.filter(Boolean).length, 1);
      });

      test("moveOwned moves only the owner's live files and counts them", async () => {
        const owner = await account();
        const stranger = await account();
        await folder(owner.id, 'FOLDER0001');
        const active = await file(owner.id);
        const blocked = await file(owner.id);
        const deleted = await file(owner.id);
        const foreign = await file(stranger.id);
        await store.files.setStatus(blocked.id, [FileStatus.Active], FileStatus.Blocked, T0);
        await store.files.setStatus(deleted.id, [FileStatus.Active], FileStatus.Deleted, T0);

        const moved = await store.files.moveOwned([active.id, blocked.id, deleted.id, foreign.id, 'NOSUCHFILE'], owner.id, 'FOLDER0001');
        assert.equal(moved, 2);
        assert.equal((await store.files.byId(active.id))!.folderId, 'FOLDER0001');
        assert.equal((await store.files.byId(blocked.id))!.folderId, 'FOLDER0001');
        assert.equal((await store.files.byId(deleted.id))!.folderId, null);
        assert.equal((await store.files.byId(foreign.id))!.folderId, null);

        assert.equal(await store.files.moveOwned([active.id], stranger.id, null), 0);
        assert.equal((await store.files.byId(active.id))!.folderId, 'FOLDER0001');
        assert.equal(await store.files.moveOwned([active.id], owner.id, null), 1, 'back to the root');
        assert.equal((await store.files.byId(active.id))!.folderId, null);
        assert.equal(await store.files.moveOwned([], owner.id, 'FOLDER0001'), 0);
      });

      test('liveReferenceExists sees active and blocked rows but not deleted ones', async () => {
        const owner = await account();
        const sha = digest('b');
        assert.equal(await store.files.liveReferenceExists(sha), false);
        const one = await file(owner.id, { sha256: sha });
        const two = await file(owner.id, { sha256: sha });
        await file(owner.id, { sha256: digest('c') });
        assert.equal(await store.files.liveReferenceExists(sha), true);
        await store.files.setStatus(one.id, [FileStatus.Active], FileStatus.Blocked, T0);
        await store.files.setStatus(two.id, [FileStatus.Active], FileStatus.Deleted, T0);
        assert.equal(await store.files.liveReferenceExists(sha), true, 'blocked still counts');
        await store.files.setStatus(one.id, [FileStatus.Blocked], FileStatus.Deleted, T0);
        assert.equal(await store.files.liveReferenceExists(sha), false);
        assert.equal(await store.files.liveReferenceExists(digest('c')), true);
      });

      test('recordDownload counts and stamps', async () => {
        const owner = await account();
        const { id } = await file(owner.id);
        await store.files.recordDownload(id, T0 + 5);
        await Promise.all([store.files.recordDownload(id, T0 + 9), store.files.recordDownload(id, T0 + 9)]);
        const after = (await store.files.byId(id))!;
        assert.equal(after.downloads, 3);
        assert.equal(after.lastDownloadAt, T0 + 9);
      });

      test('inFolder, folderActiveBytes and detachDeleted', async () => {
        const owner = await account();
        await folder(owner.id, 'FOLDER0001');
        const a = await file(owner.id, { folderId: 'FOLDER0001', size: 100, createdAt: T0 + 2 });
        const b = await file(owner.id, { folderId: 'FOLDER0001', size: 20, createdAt: T0 + 1 });
        const c = await file(owner.id, { folderId: 'FOLDER0001', size: 3, createdAt: T0 + 3 });
        await file(owner.id, { size: 999 });
        await store.files.setStatus(c.id, [FileStatus.Active], FileStatus.Deleted, T0);

        assert.deepEqual(
          (await store.files.inFolder('FOLDER0001', [FileStatus.Active])).map((f) => f.id),
          [b.id, a.id],
        );
        assert.deepEqual(
          (await store.files.inFolder('FOLDER0001', [FileStatus.Active, FileStatus.Deleted])).map((f) => f.id),
          [b.id, a.id, c.id],
        );
        assert.equal(await store.files.folderActiveBytes('FOLDER0001'), 120);
        await store.folders.create({ id: 'EMPTY00001', ownerId: owner.id, parentId: null, name: 'empty', createdAt: T0 });
        assert.equal(await store.files.folderActiveBytes('EMPTY00001'), 0);

        await store.files.detachDeleted('FOLDER0001');
        assert.equal((await store.files.byId(c.id))!.folderId, null);
        assert.equal((await store.files.byId(a.id))!.folderId, 'FOLDER0001');
      });
    });

    describe('folders', () => {
      test('create, byId, children and remove', async () => {
        const owner = await account();
        const top = await folder(owner.id, 'TOP0000001');
        assert.deepEqual(top, { id: 'TOP0000001', ownerId: owner.id, parentId: null, name: 'folder TOP0000001', createdAt: T0 });
        await folder(owner.id, 'KIDB000001', 'TOP0000001');
        await folder(owner.id, 'KIDA000001', 'TOP0000001');
        assert.deepEqual(await store.folders.byId('TOP0000001'), top);
        assert.deepEqual((await store.folders.children('TOP0000001')).map((f) => f.id).sort(), ['KIDA000001', 'KIDB000001']);
        await assert.rejects(folder(owner.id, 'TOP0000001'), DuplicateError);
        await store.folders.remove('KIDA000001');
        assert.equal(await store.folders.byId('KIDA000001'), null);
        assert.equal(await store.folders.byId('NOSUCHDIR0'), null);
      });

      test("list pages one owner's folders newest first, by parent; activeTotals counts active files in one call", async () => {
        const owner = await account();
        const other = await account();
        const at = (id: string, createdAt: number, parentId: string | null = null) =>
          store.folders.create({ id, ownerId: owner.id, parentId, name: id, createdAt });
        await at('LISTA00001', T0 + 1);
        await at('LISTB00002', T0 + 2);
        await at('LISTC00003', T0 + 2);
        await at('LISTD00004', T0 + 3, 'LISTA00001');
        await folder(other.id, 'OTHER00001');
        const ids = (folders: { id: string }[]) => folders.map((f) => f.id);

        assert.deepEqual(ids(await store.folders.list({ ownerId: owner.id, limit: 10 })), ['LISTD00004', 'LISTC00003', 'LISTB00002', 'LISTA00001']);
        assert.deepEqual(ids(await store.folders.list({ ownerId: owner.id, parentId: null, limit: 10 })), ['LISTC00003', 'LISTB00002', 'LISTA00001']);
        assert.deepEqual(ids(await store.folders.list({ ownerId: owner.id, parentId: 'LISTA00001', limit: 10 })), ['LISTD00004']);
        // Keyset: strictly after (created_at, id), the id breaking the tie.
        assert.deepEqual(ids(await store.folders.list({ ownerId: owner.id, limit: 2 })), ['LISTD00004', 'LISTC00003']);
        assert.deepEqual(ids(await store.folders.list({ ownerId: owner.id, before: { createdAt: T0 + 2, id: 'LISTC00003' }, limit: 2 })), [
          'LISTB00002',
          'LISTA00001',
        ]);
        assert.deepEqual(ids(await store.folders.list({ ownerId: owner.id, before: { createdAt: T0 + 1, id: 'LISTA00001' }, limit: 2 })), []);

        await file(owner.id, { folderId: 'LISTA00001', size: 100 });
        await file(owner.id, { folderId: 'LISTA00001', size: 20 });
        const blocked = await file(owner.id, { folderId: 'LISTA00001', size: 7 });
        const deleted = await file(owner.id, { folderId: 'LISTB00002', size: 5 });
        await file(owner.id, { folderId: 'LISTD00004', size: 1 });
        await store.files.setStatus(blocked.id, [FileStatus.Active], FileStatus.Blocked, T0);
        await store.files.setStatus(deleted.id, [FileStatus.Active], FileStatus.Deleted, T0);
        const totals = await store.folders.activeTotals(['LISTA00001', 'LISTB00002', 'LISTD00004', 'NOSUCHDIR0']);
        assert.deepEqual(Object.fromEntries(totals), { LISTA00001: { files: 2, bytes: 120 }, LISTD00004: { files: 1, bytes: 1 } });
        assert.equal((await store.folders.activeTotals([])).size, 0);
      });
    });

    describe('names and browsing (My files)', () => {
      test('files.rename renames live files only; namesTaken looks in one folder of one owner, leaving one row out', async () => {
        const owner = await account();
        const other = await account();
        await folder(owner.id, 'NAMEDIR001');
        const top = await file(owner.id, { name: 'a.txt' });
        const inside = await file(owner.id, { name: 'a.txt', folderId: 'NAMEDIR001' });
        await file(other.id, { name: 'b.txt' });
        const gone = await file(owner.id, { name: 'c.txt' });
        await store.files.setStatus(gone.id, [FileStatus.Active], FileStatus.Deleted, T0);
        assert.equal(await store.files.rename(gone.id, 'x'), false);
        assert.equal(await store.files.rename('NOSUCHFILE', 'x'), false);
        const scope = { ownerId: owner.id, folderId: null };
        assert.deepEqual([...(await store.files.namesTaken(scope, ['a.txt', 'b.txt', 'c.txt', 'A.TXT']))], ['a.txt']);
        assert.deepEqual([...(await store.files.namesTaken({ ...scope, exceptId: top.id }, ['a.txt']))], []);
        assert.deepEqual([...(await store.files.namesTaken({ ...scope, folderId: 'NAMEDIR001' }, ['a.txt']))], ['a.txt']);
        assert.deepEqual([...(await store.files.namesTaken(scope, []))], []);
        assert.equal(await store.files.rename(inside.id, 'b.txt'), true);
        assert.equal((await store.files.byId(inside.id))!.name, 'b.txt');
      });

      test("folders.rename, namesTaken, moveChildren and files.moveAll move a folder's content", async () => {
        const owner = await account();
        await folder(owner.id, 'PARENT0001');
        await folder(owner.id, 'CHILD00001', 'PARENT0001');
        await folder(owner.id, 'CHILD00002', 'PARENT0001');
        const live = await file(owner.id, { folderId: 'PARENT0001' });
        const gone = await file(owner.id, { folderId: 'PARENT0001' });
        await store.files.setStatus(gone.id, [FileStatus.Active], FileStatus.Deleted, T0);
        assert.equal(await store.folders.rename('CHILD00001', 'Rome'), true);
        assert.equal(await store.folders.rename('NOSUCHFOLD', 'Rome'), false);
        const scope = { ownerId: owner.id, folderId: 'PARENT0001' };
        assert.deepEqual([...(await store.folders.namesTaken(scope, ['Rome', 'folder CHILD00002', 'Oslo']))].sort(), ['Rome', 'folder CHILD00002']);
        assert.deepEqual([...(await store.folders.namesTaken({ ...scope, exceptId: 'CHILD00001' }, ['Rome']))], []);
        assert.deepEqual([...(await store.folders.namesTaken({ ownerId: owner.id, folderId: null }, ['folder PARENT0001']))], ['folder PARENT0001']);
        assert.equal(await store.folders.moveChildren('PARENT0001', null), 2);
        assert.equal(await store.files.moveAll('PARENT0001', null), 1);
        assert.deepEqual(await store.folders.children('PARENT0001'), []);
        assert.equal((await store.folders.byId('CHILD00001'))!.parentId, null);
        assert.equal((await store.files.byId(live.id))!.folderId, null);
        assert.equal((await store.files.byId(gone.id))!.folderId, 'PARENT0001', 'deleted files stay (folder removal detaches them)');
      });

      test('files.browse walks every row once in each order, through equal keys, searched by name', async () => {
        const owner = await account();
        const other = await account();
        const made: FileRecord[] = [];
        for (let i = 0; i < 23; i++) {
          // Sizes and times repeat; names repeat ignoring case; ids shuffled against all of them.
          made.push(
            await file(owner.id, {
              id: `B${String((i * 37) % 101).padStart(9, '0')}`,
              name: `${i % 2 ? 'Doc' : 'doc'}-${i % 7}%_.txt`,
              size: 1 + (i % 4),
              createdAt: T0 + (i % 5),
            }),
          );
          await file(other.id, { name: `doc-${i}.txt` });
        }
        const key = { name: (f: FileRecord) => f.name.toLowerCase(), size: (f: FileRecord) => f.size, date: (f: FileRecord) => f.createdAt };
        for (const sort of ['name', 'size', 'date'] as const) {
          for (const descending of [false, true]) {
            const cmp = (a: FileRecord, b: FileRecord) => {
              const [x, y] = [key[sort](a), key[sort](b)];
              const order = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : 1;
              return descending ? -order : order;
            };
            const expected = [...made].sort(cmp).map((f) => f.id);
            for (const limit of [1, 4, 10]) {
              const seen: string[] = [];
              let after: { key: string | number; id: string } | undefined;
              for (let pages = 0; pages < 50; pages++) {
                const rows = await store.files.browse({ ownerId: owner.id, states: [FileStatus.Active], sort, descending, after, limit });
                seen.push(...rows.map((r) => r.id));
                const last = rows.at(-1);
                if (rows.length < limit || !last) break;
                after = { key: sort === 'name' ? last.name : sort === 'size' ? last.size : last.createdAt, id: last.id };
              }
              assert.deepEqual(seen, expected, `${sort} ${descending ? 'desc' : 'asc'}, pages of ${limit}`);
            }
          }
        }
        const search = async (text: string) =>
          (await store.files.browse({ ownerId: owner.id, states: [FileStatus.Active], nameContains: text, sort: 'name', descending: false, limit: 100 }))
            .length;
        assert.equal(await search('DOC-3'), 3, 'case ignored');
        assert.equal(await search('%_'), 23, '% and _ are literal');
        assert.equal(await search('_.'), 23);
        assert.equal(await search('x%'), 0);
      });
    });

    describe('blobs', () => {
      test('removeIfUnreferenced drops the row only when no live row points at the digest, and gives its key', async () => {
        const owner = await account();
        const sha = digest('e');
        await store.blobs.insert(sha, 10, 'key-e', T0);
        const one = await file(owner.id, { sha256: sha });
        const two = await file(owner.id, { sha256: sha });
        assert.equal(await store.blobs.removeIfUnreferenced(sha), null, 'two live rows');
        await store.files.setStatus(one.id, [FileStatus.Active], FileStatus.Deleted, T0);
        await store.files.setStatus(two.id, [FileStatus.Active], FileStatus.Blocked, T0);
        assert.equal(await store.blobs.removeIfUnreferenced(sha), null, 'a blocked row is live');
        await store.files.setStatus(two.id, [FileStatus.Blocked], FileStatus.Deleted, T0);
        assert.equal(await store.blobs.removeIfUnreferenced(sha), 'key-e', 'only deleted rows');
        assert.equal(await store.blobs.removeIfUnreferenced(sha), null, 'already removed');
        assert.equal(await store.blobs.keyOf(sha), null);
      });

      test('a digest that was never recorded is not removed', async () => {
        assert.equal(await store.blobs.removeIfUnreferenced(digest('9')), null);
        assert.equal(await store.blobs.keyOf(digest('9')), null);
      });

      test('keyOf and namesKey follow insert and removal; a digest is recorded once', async () => {
        const sha = digest('f');
        assert.equal(await store.blobs.namesKey('key-f'), false);
        await store.blobs.insert(sha, 10, 'key-f', T0);
        assert.equal(await store.blobs.keyOf(sha), 'key-f');
        assert.equal(await store.blobs.namesKey('key-f'), true);
        assert.equal(await store.blobs.namesKey('key-g'), false);
        await assert.rejects(store.blobs.insert(sha, 10, 'key-g', T0 + 1));
        assert.equal(await store.blobs.removeIfUnreferenced(sha), 'key-f');
        assert.equal(await store.blobs.namesKey('key-f'), false);
        await store.blobs.insert(sha, 10, 'key-g', T0 + 2);
        assert.equal(await store.blobs.keyOf(sha), 'key-g');
      });

      test('two digests never name one key', async () => {
        await store.blobs.insert(digest('1'), 10, 'shared', T0);
        await assert.rejects(store.blobs.insert(digest('2'), 10, 'shared', T0));
      });

      test('live rows of other digests do not hold a blob', async () => {
        const owner = await account();
        await store.blobs.insert(digest('1'), 10, digest('1'), T0);
        await file(owner.id, { sha256: digest('2') });
        assert.equal(await store.blobs.removeIfUnreferenced(digest('1')), digest('1'));
      });
    });

    describe('folder pages', () => {
      test('files.list by folder alone pages its files newest first, any owner, only the asked states', async () => {
        const owner = await account();
        const other = await account();
        await folder(owner.id, 'PAGED00001');
        const a = await file(owner.id, { folderId: 'PAGED00001', createdAt: T0 + 1 });
        const b = await file(owner.id, { folderId: 'PAGED00001', createdAt: T0 + 2 });
        const c = await file(owner.id, { folderId: 'PAGED00001', createdAt: T0 + 2 });
        const blocked = await file(owner.id, { folderId: 'PAGED00001', createdAt: T0 + 3 });
        await store.files.setStatus(blocked.id, [FileStatus.Active], FileStatus.Blocked, T0);
        await file(other.id, { createdAt: T0 + 4 });
        const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
        const page = (before?: { createdAt: number; id: string }) =>
          store.files.list({ folderId: 'PAGED00001', states: [FileStatus.Active], before, limit: 2 });
        // Equal times: the id breaks the tie, descending.
        const first = await page();
        assert.deepEqual(ids(first), [c.id, b.id]);
        assert.deepEqual(ids(await page({ createdAt: b.createdAt, id: b.id })), [a.id]);
        assert.deepEqual(ids(await page({ createdAt: a.createdAt, id: a.id })), []);
      });
    });

    describe('keyset walks', () => {
      /** Newest first: created_at, then id, both descending (ids here are W + digits, ordered alike by any collation). */
      const newestFirst = <T extends { createdAt: number; id: string }>(rows: T[]): string[] =>
        [...rows].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((row) => row.id);

      /** Every page of a listing, each after the last row of the one before, until a short page. */
      async function walk<T extends { createdAt: number; id: string }>(
        page: (before: { createdAt: number; id: string } | undefined, limit: number) => Promise<T[]>,
        limit: number,
      ): Promise<string[]> {
        const seen: string[] = [];
        let before: { createdAt: number; id: string } | undefined;
        for (let pages = 0; pages < 100; pages++) {
          const rows = await page(before, limit);
          seen.push(...rows.map((row) => row.id));
          const last = rows.at(-1);
          if (rows.length < limit || !last) return seen;
          before = { createdAt: last.createdAt, id: last.id };
        }
        throw new Error('the walk does not end');
      }

      // Runs of 1 to 5 rows share a created_at; the ids are shuffled against the times, so
      // inside a run only the id orders, and every page size below ends pages inside runs.
      const RUNS = [3, 1, 5, 2, 4, 1, 3];
      const idAt = (n: number) => `W${String((n * 37) % 101).padStart(9, '0')}`;
      const PAGE_SIZES = [1, 2, 3, 4, 7, 25];

      test('files.list walks every row exactly once, newest first, through equal created_at, for each filter', async () => {
        const owner = await account();
        const other = await account();
        await folder(owner.id, 'WALKDIR001');
        const made: FileRecord[] = [];
        let n = 0;
        for (const [run, size] of RUNS.entries()) {
          for (let i = 0; i < size; i++, n++) {
            // Every third file in the folder; the other account's files share the same instants.
            made.push(await file(owner.id, { id: idAt(n), createdAt: T0 + run, folderId: n % 3 === 0 ? 'WALKDIR001' : null }));
            await file(other.id, { createdAt: T0 + run });
          }
        }
        const blocked = made[4]!;
        const deleted = made[5]!;
        await store.files.setStatus(blocked.id, [FileStatus.Active], FileStatus.Blocked, T0);
        await store.files.setStatus(deleted.id, [FileStatus.Active], FileStatus.Deleted, T0);
        const live = made.filter((f) => f.id !== deleted.id);
        const both = [FileStatus.Active, FileStatus.Blocked];
        const filters: Array<[string, Omit<Parameters<typeof store.files.list>[0], 'limit' | 'before'>, string[]]> = [
          ['owner', { ownerId: owner.id, states: both }, newestFirst(live)],
          ['owner, root', { ownerId: owner.id, states: both, folderId: null }, newestFirst(live.filter((f) => f.folderId === null))],
          ['owner, folder', { ownerId: owner.id, states: both, folderId: 'WALKDIR001' }, newestFirst(live.filter((f) => f.folderId === 'WALKDIR001'))],
          [
            'folder, active',
            { folderId: 'WALKDIR001', states: [FileStatus.Active] },
            newestFirst(live.filter((f) => f.folderId === 'WALKDIR001' && f.id !== blocked.id)),
          ],
        ];
        for (const [name, filter, expected] of filters) {
          for (const limit of PAGE_SIZES) {
            const seen = await walk((before) => store.files.list({ ...filter, before, limit }), limit);
            assert.deepEqual(seen, expected, `${name}, pages of ${limit}`);
          }
        }
      });

      test('folders.list walks every folder exactly once, newest first, through equal created_at, for each filter', async () => {
        const owner = await account();
        const other = await account();
        await store.folders.create({ id: 'WPARENT001', ownerId: owner.id, parentId: null, name: 'parent', createdAt: T0 - 1 });
        const made: Folder[] = [];
        let n = 0;
        for (const [run, size] of RUNS.entries()) {
          for (let i = 0; i < size; i++, n++) {
            const parentId = n % 2 === 0 ? 'WPARENT001' : null;
            made.push(await store.folders.create({ id: idAt(n), ownerId: owner.id, parentId, name: `walk ${n}`, createdAt: T0 + run }));
            await store.folders.create({ id: `X${String(n).padStart(9, '0')}`, ownerId: other.id, parentId: null, name: 'other', createdAt: T0 + run });
          }
        }
        const all = [...made, (await store.folders.byId('WPARENT001'))!];
        const filters: Array<[string, Omit<Parameters<typeof store.folders.list>[0], 'limit' | 'before'>, string[]]> = [
          ['owner', { ownerId: owner.id }, newestFirst(all)],
          ['owner, top level', { ownerId: owner.id, parentId: null }, newestFirst(all.filter((f) => f.parentId === null))],
          ['owner, parent', { ownerId: owner.id, parentId: 'WPARENT001' }, newestFirst(all.filter((f) => f.parentId === 'WPARENT001'))],
        ];
        for (const [name, filter, expected] of filters) {
          for (const limit of PAGE_SIZES) {
            const seen = await walk((before) => store.folders.list({ ...filter, before, limit }), limit);
            assert.deepEqual(seen, expected, `${name}, pages of ${limit}`);
          }
        }
      });
    });

    describe('upload log', () => {
      test("windowSum adds an account's uploads at or after the start, in one number", async () => {
        const a = await account();
        const b = await account();
        assert.equal(await store.uploadLog.windowSum(a.id, T0), 0);
        await store.uploadLog.record(a.id, 100, T0 - 1);
        await store.uploadLog.record(a.id, 2 ** 40, T0);
        await store.uploadLog.record(a.id, 7, T0 + 5);
        await store.uploadLog.record(b.id, 1000, T0 + 5);
        assert.equal(await store.uploadLog.windowSum(a.id, T0), 2 ** 40 + 7);
        assert.equal(await store.uploadLog.windowSum(a.id, T0 + 6), 0);
      });

      test('oldest lists the first rows of the window, oldest first, equal times in the order written', async () => {
        const a = await account();
        const b = await account();
        await store.uploadLog.record(a.id, 1, T0 + 3);
        await store.uploadLog.record(a.id, 2, T0 + 1);
        await store.uploadLog.record(a.id, 3, T0 + 1);
        await store.uploadLog.record(a.id, 4, T0 - 1);
        await store.uploadLog.record(b.id, 5, T0 + 2);
        assert.deepEqual(await store.uploadLog.oldest(a.id, T0, 10), [
          { bytes: 2, at: T0 + 1 },
          { bytes: 3, at: T0 + 1 },
          { bytes: 1, at: T0 + 3 },
        ]);
        assert.deepEqual(await store.uploadLog.oldest(a.id, T0, 2), [
          { bytes: 2, at: T0 + 1 },
          { bytes: 3, at: T0 + 1 },
        ]);
        assert.equal(await store.uploadLog.prune(T0), 1);
        assert.deepEqual(await store.uploadLog.oldest(a.id, 0, 1), [{ bytes: 2, at: T0 + 1 }]);
      });
    });

    describe('housekeeping', () => {
      test('unreferencedBlobs comes in batches by digest, past the grace, without live rows', async () => {
        const owner = await account();
        for (const c of ['1', '2', '3', '4', '5']) await store.blobs.insert(digest(c), Number(c), digest(c), T0);
        await store.blobs.insert(digest('6'), 6, digest('6'), T0 + 10);
        await file(owner.id, { sha256: digest('2') });
        const gone = await file(owner.id, { sha256: digest('4') });
        await store.files.setStatus(gone.id, [FileStatus.Active], FileStatus.Deleted, T0);
        const batch = (after?: string) => store.housekeeping.unreferencedBlobs(T0 + 10, 2, after);
        assert.deepEqual(await batch(), [
          { sha256: digest('1'), size: 1 },
          { sha256: digest('3'), size: 3 },
        ]);
        assert.deepEqual(await batch(digest('3')), [
          { sha256: digest('4'), size: 4 },
          { sha256: digest('5'), size: 5 },
        ]);
        assert.deepEqual(await batch(digest('5')), [], 'the young blob 6 is not listed');
      });

      test('countExpired counts what expiredFiles lists: live files not downloaded (or uploaded) since the cutoff', async () => {
        const owner = await account();
        const old = await file(owner.id, { createdAt: T0 - 100 });
        const downloaded = await file(owner.id, { createdAt: T0 - 100 });
        await store.files.recordDownload(downloaded.id, T0 + 1);
        const deleted = await file(owner.id, { createdAt: T0 - 100 });
        await store.files.setStatus(deleted.id, [FileStatus.Active], FileStatus.Deleted, T0);
        const blocked = await file(owner.id, { createdAt: T0 - 50 });
        await store.files.setStatus(blocked.id, [FileStatus.Active], FileStatus.Blocked, T0);
        await file(owner.id, { createdAt: T0 + 1 });
        assert.deepEqual((await store.housekeeping.expiredFiles(T0, 10)).sort(), [old.id, blocked.id].sort());
        assert.equal(await store.housekeeping.countExpired(T0), 2);
        assert.equal(await store.housekeeping.countExpired(T0 - 100), 0);
      });
    });

    describe('transactions', () => {
      test('commit on success, with the result passed through', async () => {
        const result = await store.transaction(async (repos) => {
          const a = await repos.accounts.create(newAccount({ login: 'in-trx' }));
          await repos.blacklist.add(digest('7'), 'spam', T0);
          return a.id;
        });
        assert.equal((await store.accounts.byLogin('in-trx'))?.id, result);
        assert.equal(await store.blacklist.has(digest('7')), true);
      });

      test('roll back everything when the work throws', async () => {
        const boom = new Error('boom');
        await assert.rejects(
          store.transaction(async (repos) => {
            await repos.accounts.create(newAccount({ login: 'rolled-back' }));
            await repos.blobs.insert(digest('8'), 1, 'key-8', T0);
            throw boom;
          }),
          (error: unknown) => error === boom,
        );
        assert.equal(await store.accounts.byLogin('rolled-back'), null);
        assert.equal(await store.blobs.keyOf(digest('8')), null);
      });

      test('a DuplicateError inside a transaction rolls it back and stays a DuplicateError', async () => {
        await account({ login: 'dup' });
        await assert.rejects(
          store.transaction(async (repos) => {
            await repos.blacklist.add(digest('6'), '', T0);
            await repos.accounts.create(newAccount({ login: 'dup' }));
          }),
          DuplicateError,
        );
        assert.equal(await store.blacklist.has(digest('6')), false);
      });
    });

    describe('transactions at once (issue 28: SQLite commits them in groups)', () => {
      test('of concurrent transactions, one that throws rolls back alone with its own error; the others commit', async () => {
        await account({ login: 'taken' });
        const boom = new Error('boom');
        const outcomes = await Promise.allSettled(
          Array.from({ length: 16 }, (_, i) =>
            store.transaction(async (repos) => {
              await repos.blacklist.add(digest((i % 16).toString(16)), `t${i}`, T0);
              // One fails with an error of its own, one with a statement that fails.
              if (i === 5) throw boom;
              const created = await repos.accounts.create(newAccount({ login: i === 9 ? 'taken' : `batch${i}` }));
              return created.id;
            }),
          ),
        );
        outcomes.forEach((outcome, i) => {
          if (i === 5) assert.ok(outcome.status === 'rejected' && outcome.reason === boom, 'its own error');
          else if (i === 9) assert.ok(outcome.status === 'rejected' && outcome.reason instanceof DuplicateError, 'its own DuplicateError');
          else assert.equal(outcome.status, 'fulfilled', `transaction ${i}`);
        });
        for (let i = 0; i < 16; i++) {
          const committed = i !== 5 && i !== 9;
          assert.equal(await store.blacklist.has(digest(i.toString(16))), committed, `transaction ${i}: all of it or nothing`);
          if (committed) assert.equal((await store.accounts.byLogin(`batch${i}`))?.id, (outcomes[i] as PromiseFulfilledResult<number>).value);
        }
        assert.equal(await store.accounts.count(), 15);
      });

      test('each one sees the commits before it: concurrent increments under a lock lose none', async () => {
        const owner = await account({ trafficLeft: 0 });
        await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            store
              .transaction(async (repos) => {
                // PostgreSQL runs them in parallel: the lock orders them (SQLite's batch already does).
                await repos.locks.top(owner.id);
                const seen = (await repos.accounts.byId(owner.id))!.trafficLeft;
                await repos.accounts.setPremium(owner.id, null, null, seen + 1);
                if (i % 7 === 3) throw new Error('rolled back');
              })
              .catch(() => {}),
          ),
        );
        // 30 runs, of which i = 3, 10, 17, 24 roll back.
        assert.equal((await store.accounts.byId(owner.id))!.trafficLeft, 26);
      });

      test('a hook runs once per key before COMMIT, and the result comes after both', async () => {
        const peer = await harness.openPeer();
        const events: string[] = [];
        const runs = new Map<string, number>();
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            store
              .transaction(async (repos) => {
                await repos.blacklist.add(digest(i.toString(16)), '', T0);
                for (const key of ['shared', `own${i}`]) {
                  await repos.commit.beforeCommit(key, async () => {
                    runs.set(key, (runs.get(key) ?? 0) + 1);
                    events.push(`hook ${key}`);
                  });
                }
                return i;
              })
              .then(async (i) => {
                events.push(`result ${i}`);
                // Committed when the result comes: another server sees it (on SQLite the
                // peer is the same connection; sqlite-metadata-store.test.ts reads with a second one).
                assert.equal(await peer.blacklist.has(digest(i.toString(16))), true);
                return i;
              }),
          ),
        );
        assert.deepEqual(results, [0, 1, 2, 3, 4, 5, 6, 7]);
        // Every transaction's hooks ran, a shared key at most once per COMMIT: once for all
        // of them on SQLite when they committed together, once each on PostgreSQL.
        for (let i = 0; i < 8; i++) assert.equal(runs.get(`own${i}`), 1);
        assert.ok(runs.get('shared')! >= 1 && runs.get('shared')! <= 8);
        for (let i = 0; i < 8; i++) assert.ok(events.indexOf(`hook own${i}`) < events.indexOf(`result ${i}`), `transaction ${i}: its hook first`);
      });

      test('a failing hook fails its COMMIT: nothing of what it waited for is committed, and no result is given', async () => {
        const failure = new Error('fsync failed');
        const outcomes = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) =>
            store.transaction(async (repos) => {
              await repos.blacklist.add(digest(i.toString(16)), '', T0);
              if (i === 2) await repos.commit.beforeCommit('failing', () => Promise.reject(failure));
              return i;
            }),
          ),
        );
        const two = outcomes[2]!;
        assert.ok(two.status === 'rejected' && two.reason === failure, 'the failure is the answer');
        assert.equal(await store.blacklist.has(digest('2')), false);
        // Whoever shared that COMMIT failed with it; whoever did not, committed. Either way a
        // result was given only for what is stored.
        for (let i = 0; i < 6; i++) {
          assert.equal(await store.blacklist.has(digest(i.toString(16))), outcomes[i]!.status === 'fulfilled', `transaction ${i}`);
        }
        // The store goes on.
        await store.transaction((repos) => repos.blacklist.add(digest('e'), '', T0));
        assert.equal(await store.blacklist.has(digest('e')), true);
      });

      test('outside a transaction a hook runs at once', async () => {
        let ran = false;
        await store.commit.beforeCommit('now', async () => {
          ran = true;
        });
        assert.equal(ran, true);
      });
    });

    describe('blacklist', () => {
      test('add, has, list, remove', async () => {
        const x = digest('1');
        const y = digest('2');
        assert.equal(await store.blacklist.has(x), false);
        await store.blacklist.add(x, 'malware', T0);
        await store.blacklist.add(y, '', T0 + 1);
        assert.equal(await store.blacklist.has(x), true);
        assert.equal(await store.blacklist.has(digest('3')), false);
        assert.deepEqual(await store.blacklist.list(), [
          { sha256: x, reason: 'malware', createdAt: T0 },
          { sha256: y, reason: '', createdAt: T0 + 1 },
        ]);
        assert.equal(await store.blacklist.remove(x), true);
        assert.equal(await store.blacklist.has(x), false);
        assert.equal(await store.blacklist.remove(x), false, 'second remove');
        assert.equal(await store.blacklist.remove(digest('3')), false, 'never listed');
        assert.deepEqual(
          (await store.blacklist.list()).map((e) => e.sha256),
          [y],
        );
      });

      test('adding a listed digest again is a no-op that keeps the first entry', async () => {
        await store.blacklist.add(digest('1'), 'first', T0);
        await store.blacklist.add(digest('1'), 'second', T0 + 5);
        assert.deepEqual(await store.blacklist.list(), [{ sha256: digest('1'), reason: 'first', createdAt: T0 }]);
      });
    });

    describe('sessions', () => {
      const session = (accountId: number, id: string, expiresAt = T0 + 1000) => ({
        id,
        accountId,
        csrfSecret: digest('c'),
        createdAt: T0,
        expiresAt,
        lastSeenAt: T0,
      });

      test('create, byId, touch, remove', async () => {
        const a = await account();
        await store.sessions.create(session(a.id, digest('1')));
        assert.deepEqual(await store.sessions.byId(digest('1')), session(a.id, digest('1')));
        assert.equal(await store.sessions.byId(digest('2')), null);
        await store.sessions.touch(digest('1'), T0 + 50, T0 + 5000);
        assert.deepEqual(await store.sessions.byId(digest('1')), { ...session(a.id, digest('1'), T0 + 5000), lastSeenAt: T0 + 50 });
        assert.equal(await store.sessions.remove(digest('1')), true);
        assert.equal(await store.sessions.remove(digest('1')), false, 'second remove');
        assert.equal(await store.sessions.byId(digest('1')), null);
      });

      test('an id collision is a DuplicateError', async () => {
        const a = await account();
        await store.sessions.create(session(a.id, digest('1')));
        await assert.rejects(store.sessions.create(session(a.id, digest('1'))), DuplicateError);
      });

      test('removeForAccount and removeExpired remove only theirs', async () => {
        const [a, b] = [await account(), await account()];
        await store.sessions.create(session(a.id, digest('1')));
        await store.sessions.create(session(a.id, digest('2'), T0 + 10));
        await store.sessions.create(session(b.id, digest('3'), T0 + 10));
        await store.sessions.create(session(b.id, digest('4'), T0 + 20));
        assert.equal(await store.sessions.removeExpired(T0 + 20), 2);
        assert.notEqual(await store.sessions.byId(digest('4')), null, 'ends exactly now: kept');
        assert.equal(await store.sessions.removeForAccount(a.id), 1);
        assert.equal(await store.sessions.byId(digest('1')), null);
        assert.notEqual(await store.sessions.byId(digest('4')), null);
      });
    });

    describe('locks, under concurrent transactions from two stores', () => {
      /** Transactions that read a counter and write it back + 1, each under `lock`; none may be lost. */
      async function countUnderLock(lock: (repos: Repositories) => Promise<void>, runs: number): Promise<number> {
        const peer = await harness.openPeer();
        const owner = await account({ trafficLeft: 0 });
        const stores = [store, peer];
        await Promise.all(
          Array.from({ length: runs }, (_, i) =>
            stores[i % 2]!.transaction(async (repos) => {
              await lock(repos);
              const seen = (await repos.accounts.byId(owner.id))!.trafficLeft;
              // A read-modify-write that is only correct when the lock excludes the others.
              await repos.accounts.setPremium(owner.id, null, null, seen + 1);
            }),
          ),
        );
        return (await store.accounts.byId(owner.id))!.trafficLeft;
      }

      test('locks.blob: transactions holding the same name run one at a time', async () => {
        assert.equal(await countUnderLock((repos) => repos.locks.blob(digest('a')), 24), 24);
      });

      test('locks.folder: transactions holding the same folder run one at a time', async () => {
        assert.equal(await countUnderLock((repos) => repos.locks.folder('FOLDER0001'), 24), 24);
      });

      test("locks.top: transactions holding one account's top level run one at a time", async () => {
        assert.equal(await countUnderLock((repos) => repos.locks.top(7), 24), 24);
      });

      test('a name checked under the names lock stays free until commit: two renames to one name, one wins', async () => {
        // The check-then-write of FilesService.rename, from two stores at once, round after round.
        const peer = await harness.openPeer();
        const owner = await account();
        for (let round = 0; round < 8; round++) {
          const a = await file(owner.id, { name: `a${round}` });
          const b = await file(owner.id, { name: `b${round}` });
          const name = `same${round}`;
          const outcomes = await Promise.allSettled(
            [
              [store, a],
              [peer, b],
            ].map(([s, f]) =>
              (s as MetadataStore).transaction(async (repos) => {
                await repos.locks.top(owner.id);
                if ((await repos.files.namesTaken({ ownerId: owner.id, folderId: null, exceptId: (f as FileRecord).id }, [name])).size > 0)
                  throw new Error('taken');
                await repos.files.rename((f as FileRecord).id, name);
              }),
            ),
          );
          assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
        }
      });

      test('a statement after the lock sees what the previous holder committed (the last-reference race)', async () => {
        // An upload of digest X holds X's lock while the owner deletes the last other file
        // of X from another server: the delete must wait, then see the new file and keep the
        // blob row. Without the lock (or with a reference check on an old snapshot) the
        // row goes and the new file is left without bytes.
        const peer = await harness.openPeer();
        const owner = await account();
        const sha = digest('c');
        await store.blobs.insert(sha, 10, 'key-c', T0);
        const old = await file(owner.id, { sha256: sha });
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const hasLock = new Promise<void>((resolve) => (locked = resolve));
        const upload = store.transaction(async (repos) => {
          await repos.locks.blob(sha);
          locked();
          const created = await repos.files.create(newFile(owner.id, { sha256: sha }));
          await held;
          return created;
        });
        await hasLock;
        const removal = peer.transaction(async (repos) => {
          await repos.locks.blob(sha);
          await repos.files.setStatus(old.id, [FileStatus.Active], FileStatus.Deleted, T0);
          return repos.blobs.removeIfUnreferenced(sha);
        });
        // Give the removal every chance to run ahead if the lock does not hold it back; the
        // outcome asserted below is the same whatever the timing when it does.
        await Promise.race([removal.catch(() => {}), new Promise((resolve) => setTimeout(resolve, 300))]);
        release();
        const created = await upload;
        assert.equal(await removal, null, 'the removal saw the new live file');
        assert.equal((await store.files.byId(created.id))?.status, FileStatus.Active);
        assert.equal(await store.blobs.keyOf(sha), 'key-c', 'the live file keeps its blob row');
      });
    });

    describe('run leases (one holder of a job across servers)', () => {
      test("a lease is one holder's until it runs out or is released; a race for a free one has one winner", async () => {
        const peer = await harness.openPeer();
        const t0 = 1_000_000;
        assert.equal(await store.runLeases.take('gc', 'alpha', t0 + 60_000, t0), true, 'a free lease is taken');
        assert.equal(await peer.runLeases.take('gc', 'beta', t0 + 60_000, t0 + 1), false, 'a live lease of another is not');
        assert.equal(await peer.runLeases.holderOf('gc', t0 + 1), 'alpha');
        assert.equal(await store.runLeases.take('gc', 'alpha', t0 + 90_000, t0 + 2), true, 'its holder takes it again');
        assert.equal(await store.runLeases.renew('gc', 'alpha', t0 + 120_000), true);
        assert.equal(await peer.runLeases.renew('gc', 'beta', t0 + 120_000), false, 'only the holder renews');
        await peer.runLeases.release('gc', 'beta');
        assert.equal(await peer.runLeases.holderOf('gc', t0 + 3), 'alpha', 'only the holder releases');
        // Run out (a holder that died): the next taker has it, and the old holder can no longer renew.
        assert.equal(await peer.runLeases.take('gc', 'beta', t0 + 300_000, t0 + 120_001), true);
        assert.equal(await store.runLeases.renew('gc', 'alpha', t0 + 400_000), false);
        assert.equal(await store.runLeases.holderOf('gc', t0 + 200_000), 'beta');
        await peer.runLeases.release('gc', 'beta');
        assert.equal(await store.runLeases.holderOf('gc', t0 + 200_000), null);
        // Ten takers at once, on two stores, for a free lease: exactly one wins.
        const won = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? peer : store).runLeases.take('race', `holder-${i}`, t0 + 60_000, t0)));
        assert.equal(won.filter(Boolean).length, 1, `winners: ${won}`);
        assert.equal(await store.runLeases.take('other', 'alpha', t0 + 60_000, t0), true, 'leases of other jobs are their own');
      });
    });

    describe('bytes served per day (the console chart)', () => {
      test("20 transactions on two stores adding to one day at once sum exactly, with the files' totals", async () => {
        const peer = await harness.openPeer();
        const owner = await account();
        const files = [await file(owner.id), await file(owner.id)];
        const day = Math.floor(T0 / 86_400_000);
        // Past 2^32 in all, so a 32-bit column or a float sum would show.
        const amount = (i: number) => 300_000_000 + i;
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? peer : store).transaction(async (repos) => {
              await repos.files.addBytesServed(files[i % 2]!.id, amount(i));
              await repos.servedDays.add(day, amount(i));
            }),
          ),
        );
        const total = Array.from({ length: 20 }, (_, i) => amount(i)).reduce((a, b) => a + b, 0);
        assert.deepEqual(await store.servedDays.between(day, day), [{ day, bytes: total }]);
        assert.equal((await store.housekeeping.stats()).bytesServed, total, "the files' totals agree with the day's");
      });

      test('days are their own rows; a range lists the days that served anything, oldest first; a rolled-back add counts nothing', async () => {
        await store.servedDays.add(100, 5);
        await store.servedDays.add(102, 7);
        await store.servedDays.add(102, 1);
        await store.servedDays.add(103, 0);
        await store.servedDays.add(99, 4);
        await assert.rejects(
          store.transaction(async (repos) => {
            await repos.servedDays.add(101, 1000);
            throw new Error('the download failed');
          }),
          /the download failed/,
        );
        assert.deepEqual(await store.servedDays.between(100, 103), [
          { day: 100, bytes: 5 },
          { day: 102, bytes: 8 },
        ]);
      });
    });

    describe('the site totals the database keeps (stats)', () => {
      /** What stats() must say, kept by the test from what it did. */
      const expected = () => ({
        A: { count: 0, bytes: 0 },
        B: { count: 0, bytes: 0 },
        D: { count: 0, bytes: 0 },
        blobs: { count: 0, bytes: 0 },
        downloads: 0,
        served: 0,
      });
      const assertTotals = async (on: MetadataStore, want: ReturnType<typeof expected>, what: string) => {
        const stats = await on.housekeeping.stats();
        assert.deepEqual(
          { A: stats.files.A, B: stats.files.B, D: stats.files.D, blobs: stats.blobs, downloads: stats.downloads, served: stats.bytesServed },
          want,
          what,
        );
      };

      test('every kind of write shows at once; a fold changes no total and leaves one row per kind', async () => {
        const owner = await account();
        const want = expected();
        await assertTotals(store, want, 'an empty site');
        const a = await file(owner.id, { size: 100 });
        const b = await file(owner.id, { size: 2 ** 33 });
        const c = await file(owner.id, { size: 7 });
        want.A = { count: 3, bytes: 107 + 2 ** 33 };
        await store.blobs.insert(digest('e'), 2 ** 33, 'key-e', T0);
        await store.blobs.insert(digest('f'), 5, 'key-f', T0);
        want.blobs = { count: 2, bytes: 2 ** 33 + 5 };
        await assertTotals(store, want, 'files and blobs created');
        await store.files.setStatus(b.id, [FileStatus.Active], FileStatus.Blocked, T0);
        await store.files.setStatus(c.id, [FileStatus.Active], FileStatus.Deleted, T0);
        want.A = { count: 1, bytes: 100 };
        want.B = { count: 1, bytes: 2 ** 33 };
        want.D = { count: 1, bytes: 7 };
        await store.files.addDownloads(a.id, { starts: 3, lastStartAt: T0, bytesServed: 300 });
        await store.files.addDownloads(b.id, { starts: 1, lastStartAt: T0, bytesServed: 2 ** 32 });
        want.downloads = 4;
        want.served = 300 + 2 ** 32;
        await assertTotals(store, want, 'a block, a delete, downloads');
        // A state change carries the file's downloads along: they stay in the site's total.
        await store.files.setStatus(a.id, [FileStatus.Active], FileStatus.Deleted, T0);
        want.A = { count: 0, bytes: 0 };
        want.D = { count: 2, bytes: 107 };
        assert.equal(await store.blobs.removeIfUnreferenced(digest('f')), 'key-f');
        want.blobs = { count: 1, bytes: 2 ** 33 };
        // A write that rolls back counts nothing.
        await assert.rejects(
          store.transaction(async (repos) => {
            await repos.files.create(newFile(owner.id, { size: 999 }));
            throw new Error('the upload failed');
          }),
          /the upload failed/,
        );
        await assertTotals(store, want, 'after a delete of a downloaded file, a blob removed, a rollback');
        const rows = await store.transaction((repos) => repos.housekeeping.foldTotals());
        assert.ok(rows > 4, `rows of differences were folded (${rows})`);
        await assertTotals(store, want, 'after a fold');
        assert.equal(await store.transaction((repos) => repos.housekeeping.foldTotals()), 4, 'one row per kind after a fold (A, B, D, blob)');
        await assertTotals(store, want, 'after a second fold');
      });

      test('40 writers and 6 folds on two stores at once: the totals are exact', async () => {
        const peer = await harness.openPeer();
        const owner = await account();
        const seeded = await Promise.all(Array.from({ length: 10 }, (_, i) => file(owner.id, { size: 1000 + i })));
        const want = expected();
        want.A = { count: 10, bytes: seeded.reduce((sum, f) => sum + f.size, 0) };
        const writers = Array.from({ length: 40 }, (_, i) => {
          const on = i % 2 ? peer : store;
          if (i < 10) {
            // Deletes of the seeded files, each in its own transaction with a download.
            const f = seeded[i]!;
            want.A.count--;
            want.A.bytes -= f.size;
            want.D.count++;
            want.D.bytes += f.size;
            want.downloads += 2;
            want.served += 10;
            return on.transaction(async (repos) => {
              await repos.files.addDownloads(f.id, { starts: 2, lastStartAt: T0, bytesServed: 10 });
              await repos.files.setStatus(f.id, [FileStatus.Active], FileStatus.Deleted, T0);
            });
          }
          want.A.count++;
          want.A.bytes += 10 * i;
          want.blobs.count++;
          want.blobs.bytes += 10 * i;
          return on.transaction(async (repos) => {
            const sha = `${i}`.padStart(64, '0');
            await repos.blobs.insert(sha, 10 * i, `key-${i}`, T0);
            await repos.files.create(newFile(owner.id, { size: 10 * i, sha256: sha }));
          });
        });
        const folds = Array.from({ length: 6 }, (_, i) => (i % 2 ? peer : store).transaction((repos) => repos.housekeeping.foldTotals()));
        await Promise.all([...writers, ...folds]);
        await assertTotals(store, want, 'read on one store');
        await assertTotals(peer, want, 'read on the other');
        await store.transaction((repos) => repos.housekeeping.foldTotals());
        await assertTotals(peer, want, 'after a last fold');
      });
    });

    describe('resumable uploads and their locks (one writer per upload across servers)', () => {
      test("an upload lock is one request's until released or run out; a race has one winner; a holder sees a release request", async () => {
        const peer = await harness.openPeer();
        const t0 = 2_000_000;
        const id = 'a'.repeat(32);
        assert.equal(await store.uploadLocks.take(id, 'srv1 p1 x', t0 + 10_000, t0), true);
        assert.equal(await peer.uploadLocks.take(id, 'srv2 p1 y', t0 + 10_000, t0 + 1), false, 'a live lock is not taken');
        assert.deepEqual(await store.uploadLocks.renew(id, 'srv1 p1 x', t0 + 20_000), { held: true, releaseRequested: false });
        await peer.uploadLocks.requestRelease(id);
        assert.deepEqual(await store.uploadLocks.renew(id, 'srv1 p1 x', t0 + 20_000), { held: true, releaseRequested: true }, 'the holder sees the request');
        await peer.uploadLocks.release(id, 'srv2 p1 y');
        assert.equal(await peer.uploadLocks.take(id, 'srv2 p1 y', t0 + 30_000, t0 + 2), false, 'only the holder releases');
        // Run out: the next taker has it, fresh, and the old holder no longer renews.
        assert.equal(await peer.uploadLocks.take(id, 'srv2 p1 y', t0 + 60_000, t0 + 20_001), true);
        assert.deepEqual(await peer.uploadLocks.renew(id, 'srv2 p1 y', t0 + 60_000), { held: true, releaseRequested: false });
        assert.deepEqual(await store.uploadLocks.renew(id, 'srv1 p1 x', t0 + 60_000), { held: false, releaseRequested: false });
        await peer.uploadLocks.release(id, 'srv2 p1 y');
        // Ten takers at once on two stores: one wins.
        const race = 'b'.repeat(32);
        const won = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? peer : store).uploadLocks.take(race, `srv${i} p x`, t0 + 60_000, t0)));
        assert.equal(won.filter(Boolean).length, 1, `winners: ${won}`);
        // A restarted server frees its earlier processes' locks, not its own nor another server's.
        const [old, mine, other, similar] = ['c', 'd', 'e', 'f'].map((c) => c.repeat(32));
        await store.uploadLocks.take(old!, 'srv_1 old 1', t0 + 60_000, t0);
        await store.uploadLocks.take(mine!, 'srv_1 new 1', t0 + 60_000, t0);
        await store.uploadLocks.take(other!, 'srv_10 old 1', t0 + 60_000, t0);
        await store.uploadLocks.take(similar!, 'srvX1 old 1', t0 + 60_000, t0);
        assert.equal(await store.uploadLocks.releaseServer('srv_1 ', 'srv_1 new '), 1);
        assert.equal(await peer.uploadLocks.take(old!, 'srv2 p z', t0 + 60_000, t0 + 1), true);
        for (const kept of [mine!, other!, similar!]) assert.equal(await peer.uploadLocks.take(kept, 'srv2 p z', t0 + 60_000, t0 + 1), false, kept);
      });

      test('an upload row is stored once and taken once, whatever races', async () => {
        const peer = await harness.openPeer();
        const owner = await store.accounts.create({
          login: 'resumer',
          passwordHash: 'h',
          name: '',
          email: '',
          premiumStart: null,
          premiumEnd: null,
          trafficLeft: 0,
          isOperator: false,
          createdAt: 1,
        });
        const row = {
          id: '1'.repeat(32),
          accountId: owner.id,
          filename: 'r.bin',
          folderId: null,
          length: 10,
          reservationId: null,
          createdAt: 5,
          expiresAt: 100,
        };
        await store.resumableUploads.create(row);
        await store.resumableUploads.saveCheckpoints(row.id, '[{"at":4,"state":"x"}]');
        assert.deepEqual(await peer.resumableUploads.byId(row.id), {
          ...row,
          digestCheckpoints: '[{"at":4,"state":"x"}]',
          fileId: null,
          expiresIn: null,
          concat: null,
        });
        const marks = await Promise.all([store.resumableUploads.markStored(row.id, 'FILEAAAAAA'), peer.resumableUploads.markStored(row.id, 'FILEBBBBBB')]);
        assert.equal(marks.filter(Boolean).length, 1, `one file per upload: ${marks}`);
        await store.resumableUploads.saveCheckpoints(row.id, '[{"at":9,"state":"y"}]');
        assert.equal((await store.resumableUploads.byId(row.id))?.digestCheckpoints, '[]', 'a stored upload keeps no digest state');
        assert.deepEqual(
          (await store.resumableUploads.expired(100, 10)).map((r) => r.id),
          [],
        );
        assert.deepEqual(
          (await store.resumableUploads.expired(101, 10)).map((r) => r.id),
          [row.id],
        );
        const taken = await Promise.all([store.resumableUploads.take(row.id), peer.resumableUploads.take(row.id)]);
        assert.equal(taken.filter((r) => r !== null).length, 1);
        assert.equal(await store.resumableUploads.byId(row.id), null);
      });

      test("a partial upload keeps its part in a concatenation; two finals joining it at once: one marks it, with the final's id", async () => {
        const peer = await harness.openPeer();
        const owner = await account();
        const part = {
          id: '2'.repeat(32),
          accountId: owner.id,
          filename: 'p.bin',
          folderId: null,
          length: 10,
          reservationId: null,
          createdAt: 5,
          expiresAt: 100,
        };
        await store.resumableUploads.create({ ...part, concat: 'partial' });
        assert.equal((await peer.resumableUploads.byId(part.id))?.concat, 'partial');
        const marks = await Promise.all([
          store.resumableUploads.markStored(part.id, 'FILEAAAAAA', `partial;${'a'.repeat(32)}`),
          peer.resumableUploads.markStored(part.id, 'FILEBBBBBB', `partial;${'b'.repeat(32)}`),
        ]);
        assert.equal(marks.filter(Boolean).length, 1, `one final per partial: ${marks}`);
        const marked = await store.resumableUploads.byId(part.id);
        assert.equal(marked?.concat, marks[0] ? `partial;${'a'.repeat(32)}` : `partial;${'b'.repeat(32)}`);
        assert.equal(marked?.fileId, marks[0] ? 'FILEAAAAAA' : 'FILEBBBBBB');
      });
    });
  });
}
