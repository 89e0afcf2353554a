import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { FileStatus } from '../domain/types.js';
import type { Database } from './database.js';

/** The most pages better-sqlite3 lets one backup step copy (it clamps to 0..2^31-1). */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies a live SQLite database into `target` with SQLite's online backup API, as one
 * consistent snapshot: the state of the last transaction committed before it began.
 * All pages are copied in one step, which is one read transaction on the source: in WAL
 * mode the server's writers go on meanwhile, and no writer can make the copy restart
 * (a backup taken in small steps starts over whenever another process commits, and on a
 * busy site might never finish). No data of the source changes (closing may checkpoint its
 * WAL when no server has it open, as closing any connection does).
 */
export async function snapshotSqlite(source: string, target: string): Promise<void> {
  const db = new SQLite(source, { fileMustExist: true });
  try {
    // The server may hold the write lock for a moment; wait as the CLI always does.
    db.pragma('busy_timeout = 10000');
    await db.backup(target, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
}

/** A digest that live files point at. */
export interface LiveBlob {
  /** Hex SHA-256. */
  sha256: string;
}

/** Read access to a database file that no server uses: a snapshot or a restored copy. */
export interface DatabaseSnapshot {
  /**
   * The distinct digests of live (active or blocked) files, streamed in digest order. The
   * stream holds the connection: other calls wait until it ends, so finish or leave the
   * loop before making them.
   */
  liveBlobs(): AsyncIterable<LiveBlob>;
  /** Whether a live file points at the digest. */
  isLive(sha256: string): Promise<boolean>;
  /** Live files (rows), for the manifest. */
  liveFileCount(): Promise<number>;
  /** Up to `limit` ids of live files pointing at a digest, for error messages. */
  filesUsing(sha256: string, limit: number): Promise<string[]>;
  /** A `server_settings` value, or null. */
  setting(name: string): Promise<string | null>;
  /** SQLite's integrity check: an empty list when the file is sound, else its complaints. */
  integrityProblems(): Promise<string[]>;
  /** Closes the file. */
  close(): Promise<void>;
}

/**
 * Opens a database file for reading, switched to a rollback journal first: a WAL-mode file
 * would grow `-wal` and `-shm` beside it, and the snapshot must be one self-contained file
 * whose digest the manifest records. The server sets WAL again when it opens the file.
 */
export function openSnapshot(file: string): DatabaseSnapshot {
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({
      database: async () => {
        const conn = new SQLite(file, { fileMustExist: true });
        conn.pragma('journal_mode = DELETE');
        return conn;
      },
    }),
  });
  const live = () => db.selectFrom('files').where('status', '!=', FileStatus.Deleted);
  return {
    async *liveBlobs() {
      // Served by the (sha256, status) index, one row at a time: never every digest at once.
      for await (const row of live().select('sha256').distinct().orderBy('sha256').stream()) yield { sha256: row.sha256 };
    },
    async isLive(sha256) {
      return (await live().select('id').where('sha256', '=', sha256).limit(1).executeTakeFirst()) !== undefined;
    },
    async liveFileCount() {
      const row = await live()
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async filesUsing(sha256, limit) {
      const rows = await live().select('id').where('sha256', '=', sha256).orderBy('id').limit(limit).execute();
      return rows.map((r) => r.id);
    },
    async setting(name) {
      return (await db.selectFrom('server_settings').select('value').where('name', '=', name).executeTakeFirst())?.value ?? null;
    },
    async integrityProblems() {
      const { rows } = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(db);
      const messages = rows.map((r) => r.integrity_check);
      return messages.length === 1 && messages[0] === 'ok' ? [] : messages;
    },
    close: () => db.destroy(),
  };
}
