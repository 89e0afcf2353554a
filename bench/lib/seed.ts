import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { SQLITE_FILE } from '../../src/db/dialect.js';

/** Where a backend's metadata lives, for writing rows straight into it. */
export type MetadataLocation = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; url: string; schema: string };

/** Seeded file ids: S + nine digits, numbered from 1 (valid file ids, never made by the server). */
export const seededId = (n: number): string => `S${String(n).padStart(9, '0')}`;

/** Seeded rows of the bench account are this far apart (ms): a million of them span 11.6 days, not one. */
export const SEED_STEP_MS = 1000;

/**
 * Adds file rows `from`..`to` (inclusive), copies of the row of `template` (same owner,
 * blob, size) with their own ids and names, each SEED_STEP_MS older than the one before,
 * so they list after the template, newest first. One INSERT ... SELECT over a generated
 * series: a million rows in seconds. The server keeps running; PostgreSQL is analysed
 * afterwards, as autovacuum would after such a load. SQLite is not: the server runs
 * `PRAGMA optimize` at its start and after each gc (issue 28), not after a bulk load.
 */
export async function seedFiles(where: MetadataLocation, template: string, from: number, to: number): Promise<void> {
  if (where.kind === 'sqlite') {
    const db = new Database(path.join(where.dataDir, SQLITE_FILE));
    try {
      db.pragma('busy_timeout = 30000');
      db.prepare(
        `INSERT INTO files (id, owner_id, folder_id, name, size, sha256, status, delete_hash, created_at, downloads)
         WITH RECURSIVE series(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM series WHERE n < ?)
         SELECT 'S' || printf('%09d', n), owner_id, NULL, 'seed-' || n || '.bin', size, sha256, 'A', delete_hash, created_at - n * ${SEED_STEP_MS}, 0
         FROM files, series WHERE files.id = ?`,
      ).run(from, to, template);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: where.url });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${where.schema}"`);
    await client.query(
      `INSERT INTO files (id, owner_id, folder_id, name, size, sha256, status, delete_hash, created_at, downloads)
       SELECT 'S' || lpad(n::text, 9, '0'), owner_id, NULL, 'seed-' || n || '.bin', size, sha256, 'A', delete_hash, created_at - n * ${SEED_STEP_MS}, 0
       FROM files, generate_series($1::bigint, $2::bigint) AS n WHERE files.id = $3`,
      [from, to, template],
    );
    await client.query('ANALYZE files');
  } finally {
    await client.end();
  }
}

/** Seeded accounts' ids start above this (the server's own accounts are numbered from 1). */
const SEED_ACCOUNT_BASE = 1_000_000;
/** A seeded folder's id: G + nine digits. A seeded file of another account: T + nine digits. */
export const seededFolderId = (n: number): string => `G${String(n).padStart(9, '0')}`;

/** What `seedSite` adds beside the bench account's rows. */
export interface SiteShape {
  accounts: number;
  /** A multiple of `accounts`: folder k belongs to account k mod accounts, as file n to folder n mod folders. */
  folders: number;
  files: number;
}

/**
 * The rest of a large site, beside the bench account's rows: `accounts` accounts, each with
 * folders/accounts folders, and `files` file rows spread over them round-robin (every file
 * in a folder of its owner), copies of the template's blob, spread evenly over the 180 days
 * before the template's day. One transaction of INSERT ... SELECT over
 * a generated series per table: the engine writes them without a round trip a row.
 */
