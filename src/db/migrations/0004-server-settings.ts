import type { Kysely } from 'kysely';

/** Facts about the installation itself, such as the fingerprint of the server secret. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('server_settings')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('value', 'varchar(1024)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('server_settings').execute();
}
