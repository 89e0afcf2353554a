import { type Expression, type Selectable, type SqlBool, sql } from 'kysely';
import type { Account, FileRecord, FileStatus, Folder } from '../../domain/types.js';
import type { AccountsTable, FilesTable, FoldersTable } from '../database.js';
import type { Engine } from '../dialect.js';
import { DuplicateError } from './repositories.js';

/**
 * The rows after `before` in a listing paged newest first on (created_at, id): a row-value
 * comparison, not `created_at < ? OR (created_at = ? AND id < ?)`, because both engines
 * read it as one range of the (..., created_at, id) indexes of migration 0008, where
 * SQLite scanned the OR from the newest row down to the cursor.
 */
export function listedAfter(before: { createdAt: number; id: string }): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref('created_at')}, ${sql.ref('id')}) < (${before.createdAt}, ${before.id})`;
}

/**
 * A file row not expired at `now` (epoch ms): domain/types.ts isExpired in SQL, the one
 * spelling every query of live files uses (issue 25: an expired file behaves as deleted).
 * `table` qualifies the column in joins.
 */
export function unexpiredAt(now: number, table?: 'files'): Expression<SqlBool> {
  const column = sql.ref(table ? `${table}.expires_at` : 'expires_at');
  return sql<SqlBool>`(${column} is null or ${column} > ${now})`;
}

/** `%text%` for LIKE with `\` as the escape, so `%` and `_` typed by someone mean themselves. */
const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * `column` contains `text`, ignoring case: SQLite's LIKE ignores the case of ASCII letters;
 * PostgreSQL's ILIKE does that and more. Either way an exact spelling always matches,
 * which lower() on one side could break.
 */
export function containsText(engine: Engine, column: string, text: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} ${sql.raw(engine === 'postgres' ? 'ilike' : 'like')} ${containsPattern(text)} escape '\\'`;
}

// PostgreSQL drivers return bigint columns as strings; Number() keeps mappers dialect-neutral.
const num = (value: unknown): number => Number(value);
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

export function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: num(row.id),
    login: row.login,
    name: row.name,
    email: row.email,
    balanceCents: num(row.balance_cents),
    premiumStart: numOrNull(row.premium_start),
    premiumEnd: numOrNull(row.premium_end),
    trafficLeft: num(row.traffic_left),
    isOperator: num(row.is_operator) === 1,
    disabled: num(row.disabled) === 1,
    createdAt: num(row.created_at),
  };
}

export function toFile(row: Selectable<FilesTable>): FileRecord {
  return {
    id: row.id,
    ownerId: num(row.owner_id),
    folderId: row.folder_id,
    name: row.name,
    size: num(row.size),
    sha256: row.sha256,
    status: row.status as FileStatus,
    createdAt: num(row.created_at),
    downloads: num(row.downloads),
    lastDownloadAt: numOrNull(row.last_download_at),
    expiresAt: numOrNull(row.expires_at),
  };
}

export function toFolder(row: Selectable<FoldersTable>): Folder {
  return {
    id: row.id,
    ownerId: num(row.owner_id),
    parentId: row.parent_id,
    name: row.name,
    createdAt: num(row.created_at),
  };
}

/** Translates a unique-constraint failure of either engine into DuplicateError. */
export async function translateDuplicate<T>(work: Promise<T>, what: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505') {
      throw new DuplicateError(what);
    }
    throw error;
  }
}
