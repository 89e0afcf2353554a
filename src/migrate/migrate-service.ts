import type { Kysely } from 'kysely';
import { forEachConcurrent } from '../backup/concurrent.js';
import type { BlobStore } from '../blob/blob-store.js';
import type { Database } from '../db/database.js';
import type { OpenedDatabase } from '../db/dialect.js';
import { housekeepingRepository } from '../db/repositories/operations-repository.js';
import { SECRET_FINGERPRINT_SETTING } from '../security/secrets.js';
import { type BlobRow, copyBlob, MigrateError } from './blob-copy.js';
import {
  advanceSequences,
  BATCH_ROWS,
  batches,
  COPIED_TABLE_NAMES,
  countRows,
  databaseIdentity,
  differingColumn,
  insertAbsent,
  keyText,
  type Row,
  rowsByKey,
  setDeferred,
  TABLE_NAMES,
  TABLES,
  type TableName,
} from './table-copy.js';

export { MigrateError } from './blob-copy.js';

/** One end of a migration: a database migrated to the latest schema, and a blob store after init(). */
export interface MigrationSide {
  database: OpenedDatabase;
  blobs: BlobStore;
}

/** What moves where. */
export interface MigrateOptions {
  /** The site as it is; the server must be stopped (nothing here can tell whether it runs). */
  source: MigrationSide;
  /** Where the metadata goes; null when it stays in the source database (only the blobs move). */
  targetDatabase: OpenedDatabase | null;
  /** Where the blobs go; null when they stay in the source store (only the metadata moves). */
  targetBlobs: BlobStore | null;
  /**
   * Blobs copied at once (default 8): object stores answer each request in milliseconds,
   * so a few in flight keep the link busy. Memory per blob in flight is at most what the
   * target's stage() holds (on S3 part size x (queue size + 1)).
   */
  concurrency?: number;
  /** Rows per keyset batch (default 500). */
  batchRows?: number;
  /** Stops the copy: blobs in flight are dropped, nothing half-written stays; a rerun resumes. */
  signal?: AbortSignal;
  /** Called after every batch and every blob; the caller throttles what it prints. */
  onProgress?: (progress: MigrateProgress) => void;
  /** Monotonic milliseconds, for the report's timings. */
  now?: () => number;
}

/** Where a migration is. */
export type MigrateProgress =
  /** The target passed its checks; `resumed` when it holds part of an earlier run. */
  | { phase: 'start'; resumed: boolean }
  | { phase: 'tables'; table: TableName; copied: number; total: number }
  | { phase: 'blobs'; done: number; total: number; bytes: number; totalBytes: number }
  | { phase: 'verify'; table: TableName; checked: number; total: number };

/** What a finished (and verified) migration did. */
export interface MigrateReport {
  /** The target already held part of this site: an earlier run was resumed. */
  resumed: boolean;
  /** Tables copied and verified row by row, with their row counts; empty when the metadata stayed. */
  tables: { name: TableName; rows: number }[];
  /** Blobs of the site; null when the blobs stayed in their store. */
  blobs: {
    /** Blob rows of the site. */
    count: number;
    /** Their bytes. */
    bytes: number;
    /** Copied by this run, each hashed on the way and matched to its row. */
    copied: number;
    /** Bytes copied by this run. */
    copiedBytes: number;
    /** Found in the target, copied (and hashed) by an earlier run. */
    earlier: number;
    /** Time the blob phase took, ms. */
    ms: number;
  } | null;
  /** Time the whole run took, ms. */
  ms: number;
}

/**
 * Moves a site from one database and blob store to another, resumably, and verifies the
 * result (the operator's `filehaven migrate`). The order makes every state safe to stop in:
 *
 * 1. server_settings first: the secret fingerprint marks the target as a copy of this
 *    site, which tells a rerun (resume) from a foreign database (refused).
 * 2. Blobs next, each streamed, hashed, matched to its row, published, and only then its
 *    target row written: a blob row in the target always names complete, verified bytes,
 *    and is what a rerun skips. A crash between publish and the row leaves an object no
 *    row names, which gc removes after its grace.
 * 3. The other tables, parents before children, rows inserted if absent by primary key:
 *    a file row only ever lands beside its blob.
 * 4. Sequences past the copied ids, then every table compared row by row with the source.
 */
export async function migrateSite(options: MigrateOptions): Promise<MigrateReport> {
  try {
    return await migrate(options);
  } catch (error) {
    // Whatever a blob in flight failed with when the signal stopped it, the reason is the signal's.
    if (options.signal?.aborted) throw options.signal.reason;
    throw error;
  }
}

