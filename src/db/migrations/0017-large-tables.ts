import { type Kysely, sql } from 'kysely';

/**
 * Issue 28 (internet-scale tables): indexes for the queries that read beyond one account
 * or folder on a table of millions of rows, and a cache of finished days for the console.
 *
 * - files_folder_status (folder_id, status): the folder's size after a move
 *   (folderActiveBytes) and the folder totals of a listing (activeTotals) read only that
 *   folder's files of that state. Without it SQLite, which has no statistics until
 *   `PRAGMA optimize` runs, chose files_status (status, ...) and read every active file
 *   of the site (227–291 ms at a million rows, against 3–4 ms).
 * - files_created (created_at, id): the operator's lists across all accounts (`files
 *   list` without --login, the console's file search), newest first, one range per page;
 *   a day's uploads; gc's expiry walk in upload order.
 * - files_deleted (deleted_at), partial: the files deleted on a day, for the day figures.
 * - site_days: the console's day figures, each finished day computed once (from the day
 *   before it and that day's changes) and kept (services/stats-history-service.ts).
 *   Derivable from files at any time, so it may be emptied; additive (older servers
 *   ignore it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('files_folder_status').on('files').columns(['folder_id', 'status']).execute();
  await db.schema.createIndex('files_created').on('files').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('files_deleted').on('files').column('deleted_at').where(sql.ref('deleted_at'), 'is not', null).execute();
  await db.schema
    .createTable('site_days')
    .addColumn('day', 'integer', (c) => c.primaryKey())
    .addColumn('uploads', 'bigint', (c) => c.notNull())
    .addColumn('uploaded_bytes', 'bigint', (c) => c.notNull())
    .addColumn('file_bytes', 'bigint', (c) => c.notNull())
    .addColumn('stored_bytes', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('site_days').execute();
  await db.schema.dropIndex('files_deleted').execute();
  await db.schema.dropIndex('files_created').execute();
  await db.schema.dropIndex('files_folder_status').execute();
}
