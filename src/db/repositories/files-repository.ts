import { type Expression, type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import { FileStatus } from '../../domain/types.js';
import { compiledQuery, definedQuery } from '../compiled-query.js';
import type { Database } from '../database.js';
import type { Engine } from '../dialect.js';
import type { FileBrowseQuery, FilesRepository } from './repositories.js';
import { containsText, listedAfter, toFile, translateDuplicate, unexpiredAt } from './rows.js';

/** Every upload and copy writes one, in its transaction: compiled once, not per transaction (issue 28). */
const insertFile = definedQuery(
  ['id', 1, 'folder', 'name', 2, 'sha256', 'hash', 3, 4],
  (
    db: Kysely<Database>,
    id: string,
    ownerId: number,
    folderId: string | null,
    name: string,
    size: number,
    sha256: string,
    deleteHash: string,
    createdAt: number,
    expiresAt: number | null,
  ) =>
    db
      .insertInto('files')
      .values({
        id,
        owner_id: ownerId,
        folder_id: folderId,
        name,
        size,
        sha256,
        status: sql.lit(FileStatus.Active),
        delete_hash: deleteHash,
        created_at: createdAt,
        deleted_at: sql`null`,
        downloads: sql.lit(0),
        last_download_at: sql`null`,
        expires_at: expiresAt,
      })
      .returningAll(),
);

/** Live: what an owner sees and what a name can clash with. */
const LIVE = [FileStatus.Active, FileStatus.Blocked];

export function filesRepository(db: Kysely<Database>, engine: Engine): FilesRepository {
  const select = () => db.selectFrom('files').selectAll();
  // GET /files/<id> and most file operations read one file by id: compiled once (issue 28).
  const fileById = compiledQuery(db, [''], (db, id: string) => db.selectFrom('files').selectAll().where('id', '=', id));
  /** Adds the expiry rule (rows.ts unexpiredAt) when a time is given: the one place queries of live files get it. */
  const unexpired = <Q extends { where(expression: Expression<SqlBool>): Q }>(q: Q, liveAt: number | undefined): Q =>
    liveAt === undefined ? q : q.where(unexpiredAt(liveAt));

  /**
   * The sort key of `browse` as SQL, and a value in the same form. Names sort lower-cased
   * and, on PostgreSQL, in the "C" collation (code points), so both engines agree on
   * ASCII names whatever the database's locale.
   */
  const sortKey = (sort: FileBrowseQuery['sort'], value?: string | number): RawBuilder<unknown> => {
    if (sort === 'name') {
      const collate = sql.raw(engine === 'postgres' ? ' collate "C"' : '');
      return value === undefined ? sql`lower(${sql.ref('name')})${collate}` : sql`lower(cast(${String(value)} as text))${collate}`;
    }
    const column = sort === 'size' ? 'size' : 'created_at';
    return value === undefined ? sql`${sql.ref(column)}` : sql`${Number(value)}`;
  };
  return {
    async create(file) {
      const [row] = await translateDuplicate(
        insertFile(db, file.id, file.ownerId, file.folderId, file.name, file.size, file.sha256, file.deleteHash, file.createdAt, file.expiresAt ?? null),
        `file id ${file.id} exists`,
      );
      return toFile(row!);
    },
    async byId(id) {
      const [row] = await fileById(id);
      return row ? toFile(row) : null;
    },
    async deleteHash(id) {
      const row = await db.selectFrom('files').select('delete_hash').where('id', '=', id).executeTakeFirst();
      return row?.delete_hash ?? null;
    },
    async setStatus(id, from, to, at, inFolder) {
      let query = db
        .updateTable('files')
        .set(to === FileStatus.Deleted ? { status: to, deleted_at: at } : { status: to })
        .where('id', '=', id)
        .where('status', 'in', from);
      if (inFolder !== undefined) query = query.where('folder_id', '=', inFolder);
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async moveOwned(ids, ownerId, folderId, liveAt) {
      if (ids.length === 0) return 0;
      const query = db
        .updateTable('files')
        .set({ folder_id: folderId })
        .where('id', 'in', ids)
        .where('owner_id', '=', ownerId)
        .where('status', '!=', FileStatus.Deleted);
      const result = await unexpired(query, liveAt).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async byIds(ids) {
      if (ids.length === 0) return [];
      return (await select().where('id', 'in', ids).execute()).map(toFile);
    },
    async inFolder(folderId, states) {
      const rows = await select().where('folder_id', '=', folderId).where('status', 'in', states).orderBy('created_at').orderBy('id').execute();
      return rows.map(toFile);
    },
    async folderActiveBytes(folderId, liveAt) {
      const query = db
        .selectFrom('files')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('bytes'))
        .where('folder_id', '=', folderId)
        .where('status', '=', FileStatus.Active);
      const row = await unexpired(query, liveAt).executeTakeFirstOrThrow();
      return Number(row.bytes);
    },
    async liveReferenceExists(sha256) {
      const row = await db.selectFrom('files').select('id').where('sha256', '=', sha256).where('status', '!=', FileStatus.Deleted).limit(1).executeTakeFirst();
      return row !== undefined;
    },
    async recordDownload(id, at) {
      await db
        .updateTable('files')
        .set((eb) => ({ downloads: eb('downloads', '+', 1), last_download_at: at }))
        .where('id', '=', id)
        .execute();
    },
    async detachDeleted(folderId, liveAt) {
      await db
        .updateTable('files')
        .set({ folder_id: null })
        .where('folder_id', '=', folderId)
        // An expired file behaves as deleted: it keeps no folder from going (gc marks it later).
        .where((eb) =>
          liveAt === undefined ? eb('status', '=', FileStatus.Deleted) : eb.or([eb('status', '=', FileStatus.Deleted), eb.not(unexpiredAt(liveAt))]),
        )
        .execute();
    },
    async list(query) {
      let q = select();
      if (query.ownerId !== undefined) q = q.where('owner_id', '=', query.ownerId);
      if (query.states && query.states.length > 0) {
        // Across every account (the operator's `files list`) a page is the newest rows of
        // files_created (0017), the state checked on each: SQLite would otherwise take
        // files_status, which narrows a state of millions of rows to all of them, and sort
        // them all. Unary + keeps it off that index (SQLite's documented way); PostgreSQL
        // plans it from its statistics.
        const unscoped = query.ownerId === undefined && query.folderId === undefined && engine === 'sqlite';
        q = unscoped ? q.where(sql`+${sql.ref('status')}`, 'in', query.states) : q.where('status', 'in', query.states);
      }
      if (query.folderId === null) q = q.where('folder_id', 'is', null);
      else if (query.folderId !== undefined) q = q.where('folder_id', '=', query.folderId);
      const before = query.before;
      if (before) q = q.where(listedAfter(before));
      q = unexpired(q, query.liveAt);
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
      return rows.map(toFile);
    },
    async blockByDigest(sha256, _at) {
      const result = await db
        .updateTable('files')
        .set({ status: FileStatus.Blocked })
        .where('sha256', '=', sha256)
        .where('status', '=', FileStatus.Active)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async rename(id, name, liveAt) {
      const query = db.updateTable('files').set({ name }).where('id', '=', id).where('status', 'in', LIVE);
      const result = await unexpired(query, liveAt).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async setExpiry(id, expiresAt, liveAt) {
      const query = db.updateTable('files').set({ expires_at: expiresAt }).where('id', '=', id).where('status', 'in', LIVE);
      const result = await unexpired(query, liveAt).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async namesTaken({ ownerId, folderId, exceptId, liveAt }, names) {
      if (names.length === 0) return new Set();
      let q = db.selectFrom('files').select('name').where('owner_id', '=', ownerId).where('status', 'in', LIVE).where('name', 'in', names);
      q = unexpired(q, liveAt);
      q = folderId === null ? q.where('folder_id', 'is', null) : q.where('folder_id', '=', folderId);
      if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
      return new Set((await q.execute()).map((row) => row.name));
    },
    async moveAll(fromFolderId, toFolderId) {
      const result = await db
        .updateTable('files')
        .set({ folder_id: toFolderId })
        .where('folder_id', '=', fromFolderId)
        .where('status', 'in', LIVE)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async browse(query) {
      let q = select().where('owner_id', '=', query.ownerId).where('status', 'in', query.states);
      if (query.folderId === null) q = q.where('folder_id', 'is', null);
      else if (query.folderId !== undefined) q = q.where('folder_id', '=', query.folderId);
      if (query.nameContains) q = q.where(containsText(engine, 'name', query.nameContains));
      q = unexpired(q, query.liveAt);
      const key = sortKey(query.sort);
      const direction = sql.raw(query.descending ? 'desc' : 'asc');
      if (query.after) {
        // A row-value comparison over (key, id), as listedAfter: one range, the id breaking ties.
        const after = query.after;
        q = q.where(sql<SqlBool>`(${key}, ${sql.ref('id')}) ${sql.raw(query.descending ? '<' : '>')} (${sortKey(query.sort, after.key)}, ${after.id})`);
      }
      const rows = await q
        .orderBy(sql`${key} ${direction}`)
        .orderBy(sql`${sql.ref('id')} ${direction}`)
        .limit(query.limit)
        .execute();
      return rows.map(toFile);
    },
    async addBytesServed(id, bytes) {
      if (bytes <= 0) return;
      await db
        .updateTable('files')
        .set((eb) => ({ bytes_served: eb('bytes_served', '+', bytes) }))
        .where('id', '=', id)
        .execute();
    },
    async addDownloads(id, { starts, lastStartAt, bytesServed }) {
      if (starts <= 0 && bytesServed <= 0) return;
      await db
        .updateTable('files')
        .set((eb) => ({
          downloads: eb('downloads', '+', starts),
          bytes_served: eb('bytes_served', '+', bytesServed),
          ...(lastStartAt === null
            ? {}
            : {
                last_download_at: eb
                  .case()
                  .when(eb.or([eb('last_download_at', 'is', null), eb('last_download_at', '<', lastStartAt)]))
                  .then(lastStartAt)
                  .else(eb.ref('last_download_at'))
                  .end(),
              }),
        }))
        .where('id', '=', id)
        .execute();
    },
    async activeIn({ ownerId, folderId, liveAt }, { name, after, limit }) {
      let q = select().where('owner_id', '=', ownerId).where('status', '=', FileStatus.Active);
      q = unexpired(q, liveAt);
      q = folderId === null ? q.where('folder_id', 'is', null) : q.where('folder_id', '=', folderId);
      if (name !== undefined) q = q.where('name', '=', name);
      if (after) {
        q = q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
      }
      const rows = await q.orderBy('created_at').orderBy('id').limit(limit).execute();
      return rows.map(toFile);
    },
  };
}
