import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * Issue 14: bytes taken from an account for a transfer in flight (premium traffic of a
 * direct download, upload volume of an upload) are a row, written in the transaction that
 * takes them, so a server that dies mid-transfer leaves a record another start or gc
 * settles (services/reservations-service.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('reservations')
    .addColumn('id', isPostgres(db) ? 'bigserial' : 'integer', (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('planned', 'bigint', (c) => c.notNull())
    .addColumn('settled', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('server', 'varchar(255)', (c) => c.notNull())
    .addColumn('instance', 'varchar(64)', (c) => c.notNull())
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('reservations_account_kind').on('reservations').columns(['account_id', 'kind']).execute();
  await db.schema.createIndex('reservations_instance').on('reservations').column('instance').execute();
  await db.schema.createIndex('reservations_lease').on('reservations').column('lease_until').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('reservations').execute();
}
