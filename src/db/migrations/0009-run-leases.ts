import type { Kysely } from 'kysely';

/**
 * Issue 10: jobs that one server of a fleet runs at a time (gc) hold a named lease, a row
 * with its holder and an end. A holder renews it while it works; a holder that dies lets
 * it run out. Additive: servers of the previous version ignore the table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('run_leases')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('holder', 'varchar(255)', (c) => c.notNull())
    .addColumn('lease_until', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('run_leases').execute();
}
