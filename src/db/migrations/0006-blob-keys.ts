import type { Kysely } from 'kysely';

/**
 * A blob row names the key its bytes are stored under (blob/blob-store.ts): the digest on
 * the local store, an upload's own object key on S3, which keeps an upload where it was
 * written instead of copying it to a digest-named key. Rows from before name their digest,
 * which is the local store's key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('blobs').addColumn('object_key', 'varchar(255)').execute();
  await db
    .updateTable('blobs')
    .set((eb) => ({ object_key: eb.ref('sha256') }))
    .execute();
  await db.schema.createIndex('blobs_object_key').unique().on('blobs').column('object_key').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('blobs_object_key').execute();
  await db.schema.alterTable('blobs').dropColumn('object_key').execute();
}
