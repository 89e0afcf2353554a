import { type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { Database, UploadRequestSlotsTable, UploadRequestsTable } from '../database.js';
import type { UploadRequestRecord, UploadRequestSlot, UploadRequestsRepository } from './repositories.js';
import { listedAfter, translateDuplicate } from './rows.js';

// PostgreSQL returns bigint columns as strings; Number() keeps the mappers dialect-neutral.
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function toRequest(row: Selectable<UploadRequestsTable>): UploadRequestRecord {
  return {
    id: row.id,
    ownerId: Number(row.owner_id),
    folderId: row.folder_id,
    title: row.title,
    message: row.message,
    passwordHash: row.password_hash,
    expiresAt: numOrNull(row.expires_at),
    maxFiles: numOrNull(row.max_files),
    maxBytes: numOrNull(row.max_bytes),
    maxFileSize: numOrNull(row.max_file_size),
    files: Number(row.files),
    bytes: Number(row.bytes),
    createdAt: Number(row.created_at),
    closed: Number(row.closed) === 1,
  };
}

function toSlot(row: Selectable<UploadRequestSlotsTable>): UploadRequestSlot {
  return {
    id: Number(row.id),
    requestId: row.request_id,
    bytes: Number(row.bytes),
    leaseUntil: Number(row.lease_until),
    createdAt: Number(row.created_at),
    uploadId: row.upload_id,
  };
}

/** Slot ids per renewing statement. */
const RENEW_SLICE = 500;

export function uploadRequestsRepository(db: Kysely<Database>): UploadRequestsRepository {
  return {
    async create(request) {
      const row = await translateDuplicate(
        db
          .insertInto('upload_requests')
          .values({
            id: request.id,
            owner_id: request.ownerId,
            folder_id: request.folderId,
            title: request.title,
            message: request.message,
            password_hash: request.passwordHash,
            expires_at: request.expiresAt,
            max_files: request.maxFiles,
            max_bytes: request.maxBytes,
            max_file_size: request.maxFileSize,
            created_at: request.createdAt,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
        `upload request id ${request.id} exists`,
      );
      return toRequest(row);
    },
    async byId(id) {
      const row = await db.selectFrom('upload_requests').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toRequest(row) : null;
    },
    async listOwned(ownerId, { limit, before }) {
      let q = db.selectFrom('upload_requests').selectAll().where('owner_id', '=', ownerId).where('closed', '=', 0);
      if (before) q = q.where(listedAfter(before));
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toRequest);
    },
    async change(id, changes) {
      const set: Updateable<UploadRequestsTable> = {};
      if (changes.title !== undefined) set.title = changes.title;
      if (changes.message !== undefined) set.message = changes.message;
      if (changes.passwordHash !== undefined) set.password_hash = changes.passwordHash;
      if (changes.expiresAt !== undefined) set.expires_at = changes.expiresAt;
      if (changes.maxFiles !== undefined) set.max_files = changes.maxFiles;
      if (changes.maxBytes !== undefined) set.max_bytes = changes.maxBytes;
      if (changes.maxFileSize !== undefined) set.max_file_size = changes.maxFileSize;
      if (Object.keys(set).length === 0) return (await this.byId(id)) !== null;
      const result = await db.updateTable('upload_requests').set(set).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async close(id) {
      const result = await db.updateTable('upload_requests').set({ closed: 1 }).where('id', '=', id).where('closed', '=', 0).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async countStored(id, bytes) {
      await db
        .updateTable('upload_requests')
        .set((eb) => ({ files: eb('files', '+', 1), bytes: eb('bytes', '+', bytes) }))
        .where('id', '=', id)
        .execute();
    },
    async openSlot(slot) {
      const inserted = await db
        .insertInto('upload_request_slots')
        .values({ request_id: slot.requestId, bytes: slot.bytes, lease_until: slot.leaseUntil, created_at: slot.createdAt, upload_id: slot.uploadId ?? null })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(inserted.id);
    },
    async slotOfUpload(uploadId) {
      const row = await db.selectFrom('upload_request_slots').selectAll().where('upload_id', '=', uploadId).executeTakeFirst();
      return row ? toSlot(row) : null;
    },
    async bindUpload(uploadId, requestId, at) {
      await db.insertInto('upload_request_uploads').values({ upload_id: uploadId, request_id: requestId, created_at: at }).execute();
    },
    async requestOfUpload(uploadId) {
      const row = await db.selectFrom('upload_request_uploads').select('request_id').where('upload_id', '=', uploadId).executeTakeFirst();
      return row?.request_id ?? null;
    },
    async unbindUpload(uploadId) {
      await db.deleteFrom('upload_request_uploads').where('upload_id', '=', uploadId).execute();
    },
    async takeSlot(id) {
      // DELETE … RETURNING: of two callers taking one slot, one gets it.
      const row = await db.deleteFrom('upload_request_slots').where('id', '=', id).returningAll().executeTakeFirst();
      return row ? toSlot(row) : null;
    },
    async dropLapsedSlots(requestId, now) {
      const result = await db.deleteFrom('upload_request_slots').where('request_id', '=', requestId).where('lease_until', '<', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async slotsInFlight(requestId, now) {
      const row = await db
        .selectFrom('upload_request_slots')
        .select((eb) => [eb.fn.countAll<number>().as('files'), eb.fn.coalesce(eb.fn.sum<number>('bytes'), sql<number>`0`).as('bytes')])
        .where('request_id', '=', requestId)
        .where('lease_until', '>=', now)
        .executeTakeFirstOrThrow();
      return { files: Number(row.files), bytes: Number(row.bytes) };
    },
    async renewSlots(ids, leaseUntil) {
      let renewed = 0;
      for (let start = 0; start < ids.length; start += RENEW_SLICE) {
        const slice = ids.slice(start, start + RENEW_SLICE);
        const result = await db.updateTable('upload_request_slots').set({ lease_until: leaseUntil }).where('id', 'in', slice).executeTakeFirst();
        renewed += Number(result.numUpdatedRows);
      }
      return renewed;
    },
  };
}