async function migrate(options: MigrateOptions): Promise<MigrateReport> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const { source, targetDatabase, targetBlobs } = options;
  if (targetDatabase === null && targetBlobs === null) throw new MigrateError('nothing to migrate: neither the database nor the blob store changes');
  const run: Run = {
    source,
    targetBlobs,
    concurrency: Math.max(1, options.concurrency ?? 8),
    batchRows: options.batchRows ?? BATCH_ROWS,
    signal: options.signal,
    progress: options.onProgress ?? (() => {}),
  };
  let resumed = false;
  if (targetDatabase !== null) resumed = await checkTarget(source.database, targetDatabase);
  run.progress({ phase: 'start', resumed });

  if (targetDatabase !== null) await copyTable(run, targetDatabase.db, 'server_settings');
  const blobsStarted = now();
  let blobs: MigrateReport['blobs'] = null;
  if (targetBlobs !== null) {
    const totals = targetDatabase !== null ? await copyBlobsInto(run, targetDatabase.db, targetBlobs) : await moveBlobsInPlace(run, targetBlobs);
    blobs = { ...totals, ms: now() - blobsStarted };
    if (totals.earlier > 0) resumed = true;
  }
  const tables: MigrateReport['tables'] = [];
  if (targetDatabase !== null) {
    for (const table of COPIED_TABLE_NAMES) {
      if (table === 'server_settings' || (table === 'blobs' && targetBlobs !== null)) continue;
      await copyTable(run, targetDatabase.db, table);
    }
    await advanceSequences(targetDatabase);
    // The copy left a row of site_totals per file and blob it inserted: one fold now, not
    // one by every server that starts on the target at once.
    await targetDatabase.db.transaction().execute((trx) => housekeepingRepository(trx, targetDatabase.engine).foldTotals());
    for (const table of COPIED_TABLE_NAMES) tables.push({ name: table, rows: await verifyTable(run, targetDatabase.db, table) });
  }
  return { resumed, tables, blobs, ms: now() - started };
}

/** The state one run carries. */
interface Run {
  source: MigrationSide;
  targetBlobs: BlobStore | null;
  concurrency: number;
  batchRows: number;
  signal: AbortSignal | undefined;
  progress: (progress: MigrateProgress) => void;
}

/**
 * Refuses a target that is the source, or that holds anything but a partial copy of this
 * site; returns whether it holds such a copy (a rerun).
 */
async function checkTarget(source: OpenedDatabase, target: OpenedDatabase): Promise<boolean> {
  if ((await databaseIdentity(source)) === (await databaseIdentity(target))) {
    throw new MigrateError(
      'the target database is the source database (the same server, database and schema): give another --to-database-url or --to-database-schema',
    );
  }
  const mine = await fingerprintOf(source.db);
  if (mine === null)
    throw new MigrateError(
      'the source database has no secret fingerprint yet: start the server on it once, or run `filehaven stats` with its settings, then migrate',
    );
  const theirs = await fingerprintOf(target.db);
  if (theirs !== null && theirs !== mine) {
    throw new MigrateError(
      'the target database already holds another filehaven installation (a different secret fingerprint in server_settings): give an empty database or a new --to-database-schema',
    );
  }
  if (theirs === mine) return true;
  for (const table of TABLE_NAMES) {
    if ((await countRows(target.db, table)) > 0) {
      throw new MigrateError(
        `the target database is not empty (its ${table} table holds rows) and is no earlier copy of this site: give an empty database or a new --to-database-schema`,
      );
    }
  }
  return false;
}

async function fingerprintOf(db: Kysely<Database>): Promise<string | null> {
  const row = await db.selectFrom('server_settings').select('value').where('name', '=', SECRET_FINGERPRINT_SETTING).executeTakeFirst();
  return row?.value ?? null;
}

/** Copies a table in keyset batches, skipping rows the target has; a second pass sets deferred self-references. */
async function copyTable(run: Run, target: Kysely<Database>, table: TableName): Promise<void> {
  const source = run.source.database.db;
  const total = await countRows(source, table);
  let copied = 0;
  run.progress({ phase: 'tables', table, copied, total });
  const hasDeferred = 'deferred' in TABLES[table];
  for await (const rows of batches(source, table, run.batchRows)) {
    run.signal?.throwIfAborted();
    await insertAbsent(target, table, rows);
    copied += rows.length;
    if (!hasDeferred) run.progress({ phase: 'tables', table, copied, total });
  }
  if (hasDeferred) {
    for await (const rows of batches(source, table, run.batchRows)) {
      run.signal?.throwIfAborted();
      await setDeferred(target, table, rows);
    }
    run.progress({ phase: 'tables', table, copied, total });
  }
}

/**
 * Compares a table row by row: every source row must be in the target, column for column,
 * and the counts equal (no extra rows). Blob rows name their own store's key when the
 * blobs moved: that column is only required to be set there. Returns the row count.
 */
