import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database, SharesTable } from '../database.js';
import type { ShareRecord, SharesRepository } from './repositories.js';
import { translateDuplicate } from './rows.js';

/** PostgreSQL returns bigint columns as strings. */
const nullableNumber = (value: number | string | null) => (value === null ? null : Number(value));

function toShare(row: Selectable<SharesTable>): ShareRecord {
  return {
    id: row.id,
    ownerId: Number(row.owner_id),
    fileId: row.file_id,
    folderId: row.folder_id,
    passwordHash: row.password_hash,
    expiresAt: nullableNumber(row.expires_at),
    maxDownloads: nullableNumber(row.max_downloads),
    downloads: Number(row.downloads),
    fast: Number(row.fast) === 1,
    createdAt: Number(row.created_at),
    revokedAt: nullableNumber(row.revoked_at),
  };
}

export function sharesRepository(db: Kysely<Database>): SharesRepository {
  return {
    async create(share) {
      const row = {
        id: share.id,
        owner_id: share.ownerId,
        file_id: share.fileId,
        folder_id: share.folderId,
        password_hash: share.passwordHash,
        expires_at: share.expiresAt,
        max_downloads: share.maxDownloads,
        downloads: 0,
        fast: share.fast ? 1 : 0,
        created_at: share.createdAt,
        revoked_at: null,
      };
      await translateDuplicate(db.insertInto('shares').values(row).execute(), 'share id');
      return toShare(row);
    },
    async byId(id) {
      const row = await db.selectFrom('shares').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toShare(row) : null;
    },
    async list({ ownerId, before, limit }) {
      let query = db.selectFrom('shares').selectAll().where('owner_id', '=', ownerId).where('revoked_at', 'is', null);
      if (before) {
        query = query.where((eb) =>
          eb.or([eb('created_at', '<', before.createdAt), eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)])]),
        );
      }
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toShare);
    },
    async change(id, ownerId, changes) {
      const set: Updateable<SharesTable> = {};
      if (changes.expiresAt !== undefined) set.expires_at = changes.expiresAt;
      if (changes.passwordHash !== undefined) set.password_hash = changes.passwordHash;
      if (changes.maxDownloads !== undefined) set.max_downloads = changes.maxDownloads;
      if (changes.fast !== undefined) set.fast = changes.fast ? 1 : 0;
      if (Object.keys(set).length > 0) {
        const result = await db
          .updateTable('shares')
          .set(set)
          .where('id', '=', id)
          .where('owner_id', '=', ownerId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return null;
      }
      const row = await db
        .selectFrom('shares')
        .selectAll()
        .where('id', '=', id)
        .where('owner_id', '=', ownerId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return row ? toShare(row) : null;
    },
    async revoke(id, ownerId, at) {
      const result = await db
        .updateTable('shares')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('owner_id', '=', ownerId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async countDownload(id, now) {
      // The decision is this one statement. On PostgreSQL (READ COMMITTED) a concurrent
      // UPDATE of the row waits for the other's commit and then evaluates the WHERE again
      // on the row as it committed it; on SQLite statements run one at a time. Either way
      // no two counts ever read the same `downloads`, so at most max_downloads succeed.
      const result = await db
        .updateTable('shares')
        .set((eb) => ({ downloads: eb('downloads', '+', 1) }))
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .where((eb) => eb.or([eb('max_downloads', 'is', null), eb('downloads', '<', eb.ref('max_downloads'))]))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return null;
      // Refused: say why (a read only for the answer; the refusal itself is already decided).
      const row = await db.selectFrom('shares').select(['revoked_at', 'expires_at']).where('id', '=', id).executeTakeFirst();
      if (!row || row.revoked_at !== null) return 'not-found';
      if (row.expires_at !== null && Number(row.expires_at) <= now) return 'expired';
      return 'limit';
    },
  };
}
