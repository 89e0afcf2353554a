import type { Kysely } from 'kysely';

/**
 * Issue 28: tus's concatenation extension (parallel uploads). `resumable_uploads.concat`
 * says what a row is in it: null for a whole upload (every row before this), `partial`
 * for a partial upload (its bytes wait for a final upload and never become a file of
 * their own; `partial;<final id>` once one did), `final;<id> <id>...` for a final upload (a file made of those partials, in
 * that order). Additive: servers of the previous version ignore the column; they do not
 * advertise `concatenation` either, so a client only sends partials to a fleet whose
 * server answered OPTIONS with it (docs/resumable-uploads.md: rolling upgrades).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resumable_uploads').addColumn('concat', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('resumable_uploads').dropColumn('concat').execute();
}
