import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { FileStatus } from '../../src/domain/types.js';
import type { MetadataStoreFactory, MetadataStoreHarness } from './metadata-store.contract.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-11-21T00:00:00Z');
const digest = (c: string) => c.repeat(64);

/**
 * The operator console's queries (OperatorQueriesRepository, AuditRepository.search) on
 * every dialect: the LIKE escaping and case rules, the cursors, and the day arithmetic
 * (integer division on bigint) that SQLite and PostgreSQL must read alike.
 */
export function operatorQueriesContract(name: string, makeStore: MetadataStoreFactory): void {
  describe(`operator queries: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;
    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterEach(() => harness.cleanup());

    const account = (login: string, name = '', email = '') =>
      store.accounts.create({ login, passwordHash: 'h', name, email, premiumStart: null, premiumEnd: null, trafficLeft: 0, isOperator: false, createdAt: T0 });
    let n = 0;
    const file = (ownerId: number, name: string, sha: string, size: number, createdAt: number) =>
      store.files.create({ id: `F${String(++n).padStart(9, '0')}`, ownerId, folderId: null, name, size, sha256: sha, deleteHash: digest('d'), createdAt });

    test('accounts: login, name or e-mail contains the text, ASCII case ignored, % and _ literal, paged by id', async () => {
      const ada = await account('ada', 'Ada Lovelace');
      await account('bob', '', 'BOB@example.org');
      const pct = await account('per%cent', '100% sure');
      await account('under_score');
      const ids = async (text: string, afterId?: number, limit = 10) =>
        (await store.operatorQueries.searchAccounts({ text, afterId, limit })).map((a) => a.login);
      assert.deepEqual(await ids('LOVE'), ['ada']);
      assert.deepEqual(await ids('example.ORG'), ['bob']);
      assert.deepEqual(await ids('%'), ['per%cent']);
      assert.deepEqual(await ids('_'), ['under_score']);
      assert.deepEqual(await ids('', undefined, 2), ['ada', 'bob']);
      assert.deepEqual(await ids('', ada.id, 2), ['bob', 'per%cent']);
      assert.deepEqual(await ids('', pct.id), ['under_score']);
    });

    test('files: name, owner, digest and state filters; newest first with a cursor', async () => {
      const a = await account('a');
      const b = await account('b');
      const f1 = await file(a.id, 'Report_2026.PDF', digest('1'), 10, T0 + 1);
      const f2 = await file(a.id, 'report-draft.pdf', digest('1'), 10, T0 + 2);
      const f3 = await file(b.id, 'photo.jpg', digest('2'), 5, T0 + 3);
      await store.files.setStatus(f2.id, [FileStatus.Active], FileStatus.Blocked, T0);
      const ids = async (query: Parameters<MetadataStore['operatorQueries']['searchFiles']>[0]) =>
        (await store.operatorQueries.searchFiles(query)).map((f) => f.id);
      assert.deepEqual(await ids({ name: 'REPORT', limit: 10 }), [f2.id, f1.id]);
      assert.deepEqual(await ids({ name: 'report_', limit: 10 }), [f1.id]);
      assert.deepEqual(await ids({ ownerId: b.id, limit: 10 }), [f3.id]);
      assert.deepEqual(await ids({ sha256: digest('1'), states: [FileStatus.Blocked], limit: 10 }), [f2.id]);
      assert.deepEqual(await ids({ limit: 2 }), [f3.id, f2.id]);
      assert.deepEqual(await ids({ limit: 2, before: { createdAt: f2.createdAt, id: f2.id } }), [f1.id]);
    });

    test('history: uploads per UTC day, and live and distinct bytes at a time, deletions counted', async () => {
      const a = await account('a');
      await file(a.id, 'one', digest('1'), 100, T0 + 5);
      const dup = await file(a.id, 'two', digest('1'), 100, T0 + DAY - 1);
      await file(a.id, 'three', digest('2'), 30, T0 + 2 * DAY + 7);
      assert.deepEqual(await store.operatorQueries.dailyUploads(T0, T0 + 3 * DAY), [
        { day: T0, files: 2, bytes: 200 },
        { day: T0 + 2 * DAY, files: 1, bytes: 30 },
      ]);
      assert.deepEqual(await store.operatorQueries.dailyUploads(T0 + DAY, T0 + 2 * DAY), []);
      await store.files.setStatus(dup.id, [FileStatus.Active], FileStatus.Deleted, T0 + 3 * DAY);
      assert.deepEqual(await store.operatorQueries.liveBytesAt(T0 + DAY), { fileBytes: 200, storedBytes: 100 });
      assert.deepEqual(await store.operatorQueries.liveBytesAt(T0 + 2 * DAY + 7), { fileBytes: 230, storedBytes: 130 });
      assert.deepEqual(await store.operatorQueries.liveBytesAt(T0 + 3 * DAY), { fileBytes: 130, storedBytes: 130 });
      assert.deepEqual(await store.operatorQueries.liveBytesAt(T0 - 1), { fileBytes: 0, storedBytes: 0 });
    });

    test('audit search: actor, action prefix, object and time filters; newest first with a cursor', async () => {
      const entry = (at: number, actor: string, action: string, object: string) => store.audit.record({ at, actor, action, object, details: '' });
      await entry(T0, 'cli:root', 'accounts.create', 'account:ada');
      await entry(T0 + DAY, 'web:admin', 'accounts.disable', 'account:ada');
      await entry(T0 + DAY, 'web:admin', 'files.block', 'file:F000000001');
      await entry(T0 + 2 * DAY, 'web:admin', 'accounts_x', 'account:bob');
      const actions = async (filter: Partial<Parameters<MetadataStore['audit']['search']>[0]>) =>
        (await store.audit.search({ limit: 10, ...filter })).map((e) => e.action);
      assert.deepEqual(await actions({ actor: 'web:admin', action: 'accounts.' }), ['accounts.disable']);
      assert.deepEqual(await actions({ object: 'account:ada' }), ['accounts.disable', 'accounts.create']);
      assert.deepEqual(await actions({ from: T0 + DAY, to: T0 + 2 * DAY }), ['files.block', 'accounts.disable']);
      const [first] = await store.audit.search({ limit: 1, from: T0 + DAY, to: T0 + 2 * DAY });
      assert.deepEqual(await actions({ before: { at: first!.at, id: first!.id } }), ['accounts.disable', 'accounts.create']);
    });
  });
}
