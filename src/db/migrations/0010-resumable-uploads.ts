import type { Kysely } from 'kysely';

/**
 * Issue 11: resumable (tus) uploads. An upload in progress is a row naming its owner, the
 * file it will become and the saved state of its SHA-256, so any server can take the next
 * PATCH; a short-lived lock row per upload keeps two servers from writing it at once.
 * Additive: servers of the previous version ignore both tables.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('resumable_uploads')
    .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('folder_id', 'varchar(32)')
    .addColumn('length', 'bigint', (c) => c.notNull())
    .addColumn('reservation_id', 'bigint')
    .addColumn('digest_checkpoints', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('file_id', 'varchar(32)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('resumable_uploads_expiry').on('resumable_uploads').column('expires_at').execute();
  await db.schema.createIndex('resumable_uploads_account').on('resumable_uploads').column('account_id').execute();
  await db.schema
    .createTable('upload_locks')
    .addColumn('upload_id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('holder', 'varchar(255)', (c) => c.notNull())
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .addColumn('release_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('upload_locks').execute();
  await db.schema.dropTable('resumable_uploads').execute();
}
