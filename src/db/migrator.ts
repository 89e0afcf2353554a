import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import * as initial from './migrations/0001-initial.js';
import * as operatorControls from './migrations/0002-operator-controls.js';
import * as sessions from './migrations/0003-sessions.js';
import * as serverSettings from './migrations/0004-server-settings.js';
import * as signInAddresses from './migrations/0005-sign-in-addresses.js';
import * as blobKeys from './migrations/0006-blob-keys.js';
import * as reservations from './migrations/0007-reservations.js';
import * as listingIndexes from './migrations/0008-listing-indexes.js';
import * as runLeases from './migrations/0009-run-leases.js';
import * as resumableUploads from './migrations/0010-resumable-uploads.js';
import * as dailyServed from './migrations/0011-daily-served.js';
import * as shares from './migrations/0012-shares.js';
import * as uploadRequests from './migrations/0013-upload-requests.js';
import * as fileExpiry from './migrations/0014-file-expiry.js';
import * as signInMethods from './migrations/0015-sign-in-methods.js';
import * as webdav from './migrations/0016-webdav.js';
import * as largeTables from './migrations/0017-large-tables.js';
import * as uploadConcat from './migrations/0018-upload-concat.js';
import * as siteTotals from './migrations/0019-site-totals.js';
import * as contentLifetimes from './migrations/0020-content-lifetimes.js';

/**
 * Migrations listed explicitly, in order, never renamed (STYLE.md rule 7). Every one is
 * additive (new tables, columns with defaults, indexes): a server of the version before
 * keeps working on the schema after it, which is what lets a fleet upgrade one server at
 * a time (docs/scaling.md: Upgrading).
 */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001-initial': initial,
  '0002-operator-controls': operatorControls,
  '0003-sessions': sessions,
  '0004-server-settings': serverSettings,
  '0005-sign-in-addresses': signInAddresses,
  '0006-blob-keys': blobKeys,
  '0007-reservations': reservations,
  '0008-listing-indexes': listingIndexes,
  '0009-run-leases': runLeases,
  '0010-resumable-uploads': resumableUploads,
  '0011-daily-served': dailyServed,
  '0012-shares': shares,
  '0013-upload-requests': uploadRequests,
  '0014-file-expiry': fileExpiry,
  '0015-sign-in-methods': signInMethods,
  '0016-webdav': webdav,
  '0017-large-tables': largeTables,
  '0018-upload-concat': uploadConcat,
  '0019-site-totals': siteTotals,
  '0020-content-lifetimes': contentLifetimes,
};

const MIGRATION_TABLE = 'filehaven_migrations';

/** What a start found: `newer` names the migrations a newer version ran that this one does not know. */
export interface MigrationOutcome {
  newer: string[];
}

/**
 * Brings the schema to the latest version; throws with the failing migration's name. On
 * PostgreSQL the tables (and the migrator's own) live in `schema`, created when missing;
 * connections find them through their search_path (db/dialect.ts).
 *
 * A database a newer version has already migrated further (a fleet halfway through an
 * upgrade, an old server restarted) is used as it is: its extra migrations are additive,
 * so this version's queries still hold. `migrations` is for tests that play that newer version.
 */
export async function migrateToLatest<DB>(
  db: Kysely<DB>,
  schema: string | null = null,
  migrations: Readonly<Record<string, Migration>> = MIGRATIONS,
): Promise<MigrationOutcome> {
  if (schema !== null) await createSchemaOnce(db, schema);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: 'filehaven_migrations_lock',
    ...(schema !== null ? { migrationTableSchema: schema } : {}),
  });
  for (let attempt = 1; ; attempt++) {
    const newer = await newerMigrations(db, schema, migrations);
    if (newer.length > 0) return { newer };
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return { newer: [] };
    // A newer server migrated between the look above and the migrator's own: look again.
    if (/^corrupted migrations: previously executed migration/.test((error as Error).message ?? '') && attempt < CATALOG_RACE_ATTEMPTS) continue;
    // Kysely's migrator lists the tables of every schema of the database before it starts;
    // another site or tool dropping its schema at that moment fails the listing (PostgreSQL
    // 3F000/42P01/42703 on a schema, table or column that vanished). No migration ran: try again.
    const code = (error as { code?: string }).code;
    const failed = results?.find((r) => r.status === 'Error');
    if (!failed && (code === '3F000' || code === '42P01' || code === '42703') && attempt < CATALOG_RACE_ATTEMPTS) {
      // Back off with jitter: a retry at once meets the same churn again.
      await sleep(Math.random() * Math.min(25 * 2 ** attempt, 1000));
      continue;
    }
    // PostgreSQL: a migration that locks tables live servers write (0019's triggers on
    // files and blobs) gave up waiting (55P03, its lock_timeout) or was a deadlock's
    // victim (40P01) rather than a writer: nothing of it stayed; try again after a pause.
    if ((code === '55P03' || code === '40P01') && attempt < LOCK_RACE_ATTEMPTS) {
      await sleep(100 + Math.random() * Math.min(50 * 2 ** attempt, 2000));
      continue;
    }
    // SQLite: another process has been migrating for longer than busy_timeout (a large
    // index build): wait on for it, up to a few minutes.
    if (code === 'SQLITE_BUSY' && attempt < SQLITE_BUSY_ATTEMPTS) continue;
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
  }
}

/**
 * The migrations the database has run that `known` does not list; empty when there are
 * none (or no migration table yet). Any of `known` still pending beside them means the
 * database is not a newer version of this schema but another branch of it: refused.
 */
async function newerMigrations<DB>(db: Kysely<DB>, schema: string | null, known: Readonly<Record<string, Migration>>): Promise<string[]> {
  let executed: string[];
  try {
    const table = schema === null ? sql.table(MIGRATION_TABLE) : sql.table(`${schema}.${MIGRATION_TABLE}`);
    const rows = await sql<{ name: string }>`select name from ${table}`.execute(db);
    executed = rows.rows.map((row) => row.name);
  } catch {
    // No migration table: a new database, which the migrator sets up.
    return [];
  }
  const newer = executed.filter((name) => !(name in known)).sort();
  if (newer.length === 0) return [];
  const missing = Object.keys(known).filter((name) => !executed.includes(name));
  if (missing.length > 0) {
    throw new Error(
      `database migration failed: the database has run ${newer.join(', ')}, which this version does not know, but not ${missing.join(', ')}, which it needs`,
    );
  }
  return newer;
}

/** busy_timeout waits (10 s each) for another process's migrations before giving up. */
const SQLITE_BUSY_ATTEMPTS = 30;

/** Starts of the migrator whose locks met live writers' (about a minute of tries in all). */
const LOCK_RACE_ATTEMPTS = 40;

/** Starts of the migrator on a database whose catalog changed under its listing. */
const CATALOG_RACE_ATTEMPTS = 20;

/**
 * CREATE SCHEMA IF NOT EXISTS still fails on PostgreSQL when another server creates the
 * schema at the same moment (a unique violation in pg_namespace, issue 10): the schema is
 * then there, which is all this wanted.
 */
async function createSchemaOnce<DB>(db: Kysely<DB>, schema: string): Promise<void> {
  try {
    await db.schema.createSchema(schema).ifNotExists().execute();
  } catch (error) {
    const found = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
    if (found.rows.length === 0) throw error;
  }
}