export async function seedSite(where: MetadataLocation, template: string, shape: SiteShape): Promise<void> {
  if (shape.folders % shape.accounts !== 0) throw new Error('folders must be a multiple of accounts');
  // The other accounts' files are spread over the 180 days before the bench account's.
  const spread = Math.max(1, Math.floor((180 * 86_400_000) / shape.files));
  if (where.kind === 'sqlite') {
    const db = new Database(path.join(where.dataDir, SQLITE_FILE));
    try {
      db.pragma('busy_timeout = 30000');
      const base = SEED_ACCOUNT_BASE;
      const { accounts, folders, files } = shape;
      const perFolder = Math.max(1, Math.ceil(files / folders));
      const foldersEach = folders / accounts;
      // A page cache that holds the indexes' working set (the server's own stays the default).
      db.pragma('cache_size = -1048576');
      const series = (to: number) => `WITH RECURSIVE series(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series WHERE n < ${Number(to)})`;
      db.transaction(() => {
        db.prepare(
          `INSERT INTO accounts (id, login, password_hash, created_at) ${series(accounts)}
           SELECT ${base} + n, 'seed-' || n, 'x', created_at - 86400000 FROM files, series WHERE files.id = ?`,
        ).run(template);
        db.prepare(
          `INSERT INTO folders (id, owner_id, parent_id, name, created_at) ${series(folders)}
           SELECT 'G' || printf('%09d', n), ${base} + 1 + ((n - 1) / ${foldersEach}), NULL, 'folder-' || n, created_at - 86400000 - n FROM files, series WHERE files.id = ?`,
        ).run(template);
        db.prepare(
          `INSERT INTO files (id, owner_id, folder_id, name, size, sha256, status, delete_hash, created_at, downloads) ${series(files)}
           SELECT 'T' || printf('%09d', n), ${base} + 1 + ((n - 1) / ${perFolder}) / ${foldersEach}, 'G' || printf('%09d', 1 + ((n - 1) / ${perFolder})),
                  'site-' || n || '.bin', size, sha256, 'A', delete_hash, created_at - 86400000 - n * ${spread}, 0
           FROM files, series WHERE files.id = ?`,
        ).run(template);
      })();
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: where.url });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${where.schema}"`);
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO accounts (id, login, password_hash, created_at)
       SELECT $1::bigint + n, 'seed-' || n, 'x', created_at - 86400000 FROM files, generate_series(1, $2::bigint) AS n WHERE files.id = $3`,
      [SEED_ACCOUNT_BASE, shape.accounts, template],
    );
    await client.query(
      `INSERT INTO folders (id, owner_id, parent_id, name, created_at)
       SELECT 'G' || lpad(n::text, 9, '0'), $1::bigint + 1 + ((n - 1) / $2::bigint), NULL, 'folder-' || n, created_at - 86400000 - n
       FROM files, generate_series(1, $3::bigint) AS n WHERE files.id = $4`,
      [SEED_ACCOUNT_BASE, shape.folders / shape.accounts, shape.folders, template],
    );
    await client.query(
      `INSERT INTO files (id, owner_id, folder_id, name, size, sha256, status, delete_hash, created_at, downloads)
       SELECT 'T' || lpad(n::text, 9, '0'), $1::bigint + 1 + ((n - 1) / $3::bigint) / $2::bigint, 'G' || lpad((1 + ((n - 1) / $3::bigint))::text, 9, '0'),
              'site-' || n || '.bin', size, sha256, 'A', delete_hash, created_at - 86400000 - n * ${spread}, 0
       FROM files, generate_series(1, $4::bigint) AS n WHERE files.id = $5`,
      [SEED_ACCOUNT_BASE, shape.folders / shape.accounts, Math.max(1, Math.ceil(shape.files / shape.folders)), shape.files, template],
    );
    await client.query('COMMIT');
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

/** Runs one statement on the metadata (the bench's own set-up: operator flags, expiry dates). */
export async function execute(where: MetadataLocation, sqlite: string, postgres: string, params: unknown[]): Promise<number> {
  if (where.kind === 'sqlite') {
    const db = new Database(path.join(where.dataDir, SQLITE_FILE));
    try {
      db.pragma('busy_timeout = 30000');
      return db.prepare(sqlite).run(...params).changes;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: where.url });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${where.schema}"`);
    return (await client.query(postgres, params)).rowCount ?? 0;
  } finally {
    await client.end();
  }
}

/** The created_at (epoch ms) of a file row. */
export async function createdAtOf(where: MetadataLocation, id: string): Promise<number> {
  if (where.kind === 'sqlite') {
    const db = new Database(path.join(where.dataDir, SQLITE_FILE), { readonly: true });
    try {
      const row = db.prepare('SELECT created_at FROM files WHERE id = ?').get(id) as { created_at: number } | undefined;
      if (!row) throw new Error(`no file ${id}`);
      return Number(row.created_at);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: where.url });
  await client.connect();
  try {
    const result = await client.query(`SELECT created_at FROM "${where.schema}".files WHERE id = $1`, [id]);
    if (result.rows.length === 0) throw new Error(`no file ${id}`);
    return Number(result.rows[0].created_at);
  } finally {
    await client.end();
  }
}

/** How many file rows the table holds. */
export async function fileRows(where: MetadataLocation): Promise<number> {
  if (where.kind === 'sqlite') {
    const db = new Database(path.join(where.dataDir, SQLITE_FILE), { readonly: true });
    try {
      return Number((db.prepare('SELECT count(*) AS n FROM files').get() as { n: number }).n);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: where.url });
  await client.connect();
  try {
    return Number((await client.query(`SELECT count(*) AS n FROM "${where.schema}".files`)).rows[0].n);
  } finally {
    await client.end();
  }
}
