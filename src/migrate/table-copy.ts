import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/database.js';
import type { OpenedDatabase } from '../db/dialect.js';

/** How one table is copied: its primary key, and what needs care. */
export interface TableSpec {
  /** The single-column primary key: keyset batches walk it, inserts skip rows that have it. */
  readonly key: string;
  /** A bigserial id on PostgreSQL: its sequence is moved past the largest copied id. */
  readonly serial?: boolean;
  /**
   * Self-references (folders.parent_id): inserted as null and set in a second pass once
   * every row exists, so a child sorted before its parent never breaks the foreign key.
   */
  readonly deferred?: readonly string[];
  /**
   * Kept by the database itself from other tables (site_totals, by triggers on files and
   * blobs): never copied nor compared, as the copy of those tables makes the target's own.
   */
  readonly derived?: boolean;
}

/**
 * Every table of the Database interface, in copy order. `satisfies Record<keyof Database,
 * ...>` makes a table added to database.ts without a line here a type error, and
 * test/unit/migrate-service.test.ts compares this list with the tables the migrations
 * actually create. Order: server_settings first (the secret fingerprint marks the target as
 * a copy of this site, which is what lets a rerun resume), blobs before files (a file row
 * in the target always has its blob), parents before children for the foreign keys.
 */
export const TABLES = {
  server_settings: { key: 'name' },
  blobs: { key: 'sha256' },
  accounts: { key: 'id', serial: true },
  folders: { key: 'id', deferred: ['parent_id'] },
  files: { key: 'id' },
  sessions: { key: 'id' },
  upload_log: { key: 'id', serial: true },
  audit_log: { key: 'id', serial: true },
  blacklist: { key: 'sha256' },
  blacklist_names: { key: 'pattern' },
  sign_in_addresses: { key: 'id' },
  // Transfers in flight on the source when it was copied (migrate runs with the site
  // stopped, so these are what a crash left): the target's first start settles them.
  reservations: { key: 'id', serial: true },
  // Leases of jobs run one server at a time; with the site stopped, they have run out.
  run_leases: { key: 'name' },
  // Resumable uploads in progress: rows only. Their bytes stay in the source's resumable
  // store (migrate moves blobs, not unfinished uploads), so a client resuming one after the
  // move is told it is gone and starts again; the row and its volume go at its expiry.
  resumable_uploads: { key: 'id' },
  upload_locks: { key: 'upload_id' },
  // Bytes served per day: history, copied as it is.
  served_days: { key: 'day' },
  // Shares (issue 25): after accounts, whose ids they name.
  shares: { key: 'id' },
  // Upload requests after accounts (their owners), and the slots of uploads into them
  // that were still arriving: with the site stopped their leases have run out, so they
  // count no more and the next upload's check deletes them.
  upload_requests: { key: 'id' },
  upload_request_slots: { key: 'id', serial: true },
  upload_request_uploads: { key: 'upload_id' },
  // Sign-in methods (issue 26), after accounts. Sign-ins in progress are copied too:
  // they are minutes long and expire by themselves.
  account_identities: { key: 'id', serial: true },
  totp_factors: { key: 'account_id' },
  recovery_codes: { key: 'code_hash' },
  passkeys: { key: 'id' },
  sign_in_challenges: { key: 'id' },
  // WebDAV (issue 27), after accounts: locks (they expire by themselves) and dead properties.
  dav_locks: { key: 'token' },
  dav_properties: { key: 'key' },
  // The console's finished-day figures (issue 28): derived from files, copied as they are.
  site_days: { key: 'day' },
  // The site's totals (issue 28): the target's triggers count the files and blobs copied.
  site_totals: { key: 'id', derived: true },
} as const satisfies Record<keyof Database, TableSpec>;

export type TableName = keyof typeof TABLES;

/** The tables in copy order. */
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];

/** The tables a migrate copies and compares: all but those the database derives (TableSpec.derived). */
export const COPIED_TABLE_NAMES = TABLE_NAMES.filter((table) => !(TABLES[table] as TableSpec).derived);

/** A row as the driver returns it. */
export type Row = Record<string, unknown>;

/** Rows per batch: small enough for any parameter limit, large enough to be quick. */
export const BATCH_ROWS = 500;

/** Loosely typed access for the generic copy: the table is a value here, not a type, so any table of any columns. */
function raw(db: Kysely<Database>): Kysely<Record<string, Row>> {
  return db as unknown as Kysely<Record<string, Row>>;
}

