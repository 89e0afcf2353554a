import { type Kysely, sql } from 'kysely';

/**
 * File expiry (issue 25): `files.expires_at`, the moment (epoch ms) from which a file
 * behaves as deleted everywhere, decided per request against the clock; null = never.
 * gc then marks such files deleted and releases their blobs, reading them through
 * `files_expires`, a partial index of the files that have an expiry at all (most have
 * none), in expiry order. `resumable_uploads.expires_in` keeps what a tus upload asked
 * for in its metadata (seconds; null = not asked), applied when the upload is stored.
 * Additive: servers of the previous version ignore both columns (and so never expire).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('files').addColumn('expires_at', 'bigint').execute();
  await db.schema.createIndex('files_expires').on('files').columns(['expires_at', 'id']).where(sql.ref('expires_at'), 'is not', null).execute();
  await db.schema.alterTable('resumable_uploads').addColumn('expires_in', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resumable_uploads').dropColumn('expires_in').execute();
  await db.schema.dropIndex('files_expires').execute();
  await db.schema.alterTable('files').dropColumn('expires_at').execute();
}
