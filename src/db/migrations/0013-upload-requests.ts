import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * Upload requests (issue 25): a link where others upload into the owner's folder, with
 * limits on the number of files, their bytes together and each file's size. `files` and
 * `bytes` count the files stored through it, written in each file's own transaction.
 * Uploads still arriving hold a slot (upload_request_slots): its bytes and one file count
 * against the limits until the upload is stored (the slot becomes the counts) or given up
 * (the slot goes); a slot whose lease ran out (its server died) counts no more and is
 * deleted by the next check (sharing/request-slots.ts). A resumable upload's slot names its
 * upload and lasts until the upload expires: it binds the upload to the request.
 * Additive: servers of the previous version ignore both tables.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('upload_requests')
    .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('folder_id', 'varchar(16)')
    .addColumn('title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('password_hash', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('max_files', 'bigint')
    .addColumn('max_bytes', 'bigint')
    .addColumn('max_file_size', 'bigint')
    .addColumn('files', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('closed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('upload_requests_owner_created').on('upload_requests').columns(['owner_id', 'created_at', 'id']).execute();
  await db.schema
    .createTable('upload_request_slots')
    .addColumn('id', isPostgres(db) ? 'bigserial' : 'integer', (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('request_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // The resumable upload holding the slot (its tus id); null for a multipart upload.
    .addColumn('upload_id', 'varchar(64)')
    .execute();
  await db.schema.createIndex('upload_request_slots_upload').on('upload_request_slots').column('upload_id').execute();
  await db.schema.createIndex('upload_request_slots_request').on('upload_request_slots').column('request_id').execute();
  // Which request a resumable upload goes into, for as long as the upload's row lives (its
  // slot goes when the file is stored; a retried last PATCH or a HEAD still needs this).
  await db.schema
    .createTable('upload_request_uploads')
    .addColumn('upload_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('request_id', 'varchar(32)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('upload_request_uploads').execute();
  await db.schema.dropTable('upload_request_slots').execute();
  await db.schema.dropTable('upload_requests').execute();
}
