import type { Kysely } from 'kysely';

/**
 * Addresses that have signed in to a login: the per-login sign-in limit does not lock
 * them out (limits/known-sign-in-addresses.ts). The id is a keyed hash of login and
 * address, so the table holds neither.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sign_in_addresses')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('last_success_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_addresses_last_success').on('sign_in_addresses').column('last_success_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sign_in_addresses').execute();
}
