import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresAdapter, SqliteDialect } from 'kysely';
import type { Database } from './database.js';

/** The SQLite database's file name inside the data folder (its `-wal` and `-shm` beside it). */
export const SQLITE_FILE = 'filehaven.db';

/** The one place that knows which SQL engine is underneath (STYLE.md: Kysely). */
export function openSqlite(dataDir: string): Kysely<Database> {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, SQLITE_FILE);
  return new Kysely<Database>({
    dialect: new SqliteDialect({
      database: async () => {
        const db = new SQLite(file);
        // WAL lets readers run while one writer commits; busy_timeout makes the CLI and
        // the server wait for each other instead of failing with SQLITE_BUSY.
        db.pragma('journal_mode = WAL');
        db.pragma('busy_timeout = 10000');
        db.pragma('synchronous = FULL');
        db.pragma('foreign_keys = ON');
        return db;
      },
    }),
  });
}

/** Whether a Kysely instance talks to PostgreSQL (migrations need serial ids there). */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
