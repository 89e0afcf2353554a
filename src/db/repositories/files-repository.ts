import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import { FileStatus } from '../../domain/types.js';
import type { FilesRepository } from './repositories.js';
import { listedAfter, toFile, translateDuplicate } from './rows.js';

export function filesRepository(db: Kysely<Database>): FilesRepository {
  const select = () => db.selectFrom('files').selectAll();
  return {
    async create(file) {
      const row = await translateDuplicate(
        db
          .insertInto('files')
          .values({
            id: file.id,
            owner_id: file.ownerId,
            folder_id: file.folderId,
            name: file.name,
            size: file.size,
            sha256: file.sha256,
            status: FileStatus.Active,
            delete_hash: file.deleteHash,
            created_at: file.createdAt,
            deleted_at: null,
            downloads: 0,
            last_download_at: null,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
        `file id ${file.id} exists`,
      );
      return toFile(row);
    },
    async byId(id) {
      const row = await select().where('id', '=', id).executeTakeFirst();
      return row ? toFile(row) : null;
    },
    async deleteHash(id) {
      const row = await db.selectFrom('files').select('delete_hash').where('id', '=', id).executeTakeFirst();
      return row?.delete_hash ?? null;
    },
    async setStatus(id, from, to, at) {
      const result = await db
        .updateTable('files')
        .set(to === FileStatus.Deleted ? { status: to, deleted_at: at } : { status: to })
        .where('id', '=', id)
        .where('status', 'in', from)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async moveOwned(ids, ownerId, folderId) {
      if (ids.length === 0) return 0;
      const result = await db
        .updateTable('files')
        .set({ folder_id: folderId })
        .where('id', 'in', ids)
        .where('owner_id', '=', ownerId)
        .where('status', '!=', FileStatus.Deleted)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async byIds(ids) {
      if (ids.length === 0) return [];
      return (await select().where('id', 'in', ids).execute()).map(toFile);
    },
    async inFolder(folderId, states) {
      const rows = await select()
        .where('folder_id', '=', folderId)
        .where('status', 'in', states)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toFile);
    },
    async folderActiveBytes(folderId) {
      const row = await db
        .selectFrom('files')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('bytes'))
        .where('folder_id', '=', folderId)
        .where('status', '=', FileStatus.Active)
        .executeTakeFirstOrThrow();
      return Number(row.bytes);
    },
    async liveReferenceExists(sha256) {
      const row = await db
        .selectFrom('files')
        .select('id')
        .where('sha256', '=', sha256)
        .where('status', '!=', FileStatus.Deleted)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },
    async recordDownload(id, at) {
      await db
        .updateTable('files')
        .set((eb) => ({ downloads: eb('downloads', '+', 1), last_download_at: at }))
        .where('id', '=', id)
        .execute();
    },
    async detachDeleted(folderId) {
      await db
        .updateTable('files')
        .set({ folder_id: null })
        .where('folder_id', '=', folderId)
        .where('status', '=', FileStatus.Deleted)
        .execute();
    },
    async list(query) {
      let q = select();
      if (query.ownerId !== undefined) q = q.where('owner_id', '=', query.ownerId);
      if (query.states && query.states.length > 0) q = q.where('status', 'in', query.states);
      if (query.folderId === null) q = q.where('folder_id', 'is', null);
      else if (query.folderId !== undefined) q = q.where('folder_id', '=', query.folderId);
      const before = query.before;
      if (before) q = q.where(listedAfter(before));
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
    async addBytesServed(id, bytes) {
      if (bytes <= 0) return;
      await db
        .updateTable('files')
        .set((eb) => ({ bytes_served: eb('bytes_served', '+', bytes) }))
        .where('id', '=', id)
        .execute();
    },
  };
}
