import type { Kysely } from 'kysely';

/**
 * Bytes served per UTC day, for the console's chart: files keep one running total each
 * (files.bytes_served), which says nothing about when. One row per day, keyed by the day
 * number (floor(epoch ms / 86 400 000)), added to by an upsert with each download's
 * bytes. Downloads are not counted here: a download start is counted elsewhere
 * (files.downloads, once per response from byte 0), not where its bytes are.
 * Additive: servers of the previous version ignore the table (and count nothing in it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('served_days')
    .addColumn('day', 'integer', (c) => c.primaryKey())
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('served_days').execute();
}
