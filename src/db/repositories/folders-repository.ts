import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { FoldersRepository } from './repositories.js';
import { toFolder, translateDuplicate } from './rows.js';

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
    async children(id) {
      const rows = await db.selectFrom('folders').selectAll().where('parent_id', '=', id).orderBy('name').execute();
      return rows.map(toFolder);
    },
    async remove(id) {
      await db.deleteFrom('folders').where('id', '=', id).execute();
    },
  };
}
