import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { SQLITE_FILE } from '../../src/db/dialect.js';

/** Where a backend's metadata lives, for writing rows straight into it. */
export type MetadataLocation = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; url: string; schema: string };

/** Seeded file ids: S + nine digits, numbered from 1 (valid file ids, never made by the server). */
export const seededId = (n: number): string => `S${String(n).padStart(9, '0')}`;

/**
 * Adds file rows `from`..`to` (inclusive), copies of the row of `template` (same owner,
 * blob, size) with their own ids and names, each a millisecond older than the one before,
 * so they list after the template, newest first. One INSERT ... SELECT over a generated
 * series: a million rows in seconds. The server keeps running; PostgreSQL is analysed
 * afterwards, as autovacuum would after such a load. SQLite is not (the server never runs
 * ANALYZE itself: what it plans without statistics is what a site gets).
 */
export async function seedFiles(where: MetadataLocation, template: string, from: number, to: number): Promise<void> {
  if (where.kind === 'sqlite') {
    const db = new Database(path.join(where.dataDir, SQLITE_FILE));
    try {
      db.pragma('busy_timeout = 30000');
      db.prepare(
        `INSERT INTO files (id, owner_id, folder_id, name, size, sha256, status, delete_hash, created_at, downloads)
         WITH RECURSIVE series(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM series WHERE n < ?)
         SELECT 'S' || printf('%09d', n), owner_id, NULL, 'seed-' || n || '.bin', size, sha256, 'A', delete_hash, created_at - n, 0
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
       SELECT 'S' || lpad(n::text, 9, '0'), owner_id, NULL, 'seed-' || n || '.bin', size, sha256, 'A', delete_hash, created_at - n, 0
       FROM files, generate_series($1::bigint, $2::bigint) AS n WHERE files.id = $3`,
      [from, to, template],
    );
    await client.query('ANALYZE files');
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
