import type { Kysely } from 'kysely';

/**
 * Web sign-in sessions ("The public site"). The cookie holds a random 256-bit token;
 * the row is keyed by its SHA-256, so a leaked database holds no usable session.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('csrf_secret', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_account').on('sessions').column('account_id').execute();
  await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sessions').execute();
}
