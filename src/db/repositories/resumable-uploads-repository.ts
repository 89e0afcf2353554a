import type { Kysely, Selectable } from 'kysely';
import type { Database, ResumableUploadsTable } from '../database.js';
import type { ResumableUploadRecord, ResumableUploadsRepository, UploadLocksRepository } from './repositories.js';

/** PostgreSQL returns bigint columns as strings. */
function toRecord(row: Selectable<ResumableUploadsTable>): ResumableUploadRecord {
  return {
    id: row.id,
    accountId: Number(row.account_id),
    filename: row.filename,
    folderId: row.folder_id,
    length: Number(row.length),
    reservationId: row.reservation_id === null ? null : Number(row.reservation_id),
    digestCheckpoints: row.digest_checkpoints,
    fileId: row.file_id,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    expiresIn: row.expires_in === null || row.expires_in === undefined ? null : Number(row.expires_in),
    concat: row.concat ?? null,
  };
}

export function resumableUploadsRepository(db: Kysely<Database>): ResumableUploadsRepository {
  return {
    async create(row) {
      await db
        .insertInto('resumable_uploads')
        .values({
          id: row.id,
          account_id: row.accountId,
          filename: row.filename,
          folder_id: row.folderId,
          length: row.length,
          reservation_id: row.reservationId,
          created_at: row.createdAt,
          expires_at: row.expiresAt,
          expires_in: row.expiresIn ?? null,
          concat: row.concat ?? null,
        })
        .execute();
    },
    async byId(id) {
      const row = await db.selectFrom('resumable_uploads').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toRecord(row) : null;
    },
    async saveCheckpoints(id, checkpoints) {
      await db.updateTable('resumable_uploads').set({ digest_checkpoints: checkpoints }).where('id', '=', id).where('file_id', 'is', null).execute();
    },
    async markStored(id, fileId, concat) {
      const result = await db
        .updateTable('resumable_uploads')
        .set({ file_id: fileId, digest_checkpoints: '[]', ...(concat === undefined ? {} : { concat }) })
        .where('id', '=', id)
        .where('file_id', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async take(id) {
      const row = await db.deleteFrom('resumable_uploads').where('id', '=', id).returningAll().executeTakeFirst();
      return row ? toRecord(row) : null;
    },
    async expired(now, limit) {
      const rows = await db.selectFrom('resumable_uploads').selectAll().where('expires_at', '<', now).orderBy('expires_at').limit(limit).execute();
      return rows.map(toRecord);
    },
  };
}

export function uploadLocksRepository(db: Kysely<Database>): UploadLocksRepository {
  return {
    async take(uploadId, holder, until, now) {
      // One statement: a missing row is inserted, an expired one taken over, a live one
      // left alone; the engines' row locks on the key decide a race between two takers.
      const result = await db
        .insertInto('upload_locks')
        .values({ upload_id: uploadId, holder, lease_until: until, release_requested: 0 })
        .onConflict((conflict) =>
          conflict.column('upload_id').doUpdateSet({ holder, lease_until: until, release_requested: 0 }).where('upload_locks.lease_until', '<', now),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },
    async renew(uploadId, holder, until) {
      const row = await db
        .updateTable('upload_locks')
        .set({ lease_until: until })
        .where('upload_id', '=', uploadId)
        .where('holder', '=', holder)
        .returning('release_requested')
        .executeTakeFirst();
      return { held: row !== undefined, releaseRequested: row !== undefined && Number(row.release_requested) !== 0 };
    },
    async requestRelease(uploadId) {
      await db.updateTable('upload_locks').set({ release_requested: 1 }).where('upload_id', '=', uploadId).execute();
    },
    async release(uploadId, holder) {
      await db.deleteFrom('upload_locks').where('upload_id', '=', uploadId).where('holder', '=', holder).execute();
    },
    async releaseServer(prefix, keep) {
      // Compared by substr, not LIKE: a server name may hold `_`, a LIKE wildcard.
      const result = await db
        .deleteFrom('upload_locks')
        .where((eb) => eb(eb.fn('substr', ['holder', eb.val(1), eb.val(prefix.length)]), '=', prefix))
        .where((eb) => eb(eb.fn('substr', ['holder', eb.val(1), eb.val(keep.length)]), '<>', keep))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
