import type { Kysely } from 'kysely';

/**
 * Issue 25: shares. A share is a link (its id, from ids.linkId()) to one file or one folder
 * of its owner, with an optional password hash, expiry and download limit, and the count of
 * downloads so far, which one conditional UPDATE takes (shares-repository.ts). A revoked
 * share keeps its row with `revoked_at` set, so its id is never handed out again and the
 * link answers errorShareNotFound forever. Additive: servers of the previous version ignore
 * the table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('shares')
    .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('file_id', 'varchar(32)')
    .addColumn('folder_id', 'varchar(32)')
    .addColumn('password_hash', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('max_downloads', 'bigint')
    .addColumn('downloads', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('fast', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  // The owner's list, newest first, keyset-paged on (created_at, id) like GET /files.
  await db.schema.createIndex('shares_owner_created').on('shares').columns(['owner_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('shares').execute();
}
