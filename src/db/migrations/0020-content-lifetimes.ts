import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * Issue 28: files_sha256 gains created_at, (sha256, status, created_at). The console's day
 * figures ask, for each content a day changed, whether some file of it was live at a time
 * (liveBytesChange): with created_at in the index that is one seek per state, where the
 * index of (sha256, status) read every file of the content (407 s for the first overview
 * of a site whose 2 million files share one content). Its other users, the references of
 * a content by state, read the same prefix as before. Same number of indexes: an upload
 * writes no more than it did.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Built beside the old one, then swapped: on PostgreSQL dropping an index locks even
  // reads of the table, which must not last the build (old servers go on serving).
  await db.schema.createIndex('files_sha256_created').on('files').columns(['sha256', 'status', 'created_at']).execute();
  await db.schema.dropIndex('files_sha256').execute();
  await sql`alter index files_sha256_created rename to files_sha256`.execute(db).catch(async (error: unknown) => {
    if (isPostgres(db)) throw error;
    // SQLite cannot rename an index: it keeps the new name.
  });
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex(isPostgres(db) ? 'files_sha256' : 'files_sha256_created').execute();
  await db.schema.createIndex('files_sha256').on('files').columns(['sha256', 'status']).execute();
}
