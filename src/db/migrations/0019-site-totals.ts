import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * Issue 28: the site's totals (files and bytes by state, downloads, bytes served, blobs)
 * kept as they change, so `filehaven stats` and the console's overview read a few rows
 * instead of summing every file (a second per million rows on PostgreSQL).
 *
 * The database keeps them itself: triggers on files and blobs append each change to
 * site_totals as a row of differences (a new file: +1 and its size; a deletion: −1 from
 * one state, +1 to the other). Every writer is covered, whatever its door (API, WebDAV,
 * CLI, gc, an older server on the same database, a migrate's copy), in the writer's own
 * transaction, so the totals are exact whenever a transaction commits. Appending rather
 * than updating one row per state keeps concurrent uploads from queueing on that row (the
 * hot row of issue 28, target 6); a fold (housekeeping.foldTotals, every minute) replaces
 * the rows by their sums. Readers sum whatever rows there are.
 *
 * `kind` is a file state (A, B, D) or `blob`. Derived from files and blobs, so migrate
 * does not copy it: its copy of those tables makes the target's own.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  // Servers of the previous version go on writing while a new one migrates (scaling.md).
  // The triggers need both tables locked against writes: taken up front in an upload's
  // order (blobs, then files), so only a delete (files, then blobs) can meet them in a
  // deadlock, and then this gives up first (under the 1 s deadlock_timeout) and the
  // migrator tries again (migrator.ts): no writer is chosen as the victim.
  if (postgres) {
    await sql`set local lock_timeout = '500ms'`.execute(db);
    await sql`lock table blobs, files in share row exclusive mode`.execute(db);
  }
  await db.schema
    .createTable('site_totals')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('kind', 'varchar(4)', (c) => c.notNull())
    .addColumn('items', 'bigint', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('downloads', 'bigint', (c) => c.notNull())
    .addColumn('served', 'bigint', (c) => c.notNull())
    .execute();
  // Triggers first: on PostgreSQL creating them locks files and blobs against writes until
  // this migration commits (SQLite: one writer), so no change falls between the sums below
  // and the first trigger.
  if (postgres) await postgresTriggers(db);
  else await sqliteTriggers(db);
  await sql`
    insert into site_totals (kind, items, bytes, downloads, served)
    select status, count(*), coalesce(sum(size), 0), coalesce(sum(downloads), 0), coalesce(sum(bytes_served), 0) from files group by status
  `.execute(db);
  await sql`
    insert into site_totals (kind, items, bytes, downloads, served)
    select 'blob', count(*), coalesce(sum(size), 0), 0, 0 from blobs having count(*) > 0
  `.execute(db);
}

/** The columns a trigger appends, and the differences of a file's row. */
const COLUMNS = sql.raw('site_totals (kind, items, bytes, downloads, served)');

async function postgresTriggers(db: Kysely<any>): Promise<void> {
  // The rows go to the site_totals beside the table that changed (tg_table_schema), whatever
  // the writer's search_path, and still after the schema is renamed or restored under
  // another name (a name fixed at creation would then write to another site's table).
  await sql`
    create function site_totals_of_files() returns trigger language plpgsql as $$
    declare
      target text := format('insert into %I.${COLUMNS} values ($1, $2, $3, $4, $5)', tg_table_schema);
    begin
      if tg_op = 'INSERT' then
        execute target using new.status, 1, new.size, new.downloads, new.bytes_served;
      elsif tg_op = 'DELETE' then
        execute target using old.status, -1, -old.size, -old.downloads, -old.bytes_served;
      elsif old.status is distinct from new.status then
        execute target using old.status, -1, -old.size, -old.downloads, -old.bytes_served;
        execute target using new.status, 1, new.size, new.downloads, new.bytes_served;
      else
        execute target using new.status, 0, new.size - old.size, new.downloads - old.downloads, new.bytes_served - old.bytes_served;
      end if;
      return null;
    end $$
  `.execute(db);
  await sql`
    create function site_totals_of_blobs() returns trigger language plpgsql as $$
    declare
      target text := format('insert into %I.${COLUMNS} values ($1, $2, $3, 0, 0)', tg_table_schema);
    begin
      if tg_op = 'INSERT' then
        execute target using 'blob', 1, new.size;
      else
        execute target using 'blob', -1, -old.size;
      end if;
      return null;
    end $$
  `.execute(db);
  await sql`create trigger files_site_totals after insert or delete on files for each row execute function site_totals_of_files()`.execute(db);
  await sql`
    create trigger files_site_totals_changed after update of status, size, downloads, bytes_served on files for each row
    when (old.status is distinct from new.status or old.size is distinct from new.size
      or old.downloads is distinct from new.downloads or old.bytes_served is distinct from new.bytes_served)
    execute function site_totals_of_files()
  `.execute(db);
  await sql`create trigger blobs_site_totals after insert or delete on blobs for each row execute function site_totals_of_blobs()`.execute(db);
}

async function sqliteTriggers(db: Kysely<any>): Promise<void> {
  await sql`
    create trigger files_site_totals_inserted after insert on files begin
      insert into ${COLUMNS} values (new.status, 1, new.size, new.downloads, new.bytes_served);
    end
  `.execute(db);
  await sql`
    create trigger files_site_totals_deleted after delete on files begin
      insert into ${COLUMNS} values (old.status, -1, -old.size, -old.downloads, -old.bytes_served);
    end
  `.execute(db);
  await sql`
    create trigger files_site_totals_changed after update of status, size, downloads, bytes_served on files
    when old.status is not new.status or old.size is not new.size or old.downloads is not new.downloads or old.bytes_served is not new.bytes_served
    begin
      insert into ${COLUMNS} select old.status, -1, -old.size, -old.downloads, -old.bytes_served where old.status is not new.status;
      insert into ${COLUMNS} select new.status, 1, new.size, new.downloads, new.bytes_served where old.status is not new.status;
      insert into ${COLUMNS}
        select new.status, 0, new.size - old.size, new.downloads - old.downloads, new.bytes_served - old.bytes_served where old.status is new.status;
    end
  `.execute(db);
  await sql`create trigger blobs_site_totals_inserted after insert on blobs begin insert into ${COLUMNS} values ('blob', 1, new.size, 0, 0); end`.execute(db);
  await sql`create trigger blobs_site_totals_deleted after delete on blobs begin insert into ${COLUMNS} values ('blob', -1, -old.size, 0, 0); end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger blobs_site_totals on blobs`.execute(db);
    await sql`drop trigger files_site_totals_changed on files`.execute(db);
    await sql`drop trigger files_site_totals on files`.execute(db);
    await sql`drop function site_totals_of_blobs()`.execute(db);
    await sql`drop function site_totals_of_files()`.execute(db);
  } else {
    for (const name of [
      'blobs_site_totals_deleted',
      'blobs_site_totals_inserted',
      'files_site_totals_changed',
      'files_site_totals_deleted',
      'files_site_totals_inserted',
    ]) {
      await sql`drop trigger ${sql.raw(name)}`.execute(db);
    }
  }
  await db.schema.dropTable('site_totals').execute();
}
