import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

/** Issue 3: audit log, blacklisted name patterns, upload volume log, traffic served. */
export async function up(db: Kysely<any>): Promise<void> {
  const serialId = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', isPostgres(db) ? 'bigserial' : 'integer', (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()));

  await serialId('audit_log')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('actor', 'varchar(255)', (c) => c.notNull())
    .addColumn('action', 'varchar(64)', (c) => c.notNull())
    .addColumn('object', 'varchar(255)', (c) => c.notNull())
    .addColumn('details', 'varchar(1024)', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();

  await db.schema
    .createTable('blacklist_names')
    .addColumn('pattern', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('reason', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await serialId('upload_log')
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('upload_log_account_at').on('upload_log').columns(['account_id', 'at']).execute();

  await db.schema
    .alterTable('files')
    .addColumn('bytes_served', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('files_status').on('files').columns(['status', 'last_download_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('files_status').execute();
  await db.schema.alterTable('files').dropColumn('bytes_served').execute();
  for (const table of ['upload_log', 'blacklist_names', 'audit_log']) await db.schema.dropTable(table).execute();
}
