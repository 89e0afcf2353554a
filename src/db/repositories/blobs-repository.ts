import type { Kysely } from 'kysely';
import { FileStatus } from '../../domain/types.js';
import { definedQuery } from '../compiled-query.js';
import type { Database } from '../database.js';
import type { BlacklistRepository, BlobsRepository } from './repositories.js';

// Every upload runs these in its transaction: compiled once, not per transaction (issue 28).
const blobByDigest = definedQuery([''], (db: Kysely<Database>, sha256: string) =>
  db.selectFrom('blobs').select(['sha256', 'object_key']).where('sha256', '=', sha256),
);
const insertBlob = definedQuery(['', 1, 2, 'key'], (db: Kysely<Database>, sha256: string, size: number, at: number, key: string) =>
  db.insertInto('blobs').values({ sha256, size, created_at: at, object_key: key }),
);
const blacklistedDigest = definedQuery([''], (db: Kysely<Database>, sha256: string) =>
  db.selectFrom('blacklist').select('sha256').where('sha256', '=', sha256),
);
const namePatterns = definedQuery([], (db: Kysely<Database>) => db.selectFrom('blacklist_names').selectAll().orderBy('created_at').orderBy('pattern'));

export function blobsRepository(db: Kysely<Database>): BlobsRepository {
  return {
    async keyOf(sha256) {
      const [row] = await blobByDigest(db, sha256);
      // Rows from before 0006 that the migration could not fill name their digest.
      return row ? (row.object_key ?? row.sha256) : null;
    },
    async insert(sha256, size, key, at) {
      await insertBlob(db, sha256, size, at, key);
    },
    async removeIfUnreferenced(sha256) {
      // Under the digest's lock no file row of this digest can appear, so the check and
      // the removal need not be one statement; as one they also hold without the lock.
      const row = await db
        .deleteFrom('blobs')
        .where('sha256', '=', sha256)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('files').select('files.id').where('files.sha256', '=', sha256).where('files.status', '!=', FileStatus.Deleted))),
        )
        .returning(['sha256', 'object_key'])
        .executeTakeFirst();
      return row ? (row.object_key ?? row.sha256) : null;
    },
    async namesKey(key) {
      const row = await db
        .selectFrom('blobs')
        .select('sha256')
        .where((eb) => eb.or([eb('object_key', '=', key), eb.and([eb('object_key', 'is', null), eb('sha256', '=', key)])]))
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

export function blacklistRepository(db: Kysely<Database>): BlacklistRepository {
  return {
    async has(sha256) {
      return (await blacklistedDigest(db, sha256)).length > 0;
    },
    async add(sha256, reason, at) {
      await db
        .insertInto('blacklist')
        .values({ sha256, reason, created_at: at })
        .onConflict((oc) => oc.column('sha256').doNothing())
        .execute();
    },
    async remove(sha256) {
      const result = await db.deleteFrom('blacklist').where('sha256', '=', sha256).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
    async list() {
      const rows = await db.selectFrom('blacklist').selectAll().orderBy('created_at').execute();
      return rows.map((r) => ({ sha256: r.sha256, reason: r.reason, createdAt: Number(r.created_at) }));
    },
    async addName(pattern, reason, at) {
      await db
        .insertInto('blacklist_names')
        .values({ pattern, reason, created_at: at })
        .onConflict((oc) => oc.column('pattern').doNothing())
        .execute();
    },
    async removeName(pattern) {
      const result = await db.deleteFrom('blacklist_names').where('pattern', '=', pattern).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
    async names() {
      const rows = await namePatterns(db);
      return rows.map((r) => ({ pattern: r.pattern, reason: r.reason, createdAt: Number(r.created_at) }));
    },
  };
}
