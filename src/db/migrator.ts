import { setTimeout as sleep } from 'node:timers/promises';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as initial from './migrations/0001-initial.js';
import * as operatorControls from './migrations/0002-operator-controls.js';
import * as sessions from './migrations/0003-sessions.js';
import * as serverSettings from './migrations/0004-server-settings.js';
import * as signInAddresses from './migrations/0005-sign-in-addresses.js';
import * as blobKeys from './migrations/0006-blob-keys.js';
import * as reservations from './migrations/0007-reservations.js';
import * as listingIndexes from './migrations/0008-listing-indexes.js';
import * as runLeases from './migrations/0009-run-leases.js';

/** Migrations listed explicitly, in order, never renamed (STYLE.md rule 7). */
const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-operator-controls': operatorControls,
  '0003-sessions': sessions,
  '0004-server-settings': serverSettings,
  '0005-sign-in-addresses': signInAddresses,
  '0006-blob-keys': blobKeys,
  '0007-reservations': reservations,
  '0008-listing-indexes': listingIndexes,
  '0009-run-leases': runLeases,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/**
 * Brings the schema to the latest version; throws with the failing migration's name. On
 * PostgreSQL the tables (and the migrator's own) live in `schema`, created when missing;
 * connections find them through their search_path (db/dialect.ts).
 */
export async function migrateToLatest(db: Kysely<any>, schema: string | null = null): Promise<void> {
  if (schema !== null) await createSchemaOnce(db, schema);
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: 'filehaven_migrations',
    migrationLockTableName: 'filehaven_migrations_lock',
    ...(schema !== null ? { migrationTableSchema: schema } : {}),
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return;
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
    // SQLite: another process has been migrating for longer than busy_timeout (a large
    // index build): wait on for it, up to a few minutes.
    if (code === 'SQLITE_BUSY' && attempt < SQLITE_BUSY_ATTEMPTS) continue;
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
  }
}

/** busy_timeout waits (10 s each) for another process's migrations before giving up. */
const SQLITE_BUSY_ATTEMPTS = 30;

/** Starts of the migrator on a database whose catalog changed under its listing. */
const CATALOG_RACE_ATTEMPTS = 20;

/**
 * CREATE SCHEMA IF NOT EXISTS still fails on PostgreSQL when another server creates the
 * schema at the same moment (a unique violation in pg_namespace, issue 10): the schema is
 * then there, which is all this wanted.
 */
async function createSchemaOnce(db: Kysely<any>, schema: string): Promise<void> {
  try {
    await db.schema.createSchema(schema).ifNotExists().execute();
  } catch (error) {
    const found = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
    if (found.rows.length === 0) throw error;
  }
}
