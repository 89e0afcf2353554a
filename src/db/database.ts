import type { Generated } from 'kysely';

/**
 * The metadata schema. Times are epoch milliseconds in bigint columns and flags are
 * 0/1 integers, types that SQLite and PostgreSQL both hold (STYLE.md: Kysely).
 */
export interface Database {
  accounts: AccountsTable;
  files: FilesTable;
  folders: FoldersTable;
  blobs: BlobsTable;
  blacklist: BlacklistTable;
}

export interface AccountsTable {
  id: Generated<number>;
  login: string;
  password_hash: string;
  name: string;
  email: string;
  balance_cents: number;
  premium_start: number | null;
  premium_end: number | null;
  traffic_left: number;
  /** Keyed hash of the API key, for lookup (ServerSecrets.apiKeyLookup). */
  api_key_hash: string | null;
  /** The API key sealed with the server secret, so it can be returned again. */
  api_key_sealed: string | null;
  is_operator: number;
  disabled: number;
  created_at: number;
}

export interface FilesTable {
  id: string;
  owner_id: number;
  folder_id: string | null;
  name: string;
  size: number;
  sha256: string;
  status: string;
  /** SHA-256 of the delete-link secret; the secret itself is only shown once. */
  delete_hash: string;
  created_at: number;
  deleted_at: number | null;
  downloads: number;
  last_download_at: number | null;
}

export interface FoldersTable {
  id: string;
  owner_id: number;
  parent_id: string | null;
  name: string;
  created_at: number;
}

/** One row per stored blob; the row is the lock that orders uploads against removal. */
export interface BlobsTable {
  sha256: string;
  size: number;
  created_at: number;
}

export interface BlacklistTable {
  sha256: string;
  reason: string;
  created_at: number;
}
