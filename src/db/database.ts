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
  blacklist_names: BlacklistNamesTable;
  audit_log: AuditLogTable;
  upload_log: UploadLogTable;
  sessions: SessionsTable;
  server_settings: ServerSettingsTable;
  sign_in_addresses: SignInAddressesTable;
  reservations: ReservationsTable;
  run_leases: RunLeasesTable;
  resumable_uploads: ResumableUploadsTable;
  upload_locks: UploadLocksTable;
  served_days: ServedDaysTable;
  shares: SharesTable;
  upload_requests: UploadRequestsTable;
  upload_request_slots: UploadRequestSlotsTable;
  upload_request_uploads: UploadRequestUploadsTable;
  account_identities: AccountIdentitiesTable;
  totp_factors: TotpFactorsTable;
  recovery_codes: RecoveryCodesTable;
  passkeys: PasskeysTable;
  sign_in_challenges: SignInChallengesTable;
  dav_locks: DavLocksTable;
  dav_properties: DavPropertiesTable;
  site_days: SiteDaysTable;
  site_totals: SiteTotalsTable;
}

/**
 * The site's totals as rows of differences the database's triggers append (migration 0019);
 * their sums by kind are the totals. A fold replaces the rows by their sums.
 */
export interface SiteTotalsTable {
  id: Generated<number>;
  /** A file state (A, B, D), or `blob`. */
  kind: string;
  /** Files or blobs. */
  items: number;
  bytes: number;
  downloads: number;
  /** Bytes served. */
  served: number;
}

/** The console's figures of one finished UTC day (migration 0017), kept once computed. */
export interface SiteDaysTable {
  /** The UTC day number: floor(epoch ms / 86 400 000). */
  day: number;
  /** Files created that day and their bytes. */
  uploads: number;
  uploaded_bytes: number;
  /** At the end of the day: bytes of live files, and of their distinct contents. */
  file_bytes: number;
  stored_bytes: number;
}

/** A WebDAV write lock on a path of an account's tree (migration 0016). */
export interface DavLocksTable {
  /** The token's unique part; the token is "urn:uuid:<token>". */
  token: string;
  account_id: number;
  /** Decoded names joined by "/"; "/" is the top. */
  path: string;
  /** 1 exclusive, 0 shared. */
  exclusive: number;
  /** 1 for Depth: infinity, 0 for the resource alone. */
  deep: number;
  /** The client's DAV:owner element (XML), '' when none. */
  owner_xml: Generated<string>;
  timeout_seconds: number;
  created_at: number;
  expires_at: number;
}

/** A WebDAV dead property of a resource (migration 0016). */
export interface DavPropertiesTable {
  /** SHA-256 (hex) of account id, resource, namespace and name. */
  key: string;
  account_id: number;
  /** "file:<id>", "folder:<id>" or "top". */
  resource: string;
  namespace: string;
  name: string;
  /** The property's content as XML. */
  value_xml: string;
}

/** An OpenID Connect identity (issuer + subject) linked to an account (migration 0015). */
export interface AccountIdentitiesTable {
  id: Generated<number>;
  account_id: number;
  issuer: string;
  subject: string;
  /** The e-mail claim when linked, for the owner's and the operator's eyes only: it never links. */
  email: Generated<string>;
  created_at: number;
  last_used_at: number | null;
}

/** An account's TOTP secret (migration 0015); counts once confirmed_at is set. */
export interface TotpFactorsTable {
  account_id: number;
  /** The base32 secret sealed with the server secret (security/secrets.ts). */
  sealed_secret: string;
  confirmed_at: number | null;
  /** The newest RFC 6238 time step accepted: a code of this step or an older one is refused. */
  last_step: Generated<number>;
  created_at: number;
}

/** A one-time recovery code, stored as a keyed hash (migration 0015). */
export interface RecoveryCodesTable {
  account_id: number;
  code_hash: string;
  used_at: number | null;
  created_at: number;
}

/** A WebAuthn credential (migration 0015). */
export interface PasskeysTable {
  /** The credential id, base64url. */
  id: string;
  account_id: number;
  name: string;
  /** The COSE public key, base64url. */
  public_key: string;
  counter: Generated<number>;
  /** Comma-separated transports, '' when unknown. */
  transports: Generated<string>;
  backed_up: Generated<number>;
  created_at: number;
  last_used_at: number | null;
}

/** Single-use state of a sign-in in progress (migration 0015). */
export interface SignInChallengesTable {
  /** SHA-256 (hex) of the random value the browser holds. */
  id: string;
  kind: string;
  account_id: number | null;
  /** JSON. */
  payload: Generated<string>;
  created_at: number;
  expires_at: number;
}

/** A share link to one file or folder (migration 0012). */
export interface SharesTable {
  id: string;
  owner_id: number;
  file_id: string | null;
  folder_id: string | null;
  /** scrypt hash of the share's password (security/passwords.ts); null = none. */
  password_hash: string | null;
  expires_at: number | null;
  max_downloads: number | null;
  downloads: Generated<number>;
  fast: Generated<number>;
  created_at: number;
  /** Set when the owner (or an operator) revoked it: the link is gone for good. */
  revoked_at: number | null;
}

