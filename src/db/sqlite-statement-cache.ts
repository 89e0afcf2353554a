import type { Database as SqliteHandle, Statement } from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/** Distinct SQL texts kept prepared; the repositories write a few dozen. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * The database as Kysely's SQLite driver sees it, with each SQL text prepared once:
 * Kysely prepares every query anew, which costs more than running a small one (issue 9).
 * Parameters are bound per call, so a statement serves any values. The least recently
 * used text leaves when the cache is full. A statement still iterating (a streamed
 * query) is busy: a second use of its text gets a statement of its own.
 */
export function withStatementCache(handle: SqliteHandle, size = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const cache = new Map<string, Statement>();
  return {
    close: () => {
      cache.clear();
      handle.close();
    },
    prepare: (sql: string) => {
      const cached = cache.get(sql);
      if (cached && !cached.busy) {
        // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = handle.prepare(sql);
      if (!cached) {
        cache.set(sql, statement);
        if (cache.size > size) cache.delete(cache.keys().next().value!);
      }
      return statement;
    },
  };
}
