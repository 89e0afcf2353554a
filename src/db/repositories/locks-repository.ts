import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import type { Engine } from '../dialect.js';
import type { LocksRepository } from './repositories.js';

/**
 * Named locks held until the transaction ends; the consistency rules of the services
 * (blob-lifecycle.ts, folders) are written against them, and each engine keeps them its
 * own way:
 * - PostgreSQL: transaction-scoped advisory locks on a 64-bit hash of the name. They are
 *   taken by a statement of their own, so every later statement of the transaction (READ
 *   COMMITTED: a fresh snapshot per statement) sees what the previous holder committed.
 * - SQLite: every transaction begins IMMEDIATE (db/dialect.ts) and so holds the database's
 *   write lock from its first statement to its end, which covers every name at once; there
 *   is nothing left to take here.
 * A hash collision between two names only makes them wait for each other.
 */
export function locksRepository(db: Kysely<Database>, engine: Engine): LocksRepository {
  const hold = async (namespace: string, name: string) => {
    if (engine === 'sqlite') return;
    await sql`select pg_advisory_xact_lock(${lockId(namespace, name)}::bigint)`.execute(db);
  };
  return {
    blob: (name) => hold('blob', name),
    folder: (id) => hold('folder', id),
    top: (accountId) => hold('top', String(accountId)),
    uploadVolume: (accountId) => hold('upload-volume', String(accountId)),
    premium: (accountId) => hold('premium', String(accountId)),
    request: (id) => hold('upload-request', id),
    davTree: (accountId) => hold('dav-tree', String(accountId)),
  };
}

/** A signed 64-bit lock id for a name, as a decimal string (JavaScript numbers stop at 2^53). */
function lockId(namespace: string, name: string): string {
  const digest = createHash('sha256').update(`${namespace}\0${name}`).digest();
  return digest.readBigInt64BE(0).toString();
}