/** The upload request a resumable upload goes into (migration 0013). */
export interface UploadRequestUploadsTable {
  upload_id: string;
  request_id: string;
  created_at: number;
}

/** An upload request: a link where others upload into the owner's folder (migration 0013). */
export interface UploadRequestsTable {
  id: string;
  owner_id: number;
  folder_id: string | null;
  title: Generated<string>;
  message: Generated<string>;
  password_hash: string | null;
  expires_at: number | null;
  max_files: number | null;
  max_bytes: number | null;
  max_file_size: number | null;
  files: Generated<number>;
  bytes: Generated<number>;
  created_at: number;
  closed: Generated<number>;
}

/** An upload into a request still arriving: its file and bytes count until it ends (migration 0013). */
export interface UploadRequestSlotsTable {
  id: Generated<number>;
  request_id: string;
  bytes: number;
  lease_until: number;
  created_at: number;
  upload_id: string | null;
}

/** Bytes served in one UTC day (migration 0011). */
export interface ServedDaysTable {
  /** The UTC day number: floor(epoch ms / 86 400 000). */
  day: number;
  bytes: Generated<number>;
}

/** A resumable upload in progress, or stored and not yet forgotten (migration 0010). */
export interface ResumableUploadsTable {
  id: string;
  account_id: number;
  filename: string;
  folder_id: string | null;
  length: number;
  reservation_id: number | null;
  /** JSON: DigestCheckpoint[] (resumable/upload-digest.ts). */
  digest_checkpoints: Generated<string>;
  file_id: string | null;
  created_at: number;
  expires_at: number;
  /** The file expiry asked for in the upload's metadata, seconds; null = none asked (migration 0014). */
  expires_in: number | null;
  /** Its part in tus's concatenation: null (a whole upload), `partial` (`partial;<final id>` once joined), or `final;<id> <id>...` (migration 0018). */
  concat: string | null;
}

/** Who writes a resumable upload now (migration 0010). */
export interface UploadLocksTable {
  upload_id: string;
  holder: string;
  lease_until: number;
  release_requested: Generated<number>;
}

/** A job one server runs at a time (migration 0009). */
export interface RunLeasesTable {
  name: string;
  holder: string;
  lease_until: number;
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
  /** Body bytes sent by downloads of this file (free and direct). */
  bytes_served: Generated<number>;
  /** From this moment (epoch ms) the file behaves as deleted; null = never (migration 0014). */
  expires_at: number | null;
}

export interface FoldersTable {
  id: string;
  owner_id: number;
  parent_id: string | null;
  name: string;
  created_at: number;
}

/** One row per stored blob: its digest, size and the key its bytes are stored under. */
export interface BlobsTable {
  sha256: string;
  size: number;
  created_at: number;
  /** The BlobStore key (0006); null only on rows older than the migration. */
  object_key: string | null;
}

export interface BlacklistTable {
  sha256: string;
  reason: string;
  created_at: number;
}

/** File-name patterns refused at upload (`*` and `?` wildcards, case-insensitive). */
export interface BlacklistNamesTable {
  pattern: string;
  reason: string;
  created_at: number;
}

/** Operator actions: what, on which object, when, by whom. */
export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  actor: string;
  action: string;
  object: string;
  details: string;
}

/** One row per stored upload, for the rolling 24 h upload volume (API.md 8). */
export interface UploadLogTable {
  id: Generated<number>;
  account_id: number;
  bytes: number;
  at: number;
}

/** Web sign-in sessions; the id is the SHA-256 (hex) of the token the cookie holds. */
export interface SessionsTable {
  id: string;
  account_id: number;
  /** Random secret the session's CSRF token is derived from (ServerSecrets.csrfToken). */
  csrf_secret: string;
  created_at: number;
  expires_at: number;
  last_seen_at: number;
}

/** Name/value facts about the installation (e.g. `secret_fingerprint`). */
export interface ServerSettingsTable {
  name: string;
  value: string;
}

/** An address that signed in to a login; the id is a keyed hash of both (never stored in clear). */
export interface SignInAddressesTable {
  id: string;
  last_success_at: number;
}

/**
 * Bytes taken from an account for a transfer in flight (0007): `planned` was taken when
 * the row was written; `settled` is the last checkpoint of the bytes moved so far. The
 * row is held by one server process (`instance`, a random id per start, of the server
 * named `server`) while its `lease_until` (epoch ms) lies ahead.
 */
export interface ReservationsTable {
  id: Generated<number>;
  account_id: number;
  /** `traffic` (a direct download) or `upload`. */
  kind: string;
  planned: number;
  settled: number;
  server: string;
  instance: string;
  lease_until: number;
  created_at: number;
}
