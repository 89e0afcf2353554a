import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', isPostgres(db) ? 'bigserial' : 'integer', (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('login', 'varchar(255)', (c) => c.notNull().unique())
    .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('email', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('balance_cents', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('premium_start', 'bigint')
    .addColumn('premium_end', 'bigint')
    .addColumn('traffic_left', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('api_key_hash', 'varchar(64)', (c) => c.unique())
    .addColumn('api_key_sealed', 'varchar(255)')
    .addColumn('is_operator', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('folders')
    .addColumn('id', 'varchar(16)', (c) => c.primaryKey())
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('parent_id', 'varchar(16)', (c) => c.references('folders.id'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('folders_owner').on('folders').columns(['owner_id', 'parent_id']).execute();

  await db.schema
    .createTable('blobs')
    .addColumn('sha256', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('files')
    .addColumn('id', 'varchar(16)', (c) => c.primaryKey())
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('folder_id', 'varchar(16)', (c) => c.references('folders.id'))
    .addColumn('name', 'varchar(1024)', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
    .addColumn('status', 'varchar(1)', (c) => c.notNull())
    .addColumn('delete_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .addColumn('downloads', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_download_at', 'bigint')
    .execute();
  await db.schema.createIndex('files_owner').on('files').columns(['owner_id', 'created_at']).execute();
  await db.schema.createIndex('files_folder').on('files').column('folder_id').execute();
  await db.schema.createIndex('files_sha256').on('files').columns(['sha256', 'status']).execute();

  await db.schema
    .createTable('blacklist')
    .addColumn('sha256', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('reason', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['blacklist', 'files', 'blobs', 'folders', 'accounts']) {
    await db.schema.dropTable(table).execute();
  }
}
