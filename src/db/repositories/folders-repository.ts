import type { Kysely } from 'kysely';
import { FileStatus } from '../../domain/types.js';
import type { Database } from '../database.js';
import type { FoldersRepository } from './repositories.js';
import { listedAfter, toFolder, translateDuplicate, unexpiredAt } from './rows.js';

export function foldersRepository(db: Kysely<Database>): FoldersRepository {
  return {
    async create(folder) {
      const row = await translateDuplicate(
        db
          .insertInto('folders')
          .values({
            id: folder.id,
            owner_id: folder.ownerId,
            parent_id: folder.parentId,
            name: folder.name,
            created_at: folder.createdAt,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
        `folder id ${folder.id} exists`,
      );
      return toFolder(row);
    },
    async byId(id) {
      const row = await db.selectFrom('folders').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toFolder(row) : null;
    },
    async children(id, limit) {
      let q = db.selectFrom('folders').selectAll().where('parent_id', '=', id).orderBy('name').orderBy('id');
      if (limit !== undefined) q = q.limit(limit);
      const rows = await q.execute();
      return rows.map(toFolder);
    },
    async remove(id) {
      await db.deleteFrom('folders').where('id', '=', id).execute();
    },
    async list(query) {
      let q = db.selectFrom('folders').selectAll().where('owner_id', '=', query.ownerId);
      if (query.parentId === null) q = q.where('parent_id', 'is', null);
      else if (query.parentId !== undefined) q = q.where('parent_id', '=', query.parentId);
      const before = query.before;
      if (before) q = q.where(listedAfter(before));
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
      return rows.map(toFolder);
    },
    async rename(id, name) {
      const result = await db.updateTable('folders').set({ name }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async namesTaken({ ownerId, folderId, exceptId }, names) {
      if (names.length === 0) return new Set();
      let q = db.selectFrom('folders').select('name').where('owner_id', '=', ownerId).where('name', 'in', names);
      q = folderId === null ? q.where('parent_id', 'is', null) : q.where('parent_id', '=', folderId);
      if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
      return new Set((await q.execute()).map((row) => row.name));
    },
    async moveChildren(fromId, toParentId) {
      const result = await db.updateTable('folders').set({ parent_id: toParentId }).where('parent_id', '=', fromId).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async activeTotals(ids, liveAt) {
      const totals = new Map<string, { files: number; bytes: number }>();
      if (ids.length === 0) return totals;
      let q = db
        .selectFrom('files')
        .select((eb) => ['folder_id', eb.fn.countAll<number>().as('files'), eb.fn.sum<number>('size').as('bytes')])
        .where('folder_id', 'in', ids)
        .where('status', '=', FileStatus.Active);
      if (liveAt !== undefined) q = q.where(unexpiredAt(liveAt));
      const rows = await q.groupBy('folder_id').execute();
      // Numbers from either engine (PostgreSQL returns bigint aggregates as strings).
      for (const row of rows) if (row.folder_id !== null) totals.set(row.folder_id, { files: Number(row.files), bytes: Number(row.bytes) });
      return totals;
    },
    async within({ ownerId, folderId }, name) {
      let q = db.selectFrom('folders').selectAll().where('owner_id', '=', ownerId);
      q = folderId === null ? q.where('parent_id', 'is', null) : q.where('parent_id', '=', folderId);
      if (name !== undefined) q = q.where('name', '=', name);
      const rows = await q.orderBy('created_at').orderBy('id').execute();
      return rows.map(toFolder);
    },
    async relocate(id, parentId, name) {
      const result = await db.updateTable('folders').set({ parent_id: parentId, name }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