/** Rows of a table. */
export async function countRows(db: Kysely<Database>, table: TableName): Promise<number> {
  const row = await raw(db)
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The rows of a table in primary-key order, `batch` at a time (keyset: `key > last`, never
 * an OFFSET, never the whole table in memory). The order is the source engine's own, which
 * is all a walk needs.
 */
export async function* batches(db: Kysely<Database>, table: TableName, batch = BATCH_ROWS): AsyncIterable<Row[]> {
  const { key } = TABLES[table];
  let last: unknown;
  for (;;) {
    let query = raw(db).selectFrom(table).selectAll().orderBy(key).limit(batch);
    if (last !== undefined) query = query.where(key, '>', last);
    const rows = (await query.execute()) as Row[];
    if (rows.length > 0) yield rows;
    if (rows.length < batch) return;
    last = rows[rows.length - 1]![key];
  }
}

/** Inserts rows whose key the target lacks; rows already there (an earlier run) are left as they are. */
export async function insertAbsent(db: Kysely<Database>, table: TableName, rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const spec: TableSpec = TABLES[table];
  const deferred = spec.deferred ?? [];
  const values = deferred.length === 0 ? rows : rows.map((row) => ({ ...row, ...Object.fromEntries(deferred.map((column) => [column, null])) }));
  await raw(db)
    .insertInto(table)
    .values(values)
    .onConflict((oc) => oc.column(spec.key).doNothing())
    .execute();
}

/** Second pass of a table with self-references: sets the deferred columns of copied rows, in one transaction per batch. */
export async function setDeferred(db: Kysely<Database>, table: TableName, rows: Row[]): Promise<void> {
  const spec: TableSpec = TABLES[table];
  const deferred = spec.deferred ?? [];
  const pending = rows.filter((row) => deferred.some((column) => row[column] !== null));
  if (pending.length === 0) return;
  await raw(db)
    .transaction()
    .execute(async (trx) => {
      for (const row of pending) {
        await trx
          .updateTable(table)
          .set(Object.fromEntries(deferred.map((column) => [column, row[column]])))
          .where(spec.key, '=', row[spec.key])
          .execute();
      }
    });
}

/** The target rows with these keys, by key (for verifying a source batch). */
export async function rowsByKey(db: Kysely<Database>, table: TableName, keys: unknown[]): Promise<Map<string, Row>> {
  const { key } = TABLES[table];
  if (keys.length === 0) return new Map();
  const rows = (await raw(db).selectFrom(table).selectAll().where(key, 'in', keys).execute()) as Row[];
  return new Map(rows.map((row) => [keyText(row[key]), row]));
}

/** A key or value as text, so SQLite's numbers and PostgreSQL's bigint strings compare equal. */
export function keyText(value: unknown): string {
  return value === null || value === undefined ? '\u0000null' : String(value);
}

/** The first column whose values differ between two rows, or null when they are the same. */
export function differingColumn(a: Row, b: Row, ignore: readonly string[] = []): string | null {
  for (const column of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (ignore.includes(column)) continue;
    if (keyText(a[column]) !== keyText(b[column])) return column;
  }
  return null;
}

/**
 * Moves PostgreSQL's bigserial sequences past the largest copied id: the rows were
 * inserted with their ids, which never advances a sequence, and the first new account
 * would otherwise collide with account 1. SQLite's AUTOINCREMENT follows explicit ids by itself.
 */
export async function advanceSequences(target: OpenedDatabase): Promise<void> {
  if (target.engine !== 'postgres') return;
  for (const table of TABLE_NAMES) {
    const spec: TableSpec = TABLES[table];
    if (!spec.serial) continue;
    const column = spec.key;
    // setval(seq, max + 1, false): the next nextval() answers max + 1 (1 on an empty table).
    await sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce(max(${sql.ref(column)}), 0) + 1, false) from ${sql.table(table)}`.execute(
      target.db,
    );
  }
}

/**
 * Something that tells two connections to one database apart from connections to two: on
 * PostgreSQL the server's start time, the database and the schema (URLs that differ in
 * spelling, localhost and 127.0.0.1, still name the same place); on SQLite the file.
 */
export async function databaseIdentity(opened: OpenedDatabase): Promise<string> {
  if (opened.engine === 'postgres') {
    const { rows } = await sql<{ id: string }>`select pg_postmaster_start_time()::text || '/' || current_database() || '/' || current_schema() as id`.execute(
      opened.db,
    );
    return `postgres:${rows[0]!.id}`;
  }
  const { rows } = await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(opened.db);
  return `sqlite:${rows[0]!.file}`;
}