async function verifyTable(run: Run, target: Kysely<Database>, table: TableName): Promise<number> {
  const source = run.source.database.db;
  const { key } = TABLES[table];
  const total = await countRows(source, table);
  const ignore = table === 'blobs' && run.targetBlobs !== null ? ['object_key'] : [];
  let checked = 0;
  for await (const rows of batches(source, table, run.batchRows)) {
    run.signal?.throwIfAborted();
    const copies = await rowsByKey(
      target,
      table,
      rows.map((row) => row[key]),
    );
    for (const row of rows) {
      const copy = copies.get(keyText(row[key]));
      const column = copy === undefined ? null : differingColumn(row, copy, ignore);
      if (copy === undefined || column !== null || (ignore.length > 0 && !copy.object_key)) {
        const what = copy === undefined ? 'is missing from the target' : column !== null ? `differs in ${column}` : 'names no key';
        throw new MigrateError(
          `verification failed: ${table} row ${key}=${keyText(row[key])} ${what} (was the source changed after an interrupted run? then empty the target and migrate again)`,
        );
      }
    }
    checked += rows.length;
    run.progress({ phase: 'verify', table, checked, total });
  }
  const copied = await countRows(target, table);
  if (copied !== total) {
    throw new MigrateError(
      `verification failed: ${table} holds ${copied} rows in the target and ${total} in the source (did a server run on the target? then empty it and migrate again)`,
    );
  }
  if (total === 0) run.progress({ phase: 'verify', table, checked, total });
  return total;
}

/** Blob phase totals. */
interface BlobTotals {
  count: number;
  bytes: number;
  copied: number;
  copiedBytes: number;
  earlier: number;
}

/** Counts blobs as they are done and reports each. */
async function blobCounter(run: Run): Promise<{ totals: BlobTotals; done(size: number, copied: boolean): void }> {
  const source = run.source.database.db;
  const row = await source
    .selectFrom('blobs')
    .select((eb) => [eb.fn.countAll().as('n'), eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('bytes')])
    .executeTakeFirstOrThrow();
  const totals: BlobTotals = { count: Number(row.n), bytes: Number(row.bytes), copied: 0, copiedBytes: 0, earlier: 0 };
  let done = 0;
  let bytes = 0;
  const report = () => run.progress({ phase: 'blobs', done, total: totals.count, bytes, totalBytes: totals.bytes });
  report();
  return {
    totals,
    done(size, copied) {
      done += 1;
      bytes += size;
      if (copied) {
        totals.copied += 1;
        totals.copiedBytes += size;
      } else {
        totals.earlier += 1;
      }
      report();
    },
  };
}

function blobRow(row: Row): BlobRow {
  const sha256 = String(row.sha256);
  return { sha256, size: Number(row.size), key: row.object_key == null ? sha256 : String(row.object_key) };
}

/**
 * Blobs into a new database and store: every source row whose digest the target lacks is
 * copied (a few at a time) and then recorded with the key the target store gave it.
 */
async function copyBlobsInto(run: Run, target: Kysely<Database>, targetBlobs: BlobStore): Promise<BlobTotals> {
  const source = run.source.database.db;
  const counter = await blobCounter(run);
  async function* missing(): AsyncIterable<Row> {
    for await (const rows of batches(source, 'blobs', run.batchRows)) {
      const present = await rowsByKey(
        target,
        'blobs',
        rows.map((row) => row.sha256),
      );
      for (const row of rows) {
        if (present.has(keyText(row.sha256))) counter.done(Number(row.size), false);
        else yield row;
      }
    }
  }
  await forEachConcurrent(missing(), run.concurrency, async (row) => {
    run.signal?.throwIfAborted();
    const blob = blobRow(row);
    const key = await copyBlob(run.source.blobs, targetBlobs, blob, run.signal);
    const inserted = await target
      .insertInto('blobs')
      .values({ sha256: blob.sha256, size: blob.size, created_at: Number(row.created_at), object_key: key })
      .onConflict((oc) => oc.column('sha256').doNothing())
      .returning('sha256')
      .executeTakeFirst();
    if (inserted === undefined) {
      // Another run recorded this digest meanwhile: drop this copy unless it is the same object.
      const kept = await target.selectFrom('blobs').select('object_key').where('sha256', '=', blob.sha256).executeTakeFirst();
      if (kept?.object_key !== key) await targetBlobs.delete(key);
    }
    counter.done(blob.size, true);
  });
  run.signal?.throwIfAborted();
  return counter.totals;
}

/**
 * Blobs into a new store while the database stays: each row is pointed at its copy once
 * the copy is published. A row whose key the source store no longer holds but the target
 * does was moved by an earlier run; the source's bytes are left where they are.
 */
async function moveBlobsInPlace(run: Run, targetBlobs: BlobStore): Promise<BlobTotals> {
  const db = run.source.database.db;
  const counter = await blobCounter(run);
  async function* rows(): AsyncIterable<Row> {
    for await (const batch of batches(db, 'blobs', run.batchRows)) yield* batch;
  }
  await forEachConcurrent(rows(), run.concurrency, async (row) => {
    run.signal?.throwIfAborted();
    const blob = blobRow(row);
    if (!(await run.source.blobs.has(blob.key))) {
      if (!(await targetBlobs.has(blob.key)))
        throw new MigrateError(
          `blob ${blob.sha256} is in neither store (key ${blob.key}): its files cannot be migrated; restore the blob or run \`filehaven gc\`, then migrate again`,
        );
      counter.done(blob.size, false);
      return;
    }
    const key = await copyBlob(run.source.blobs, targetBlobs, blob, run.signal);
    await db.updateTable('blobs').set({ object_key: key }).where('sha256', '=', blob.sha256).execute();
    counter.done(blob.size, true);
  });
  run.signal?.throwIfAborted();
  return counter.totals;
}
