import type { Account, FileRecord, FileStatus, Folder } from '../../domain/types.js';
import type { PoolConnections } from '../dialect.js';
import type { CommitHooks } from '../group-commit.js';

/** What a new account row needs. */
export interface NewAccount {
  login: string;
  passwordHash: string;
  name: string;
  email: string;
  premiumStart: number | null;
  premiumEnd: number | null;
  trafficLeft: number;
  isOperator: boolean;
  createdAt: number;
}

/** Account rows and their credentials. */
export interface AccountsRepository {
  /** Inserts an account; throws DuplicateError when the login is taken. */
  create(account: NewAccount): Promise<Account>;
  /** The account with this id, or null. */
  byId(id: number): Promise<Account | null>;
  /** The account with this login, or null. */
  byLogin(login: string): Promise<Account | null>;
  /** The stored password hash of a login, with the account; null if unknown. */
  credentials(login: string): Promise<{ account: Account; passwordHash: string } | null>;
  /** The account whose API-key lookup hash is this, or null. */
  byApiKeyHash(hash: string): Promise<Account | null>;
  /** The sealed API key of an account, or null when none was created. */
  sealedApiKey(id: number): Promise<string | null>;
  /** Stores a new API key (replacing any old one). */
  setApiKey(id: number, hash: string, sealed: string): Promise<void>;
  /** Sets the API key only if the account has none; false when one already existed. */
  setApiKeyIfAbsent(id: number, hash: string, sealed: string): Promise<boolean>;
  /** Sets the premium period and traffic. */
  setPremium(id: number, start: number | null, end: number | null, trafficLeft: number): Promise<void>;
  /** Sets the premium period only, leaving the traffic to concurrent downloads. */
  setPremiumPeriod(id: number, start: number | null, end: number | null): Promise<void>;
  /** Adds traffic atomically (never a read-then-write that could undo a running download's reservation). */
  addTraffic(id: number, bytes: number): Promise<void>;
  /**
   * Takes `bytes` of traffic if at least that much is left, atomically; false otherwise.
   * Concurrent callers can never drive traffic below zero (API.md section 6).
   */
  reserveTraffic(id: number, bytes: number): Promise<boolean>;
  /** Gives back traffic reserved but not sent. */
  refundTraffic(id: number, bytes: number): Promise<void>;
  /** Takes `bytes` of traffic, or what is left when that is less (never below zero). */
  chargeTraffic(id: number, bytes: number): Promise<void>;
  /** All accounts, oldest first. */
  list(): Promise<Account[]>;
  /** Number of accounts. */
  count(): Promise<number>;
  /** Disables or enables an account; a disabled account's key and sessions stop working. */
  setDisabled(id: number, disabled: boolean): Promise<void>;
  /** Replaces the password hash. */
  setPasswordHash(id: number, passwordHash: string): Promise<void>;
  /** Sets the balance (cents). */
  setBalance(id: number, cents: number): Promise<void>;
  /** Adds to the balance (cents, may be negative) atomically; returns the new balance. */
  addBalance(id: number, cents: number): Promise<number>;
  /** How the account can sign in besides its password: TOTP, passkeys, linked identities. */
  signInMethods(id: number): Promise<SignInMethods>;
}

/** What a new file row needs. */
export interface NewFile {
  id: string;
  ownerId: number;
  folderId: string | null;
  name: string;
  size: number;
  sha256: string;
  deleteHash: string;
  createdAt: number;
  /** When it expires, epoch ms; absent or null = never (issue 25). */
  expiresAt?: number | null;
}

/**
 * File rows. Members taking `liveAt` (epoch ms) leave out, or do not touch, files expired
 * at that time (domain/types.ts isExpired): an expired file behaves as deleted whether or
 * not gc has marked it yet. The services always pass it; only the operator's views omit it.
 */
export interface FilesRepository {
  /** Inserts a file in state A. */
  create(file: NewFile): Promise<FileRecord>;
  /** The file with this id in any state, or null. */
  byId(id: string): Promise<FileRecord | null>;
  /** The delete-secret hash of a file, or null if unknown. */
  deleteHash(id: string): Promise<string | null>;
  /**
   * Sets the state; returns false if the row was missing or already in `to`/deleted, or,
   * with `inFolder`, no longer in that folder (checked by the UPDATE itself, so a move that
   * commits first always wins: a folder's removal never takes a file moved out of it).
   */
  setStatus(id: string, from: FileStatus[], to: FileStatus, at: number, inFolder?: string): Promise<boolean>;
  /** Moves those of the listed files that `ownerId` owns and are not deleted (nor expired at `liveAt`); returns how many moved. */
  moveOwned(ids: string[], ownerId: number, folderId: string | null, liveAt?: number): Promise<number>;
  /** The files with these ids (any state). */
  byIds(ids: string[]): Promise<FileRecord[]>;
  /** Files of a folder in the given states, oldest first. */
  inFolder(folderId: string, states: FileStatus[]): Promise<FileRecord[]>;
  /** Total size of a folder's active files (not expired at `liveAt`). */
  folderActiveBytes(folderId: string, liveAt?: number): Promise<number>;
  /** Whether any non-deleted file points at this digest. */
  liveReferenceExists(sha256: string): Promise<boolean>;
  /** Counts a download start. */
  recordDownload(id: string, at: number): Promise<void>;
  /** Detaches deleted files (and those expired at `liveAt`) from a folder about to be removed. */
  detachDeleted(folderId: string, liveAt?: number): Promise<void>;
  /** A page of files, newest first (created_at, then id, descending), after the cursor. */
  list(query: FileQuery): Promise<FileRecord[]>;
  /** Blocks every active file with this digest; returns how many. */
  blockByDigest(sha256: string, at: number): Promise<number>;
  /** Adds body bytes sent by a download. */
  addBytesServed(id: string, bytes: number): Promise<void>;
  /**
   * Adds a batch of download counts to a file in one statement (downloads/download-counts.ts):
   * `starts` download starts, the latest at `lastStartAt` (null: none; an earlier stamp
   * never replaces a later one, so servers flushing out of order agree), and `bytesServed`.
   */
  addDownloads(id: string, batch: { starts: number; lastStartAt: number | null; bytesServed: number }): Promise<void>;
  /** Renames a live (active or blocked) file; false when it is missing or deleted (or expired at `liveAt`). */
  rename(id: string, name: string, liveAt?: number): Promise<boolean>;
  /**
   * Sets the expiry (epoch ms, null = never) of a live file not expired at `liveAt`;
   * false when it is missing, deleted or expired already (an expired file stays gone).
   */
  setExpiry(id: string, expiresAt: number | null, liveAt: number): Promise<boolean>;
  /**
   * Which of `names` live files of `ownerId` directly in `folderId` (null: the top) carry,
   * leaving out the file `exceptId`; exact spelling. Callers hold the scope's lock
   * (`locks.folder` or `locks.top`) for an answer that stays true until they commit.
   */
  namesTaken(scope: NameScope, names: string[]): Promise<Set<string>>;
  /** Moves every live file of a folder to another folder or the top (null); returns how many. */
  moveAll(fromFolderId: string, toFolderId: string | null): Promise<number>;
  /** A page of one owner's files in a chosen order, optionally filtered by name (My files). */
  browse(query: FileBrowseQuery): Promise<FileRecord[]>;
  /**
   * Active files of `scope.ownerId` directly in `scope.folderId` (null: the top), not
   * expired at `scope.liveAt`, oldest first (created_at, then id): with `name` only those
   * carrying it (exact spelling), and at most `limit` after `after` (WebDAV's tree, issue 27).
   */
  activeIn(scope: NameScope, options: { name?: string; after?: { createdAt: number; id: string }; limit: number }): Promise<FileRecord[]>;
}

/** Where sibling names are looked up: one owner's files or folders directly in one folder, or at the top. */
export interface NameScope {
  /** The owner. */
  ownerId: number;
  /** The folder (for files) or parent folder (for folders); null = the top level. */
  folderId: string | null;
  /** A row to leave out (the one being renamed). */
  exceptId?: string;
  /** Files expired at this time (epoch ms) carry no name (they behave as deleted); folders ignore it. */
  liveAt?: number;
}

/** The orders My files offers; each pages by (key, id) so equal keys never repeat or skip a row. */
export type FileSortKey = 'name' | 'size' | 'date';

/** The value of the sort key of a row, and its id: where a page of `browse` starts after. */
export interface BrowsePosition {
  /** The name (sort by name), the size or created_at (epoch ms). */
  key: string | number;
  /** The id, the tie-break. */
  id: string;
}

/** What `files.browse` lists. */
export interface FileBrowseQuery {
  ownerId: number;
  /** States to list. */
  states: FileStatus[];
  /** Only files in this folder; null = the top; undefined = every folder. */
  folderId?: string | null;
  /** Only names containing this text (case-insensitive for ASCII letters at least; `%` and `_` mean themselves). */
  nameContains?: string;
  /** Leave out files expired at this time, epoch ms (they behave as deleted). */
  liveAt?: number;
  /** Sort key; names compare lower-cased, in code point order on both engines. */
  sort: FileSortKey;
  /** Largest first (size), newest first (date), Z to A (name). */
  descending: boolean;
  /** Rows strictly after this position in that order. */
  after?: BrowsePosition;
  /** Page size. */
  limit: number;
}

/** Filters and cursor for listing files. */
export interface FileQuery {
  /** Only this owner's files. */
  ownerId?: number;
  /** Only files in these states (default: all). */
  states?: FileStatus[];
  /** Only files in this folder; null = the account's root; undefined = any folder. */
  folderId?: string | null;
  /** Files strictly older than this position (the last item of the previous page). */
  before?: { createdAt: number; id: string };
  /** Leave out files expired at this time, epoch ms (they behave as deleted); absent: keep them (the operator's views). */
  liveAt?: number;
  /** Page size. */
  limit: number;
}

/** The upload volume log (API.md 8: rolling 24 h per account). */
export interface UploadLogRepository {
  /** Records a stored upload. */
  record(accountId: number, bytes: number, at: number): Promise<void>;
  /** Total bytes of an account's uploads at or after `since`: one SUM, however many rows. */
  windowSum(accountId: number, since: number): Promise<number>;
  /** The oldest `limit` uploads of an account at or after `since`, oldest first (time, then row order). */
  oldest(accountId: number, since: number, limit: number): Promise<{ bytes: number; at: number }[]>;
  /** Drops rows older than `before`; returns how many. */
  prune(before: number): Promise<number>;
}

/** What a reservation holds bytes for: a direct download's traffic, or an upload's volume. */
export type ReservationKind = 'traffic' | 'upload';

/** One open reservation (db/database.ts ReservationsTable says what each part means). */
export interface ReservationRecord {
  id: number;
  accountId: number;
  kind: ReservationKind;
  /** Bytes taken from the account when the row was written (uploads: grown as they stream). */
  planned: number;
  /** The last checkpoint: bytes moved so far, never more than were. */
  settled: number;
  /** The server that holds it, and that server's process (a random id per start). */
  server: string;
  instance: string;
  /** Epoch ms; past it, any server may settle the row. */
  leaseUntil: number;
  createdAt: number;
}

/**
 * Open reservations. Opening one is written in the transaction that takes its bytes from
 * the account; `take` deletes a row and hands it to exactly one caller, which settles it
 * in the same transaction (services/reservations-service.ts).
 */
export interface ReservationsRepository {
  /** Inserts an open row; returns its id. */
  open(row: Omit<ReservationRecord, 'id' | 'settled'>): Promise<number>;
  /** Records a checkpoint of bytes moved; false when the row is gone (settled by another server). */
  checkpoint(id: number, settled: number): Promise<boolean>;
  /** Sets the planned bytes of an open row; false when the row is gone. */
  setPlanned(id: number, planned: number): Promise<boolean>;
  /** Moves the lease of these rows (those still open); returns how many. */
  renew(ids: number[], leaseUntil: number): Promise<number>;
  /**
   * Deletes the row and returns it as it was; null when it is already gone. Of callers
   * racing for one row, exactly one gets it (the delete takes the row's lock).
   */
  take(id: number): Promise<ReservationRecord | null>;
  /**
   * Up to `limit` rows that may need settling, by id after `afterId`: rows whose lease
   * ended before `now`, and (when `server` is given) every row of `server`'s processes
   * other than `instance`.
   */
  abandoned(query: { server?: string; instance: string; now: number; afterId: number; limit: number }): Promise<ReservationRecord[]>;
  /** Bytes planned by an account's open upload reservations. */
  uploadsInFlight(accountId: number): Promise<number>;
  /**
   * An account's upload volume in use: bytes stored since `since` (upload_log) plus those
   * planned by its open upload reservations, read by one statement, so in one snapshot
   * on PostgreSQL too: a stored upload moving from its reservation to upload_log (one
   * transaction) is seen before or after, never half done, with no lock held against it.
   */
  volumeInUse(accountId: number, since: number): Promise<number>;
  /** Every open row, oldest first, at most `limit`. */
  list(limit: number): Promise<ReservationRecord[]>;
}

/** One audit log entry. */
export interface AuditEntry {
  id: number;
  at: number;
  /** Who acted, e.g. `cli:root` or `web:admin`. */
  actor: string;
  /** What was done, e.g. `files.block`. */
  action: string;
  /** The object acted on, e.g. `file:K7Q2M9X4PA`. */
  object: string;
  /** Free-form details. */
  details: string;
}

/** The audit log of operator actions. */
export interface AuditRepository {
  /** Appends an entry. */
  record(entry: Omit<AuditEntry, 'id'>): Promise<void>;
  /** The newest entries first, at most `limit`, optionally only one action prefix. */
  list(options: { limit: number; action?: string }): Promise<AuditEntry[]>;
  /** A page of entries, newest first (at, then id, descending), matching every filter given. */
  search(filter: AuditFilter): Promise<AuditEntry[]>;
}

/** Filters and cursor of the operator console's audit log. */
export interface AuditFilter {
  /** Only this actor (exact, e.g. `web:admin`). */
  actor?: string;
  /** Only actions starting with this (`accounts.` or `files.block`). */
  action?: string;
  /** Only this object (exact, e.g. `account:bob`). */
  object?: string;
  /** Only entries at or after this time, epoch ms. */
  from?: number;
  /** Only entries before this time, epoch ms. */
  to?: number;
  /** Entries strictly older than this position (the last entry of the previous page). */
  before?: { at: number; id: number };
  /** Page size. */
  limit: number;
}

/** Filters and cursor of the operator console's account search. */
export interface AccountSearch {
  /** Only accounts whose login, name or e-mail contains this (ASCII case ignored). */
  text?: string;
  /** Accounts with an id above this (the last of the previous page). */
  afterId?: number;
  /** Page size. */
  limit: number;
}

/** Filters and cursor of the operator console's file search. */
export interface FileSearch {
  /** Only names containing this (ASCII case ignored). */
  name?: string;
  /** Only this owner's files. */
  ownerId?: number;
  /** Only files with this digest. */
  sha256?: string;
  /** Only these states (default: all). */
  states?: FileStatus[];
  /** Files strictly older than this position (the last of the previous page). */
  before?: { createdAt: number; id: string };
  /** Page size. */
  limit: number;
}

/** Uploads of one UTC day. */
export interface DailyUploads {
  /** The day: epoch ms of its 00:00 UTC. */
  day: number;
  /** Files created that day (uploads and copies), whatever became of them. */
  files: number;
  /** Their bytes. */
  bytes: number;
}

/** Read-only queries of the operator console (search, and the history behind the stats charts). */
export interface OperatorQueriesRepository {
  /** A page of accounts by id, matching the search. */
  searchAccounts(query: AccountSearch): Promise<Account[]>;
  /** A page of files in any state, newest first (created_at, then id, descending). */
  searchFiles(query: FileSearch): Promise<FileRecord[]>;
  /** Files created per UTC day in [from, to), days without any left out, oldest first. */
  dailyUploads(from: number, to: number): Promise<DailyUploads[]>;
  /**
   * What was live (active or blocked) at `at`: the files' bytes, and the bytes of their
   * distinct contents (what the store held for them; the difference is de-duplication).
   */
  liveBytesAt(at: number): Promise<{ fileBytes: number; storedBytes: number }>;
  /**
   * How `liveBytesAt` changed from `from` to `to` (to − from), read from the files created
   * or deleted in between and the other files of their contents only (files_created,
   * files_deleted, files_sha256): the cost of a day's changes, not of the table.
   */
  liveBytesChange(from: number, to: number): Promise<{ fileBytes: number; storedBytes: number }>;
  /** A page of every account's shares, revoked ones included, newest first (created_at, then id, descending); one owner's when given. */
  searchShares(query: LinkSearch): Promise<ShareRecord[]>;
  /** A page of every account's upload requests, closed ones included, newest first; one owner's when given. */
  searchRequests(query: LinkSearch): Promise<UploadRequestRecord[]>;
  /** How each of these accounts signs in besides its password, in three queries whatever their number (the console's list). */
  signInMethodsOf(accountIds: number[]): Promise<Map<number, SignInMethods>>;
}

/** The console's search of shares and upload requests (issue 25). */
export interface LinkSearch {
  /** Only this owner's; every account's when absent. */
  ownerId?: number;
  /** Only live ones (not revoked or closed). */
  liveOnly?: boolean;
  /** Where the page starts: after this (created_at, id), newest first. */
  before?: { createdAt: number; id: string };
  limit: number;
}

/** The console's figures of one UTC day (day number: floor(epoch ms / 86 400 000)). */
export interface SiteDay {
  day: number;
  /** Files created that day and their bytes. */
  uploads: number;
  uploadedBytes: number;
  /** At the end of the day: bytes of live files, and of their distinct contents. */
  fileBytes: number;
  storedBytes: number;
}

/** Finished days' figures, computed once and kept (migration 0017; services/stats-history-service.ts). */
export interface SiteDaysRepository {
  /** The kept days from `from` to `to` (day numbers, both included), oldest first. */
  between(from: number, to: number): Promise<SiteDay[]>;
  /** Keeps a finished day's figures; a day already kept stays as it is. */
  keep(day: SiteDay): Promise<void>;
}

/** Bytes served per UTC day (the console's chart); a day is floor(epoch ms / 86 400 000). */
export interface ServedDaysRepository {
  /** Adds `bytes` to a day's total atomically (concurrent adders never lose one another's bytes). */
  add(day: number, bytes: number): Promise<void>;
  /** The days from `from` to `to` (day numbers, both included) that served anything, oldest first. */
  between(from: number, to: number): Promise<Array<{ day: number; bytes: number }>>;
}

/** Named leases for the jobs one server of a fleet runs at a time (services/run-alone.ts). */
export interface RunLeasesRepository {
  /** Takes the lease until `until` when it is free, expired (before `now`) or already ours; whether we hold it. */
  take(name: string, holder: string, until: number, now: number): Promise<boolean>;
  /** Moves our lease's end; false when it is no longer ours (it ran out and another took it). */
  renew(name: string, holder: string, until: number): Promise<boolean>;
  /** Gives our lease up; another holder's is left alone. */
  release(name: string, holder: string): Promise<void>;
  /** Who holds the lease at `now`, or null. */
  holderOf(name: string, now: number): Promise<string | null>;
}

/** A resumable (tus) upload: who will own the file, what it will be, how far its digest got. */
export interface ResumableUploadRecord {
  /** The tus upload id: 32 random hex, never from a request. */
  id: string;
  accountId: number;
  /** The file's name as the client gave it (sanitised when the file is stored). */
  filename: string;
  /** The folder to store the file in; null = the account's root. */
  folderId: string | null;
  /** Upload-Length: the whole file's size. */
  length: number;
  /** The upload volume reservation holding `length` bytes; null for an unlimited account. */
  reservationId: number | null;
  /** The saved SHA-256 states, as JSON (resumable/upload-digest.ts). */
  digestCheckpoints: string;
  /** The file expiry its metadata asked for (`expires_in`, seconds), applied when it is stored; null = none asked. */
  expiresIn: number | null;
  /** The file the finished upload became (a partial: the file its final became); null while it is in progress. */
  fileId: string | null;
  /** Its part in tus's concatenation: null (a whole upload), `partial`, or `final;<id> <id>...` (uploads/upload-concat.ts). */
  concat: string | null;
  createdAt: number;
  /** After this, the upload is refused and gc removes it with its bytes (--upload-expiry). */
  expiresAt: number;
}

/** Resumable uploads (uploads/resumable-uploads-service.ts). */
export interface ResumableUploadsRepository {
  /** Inserts a new upload. */
  create(
    row: Omit<ResumableUploadRecord, 'digestCheckpoints' | 'fileId' | 'expiresIn' | 'concat'> & { expiresIn?: number | null; concat?: string | null },
  ): Promise<void>;
  /** The upload with this id, or null. */
  byId(id: string): Promise<ResumableUploadRecord | null>;
  /** Replaces the saved digest states. */
  saveCheckpoints(id: string, checkpoints: string): Promise<void>;
  /** Records the file the upload became (and its new `concat`, when given); false when it already had one (or is gone). */
  markStored(id: string, fileId: string, concat?: string): Promise<boolean>;
  /** Deletes the row and returns it; null when another caller took it first. */
  take(id: string): Promise<ResumableUploadRecord | null>;
  /** Up to `limit` uploads whose expiry is before `now`, oldest first. */
  expired(now: number, limit: number): Promise<ResumableUploadRecord[]>;
}

/**
 * Who writes a resumable upload now: one row per upload being written, held by one
 * request of one server and renewed while it runs (resumable/upload-locker.ts).
 */
export interface UploadLocksRepository {
  /** Takes the lock until `until` when it is free or expired (before `now`); whether we hold it. */
  take(uploadId: string, holder: string, until: number, now: number): Promise<boolean>;
  /** Moves our lock's end; says whether we still hold it and whether another request asked for it. */
  renew(uploadId: string, holder: string, until: number): Promise<{ held: boolean; releaseRequested: boolean }>;
  /** Asks the holder of a live lock to let go (its next renewal sees it). */
  requestRelease(uploadId: string): Promise<void>;
  /** Gives our lock up; another holder's is left alone. */
  release(uploadId: string, holder: string): Promise<void>;
  /** Frees every lock whose holder starts with `prefix` but not with `keep` (a restarted server's earlier processes). */
  releaseServer(prefix: string, keep: string): Promise<number>;
}

/** Aggregates for `filehaven stats` and the expiry sweep. */
export interface HousekeepingRepository {
  /** Brings the planner's statistics up to date where the engine does not by itself (SQLite's `PRAGMA optimize`). */
  refreshStatistics(): Promise<void>;
  /** Account count, files and bytes by status, blob count and bytes, downloads, bytes served: from the kept totals. */
  stats(): Promise<StoreStats>;
  /**
   * Replaces the rows of differences the database appended to the kept totals (migration
   * 0019) by their sums, one per kind; how many rows there were. Run it in a transaction.
   */
  foldTotals(): Promise<number>;
  /**
   * Up to `limit` blob rows (digest and size) with no live file, created before `before`,
   * by digest, starting after the digest `after` (keyset batches: never every row at once).
   */
  unreferencedBlobs(before: number, limit: number, after?: string): Promise<{ sha256: string; size: number }[]>;
  /**
   * Ids of live files whose last download (or upload, if never downloaded) is before
   * `cutoff`, oldest first (upload time, then id), at most `limit`; after the file `after`
   * when given (the last id of the batch before: keyset batches over any number of rows).
   */
  expiredFiles(cutoff: number, limit: number, after?: string): Promise<string[]>;
  /**
   * How many live files `expiredFiles` would list without a limit: one COUNT; with
   * `pastExpiryAt`, leaving out those `pastExpiry` lists at that time (a dry run counts each once).
   */
  countExpired(cutoff: number, pastExpiryAt?: number): Promise<number>;
  /**
   * Ids of live files whose own expiry (files.expires_at) is at or before `now`, soonest
   * first (then by id), at most `limit`; after the file `after` when given (keyset batches).
   */
  pastExpiry(now: number, limit: number, after?: string): Promise<string[]>;
  /** How many live files `pastExpiry` would list without a limit: one COUNT. */
  countPastExpiry(now: number): Promise<number>;
}

/** What `filehaven stats` reports. */
export interface StoreStats {
  accounts: number;
  files: Record<FileStatus, { count: number; bytes: number }>;
  /** Distinct blobs and their bytes: what the disk holds. */
  blobs: { count: number; bytes: number };
  /** Total downloads started. */
  downloads: number;
  /** Total body bytes sent. */
  bytesServed: number;
}

/** Folder rows. */
export interface FoldersRepository {
  /** Inserts a folder. */
  create(folder: Folder): Promise<Folder>;
  /** The folder with this id, or null. */
  byId(id: string): Promise<Folder | null>;
  /** Sub-folders of a folder, by name; at most `limit` of them when given (a caller with a cap reads no more). */
  children(id: string, limit?: number): Promise<Folder[]>;
  /** Removes a folder row. */
  remove(id: string): Promise<void>;
  /** A page of one owner's folders, newest first (created_at, then id, descending), after the cursor. */
  list(query: FolderQuery): Promise<Folder[]>;
  /** Active file count and bytes of each listed folder (files expired at `liveAt` left out), in one grouped query; folders without active files are absent. */
  activeTotals(ids: string[], liveAt?: number): Promise<Map<string, { files: number; bytes: number }>>;
  /** Renames a folder; false when it is gone. */
  rename(id: string, name: string): Promise<boolean>;
  /** Which of `names` the folders of `scope.ownerId` directly in `scope.folderId` carry (as files.namesTaken). */
  namesTaken(scope: NameScope, names: string[]): Promise<Set<string>>;
  /** Moves every sub-folder of a folder to another parent or the top (null); returns how many. */
  moveChildren(fromId: string, toParentId: string | null): Promise<number>;
  /**
   * The folders of `scope.ownerId` directly in `scope.folderId` (null: the top), oldest
   * first (created_at, then id); with `name`, only those carrying it (WebDAV's tree, issue 27).
   */
  within(scope: NameScope, name?: string): Promise<Folder[]>;
  /** Gives a folder a new parent (null: the top) and name at once; false when it is gone. */
  relocate(id: string, parentId: string | null, name: string): Promise<boolean>;
}

/** Filters and cursor for listing folders. */
export interface FolderQuery {
  /** Only this owner's folders. */
  ownerId: number;
  /** Only children of this folder; null = top-level folders; undefined = any parent. */
  parentId?: string | null;
  /** Folders strictly older than this position (the last item of the previous page). */
  before?: { createdAt: number; id: string };
  /** Page size. */
  limit: number;
}

/**
 * Blob rows: the metadata side of the blob store, one row per digest naming the key its
 * bytes are stored under. The services call the writing members under `locks.blob`
 * (services/blob-lifecycle.ts says which lock guards what).
 */
export interface BlobsRepository {
  /** The key a digest's bytes are stored under, or null when the digest has no row. */
  keyOf(sha256: string): Promise<string | null>;
  /** Records a blob stored under `key`; the digest must have no row (checked with keyOf under its lock). */
  insert(sha256: string, size: number, key: string, at: number): Promise<void>;
  /** Removes the digest's row if no live file points at it; the key it named, or null when it stays (or was absent). */
  removeIfUnreferenced(sha256: string): Promise<string | null>;
  /** Whether a blob row names this key. */
  namesKey(key: string): Promise<boolean>;
}

/**
 * Named locks, held from the call to the end of the transaction (outside a transaction
 * they mean nothing). Each engine implements them its own way (locks-repository.ts); the
 * contract suite runs concurrent transactions against them on every engine.
 */
export interface LocksRepository {
  /**
   * The lock of a blob name: a digest, or a store key. Every step that makes bytes
   * reachable or unreachable under a name (publish, copy, the last delete, gc) holds it.
   */
  blob(name: string): Promise<void>;
  /** The lock of a folder: a move into it and its removal are ordered; so are checks of the names in it. */
  folder(id: string): Promise<void>;
  /**
   * The lock of an account's top level, what `folder` is for a folder's names: a rename or
   * creation that keeps names unique there holds it. Taken after any folder lock, never
   * before (locks go from the inner folder outwards).
   */
  top(accountId: number): Promise<void>;
  /** The lock of an account's upload volume: each check and reservation against its limit is one step. */
  uploadVolume(accountId: number): Promise<void>;
  /** The lock of an account's premium period: each change, read and written, is one step. */
  premium(accountId: number): Promise<void>;
  /**
   * The lock of an upload request's counts: each check of its limits against what is
   * stored and in flight, and each slot becoming a stored file, is one step.
   */
  request(id: string): Promise<void>;
  /**
   * The lock of an account's WebDAV tree: each check of its locks for a conflict and the
   * lock granted after it (LOCK), and each folder move (no two moves make a cycle), is one step.
   */
  davTree(accountId: number): Promise<void>;
}

/** Blacklisted digests. */
export interface BlacklistRepository {
  /** Whether a digest is blacklisted. */
  has(sha256: string): Promise<boolean>;
  /** Adds a digest; a no-op if present. */
  add(sha256: string, reason: string, at: number): Promise<void>;
  /** Removes a digest; false if it was not listed. */
  remove(sha256: string): Promise<boolean>;
  /** All digests, oldest first. */
  list(): Promise<{ sha256: string; reason: string; createdAt: number }[]>;
  /** Adds a file-name pattern; a no-op if present. */
  addName(pattern: string, reason: string, at: number): Promise<void>;
  /** Removes a file-name pattern; false if it was not listed. */
  removeName(pattern: string): Promise<boolean>;
  /** All file-name patterns, oldest first. */
  names(): Promise<{ pattern: string; reason: string; createdAt: number }[]>;
}

/** One web sign-in session row. */
export interface SessionRecord {
  /** SHA-256 (hex) of the token in the cookie; the token itself is never stored. */
  id: string;
  /** The signed-in account. */
  accountId: number;
  /** Random secret the session's CSRF token is derived from. */
  csrfSecret: string;
  /** Sign-in time, epoch ms. */
  createdAt: number;
  /** End of the session, epoch ms; moved forward while the session is used. */
  expiresAt: number;
  /** Last request seen (recorded at most every few minutes), epoch ms. */
  lastSeenAt: number;
}

/** Web sign-in sessions. */
export interface SessionsRepository {
  /** Inserts a session; throws DuplicateError on an id collision. */
  create(session: SessionRecord): Promise<void>;
  /** The session with this id, expired or not, or null. */
  byId(id: string): Promise<SessionRecord | null>;
  /** Records use of a session and its new end. */
  touch(id: string, lastSeenAt: number, expiresAt: number): Promise<void>;
  /** Removes a session; false if there was none. */
  remove(id: string): Promise<boolean>;
  /** Removes every session of an account (sign out everywhere); returns how many. */
  removeForAccount(accountId: number): Promise<number>;
  /** Removes sessions that ended before `now`; returns how many. */
  removeExpired(now: number): Promise<number>;
}

/** Facts about the installation, by name. */
export interface ServerSettingsRepository {
  /** The value stored under `name`, or null. */
  get(name: string): Promise<string | null>;
  /** Stores `value` under `name` unless a value is there; returns the value that is stored. */
  setIfAbsent(name: string, value: string): Promise<string>;
}

/** Addresses that signed in to a login, by a keyed hash of both. */
export interface SignInAddressesRepository {
  /** When this login last signed in from this address (epoch ms), or null. */
  lastSuccess(id: string): Promise<number | null>;
  /** Records a successful sign-in now. */
  recordSuccess(id: string, at: number): Promise<void>;
  /** Forgets addresses whose last sign-in is older than `before`; returns how many. */
  prune(before: number): Promise<number>;
}

/** A share link to one file or one folder of its owner (issue 25). */
export interface ShareRecord {
  /** The link's id: 22 base62 characters from a CSPRNG (ids.linkId()). */
  id: string;
  ownerId: number;
  /** The shared file; null for a folder share. */
  fileId: string | null;
  /** The shared folder; null for a file share. */
  folderId: string | null;
  /** scrypt hash of the password; null when the share has none. */
  passwordHash: string | null;
  /** From this moment (epoch ms) the share answers errorShareExpired; null = never. */
  expiresAt: number | null;
  /** Downloads allowed in all; null = unlimited. */
  maxDownloads: number | null;
  /** Downloads counted so far (responses that started at byte 0). */
  downloads: number;
  /** Served from the owner's premium traffic when the owner has premium. */
  fast: boolean;
  createdAt: number;
  /** When it was revoked; null while it is live. A revoked share is gone for good. */
  revokedAt: number | null;
}

/** What a share's change sets; absent members stay as they are. */
export interface ShareChanges {
  expiresAt?: number | null;
  passwordHash?: string | null;
  maxDownloads?: number | null;
  fast?: boolean;
}

/** Why a share download was not counted. */
export type ShareCountRefusal = 'not-found' | 'expired' | 'limit';

/** Shares (sharing/shares-service.ts). */
export interface SharesRepository {
  /** Inserts a share; throws DuplicateError on an id collision. */
  create(share: Omit<ShareRecord, 'downloads' | 'revokedAt'>): Promise<ShareRecord>;
  /** The share with this id, revoked ones included, or null. */
  byId(id: string): Promise<ShareRecord | null>;
  /** A page of one owner's live (not revoked) shares, newest first (created_at, then id, descending), after the cursor. */
  list(query: { ownerId: number; before?: { createdAt: number; id: string }; limit: number }): Promise<ShareRecord[]>;
  /** Changes a live share of `ownerId`; the share as it is now, or null when it is not (or no longer) one. The count stays. */
  change(id: string, ownerId: number, changes: ShareChanges): Promise<ShareRecord | null>;
  /** Revokes a live share of `ownerId` at `at`; false when there was none. */
  revoke(id: string, ownerId: number, at: number): Promise<boolean>;
  /**
   * Counts one download of the share in ONE conditional UPDATE: it adds 1 only while the
   * share is live, not expired at `now` and under its limit, so concurrent counts on any
   * engine and any number of servers never pass `maxDownloads`. Null when it counted;
   * otherwise why not (read after the refusal, for the answer only).
   */
  countDownload(id: string, now: number): Promise<ShareCountRefusal | null>;
}

/** A sign-in in progress (migration 0015): single-use, short-lived. */
export interface SignInChallenge {
  /** SHA-256 (hex) of the random value the browser holds. */
  id: string;
  /** What it is for, such as 'oidc', 'passkey-register', 'passkey-sign-in', 'second-factor'. */
  kind: string;
  /** The account it is for, when known. */
  accountId: number | null;
  /** What the next step needs, as JSON text. */
  payload: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * State of sign-ins in progress, shared by every server on the database (auth/sign-in-challenges.ts).
 * Members taking `kind` ignore a challenge of another kind: a value issued for one step is
 * never accepted by another.
 */
export interface SignInChallengesRepository {
  /** Inserts a challenge; DuplicateError on an id collision. */
  create(challenge: SignInChallenge): Promise<void>;
  /** The live challenge of this id and kind, left in place; null when unknown, of another kind or expired. */
  peek(id: string, kind: string, now: number): Promise<SignInChallenge | null>;
  /**
   * Removes the challenge and returns it when it was live and of this kind, in one
   * statement: of concurrent takers on any engine and any number of servers, one wins.
   */
  take(id: string, kind: string, now: number): Promise<SignInChallenge | null>;
  /** Replaces the payload (a counter of wrong codes, say); false when the challenge is gone. */
  setPayload(id: string, payload: string): Promise<boolean>;
  /** Removes the expired ones; returns how many. */
  removeExpired(now: number): Promise<number>;
}

/** A passkey: a WebAuthn credential of an account (migration 0015). */
export interface PasskeyRecord {
  /** The credential id, base64url. */
  id: string;
  accountId: number;
  /** The name its owner gave it. */
  name: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The authenticator's signature counter last seen (0 for those that do not count). */
  counter: number;
  /** How the browser can reach the authenticator ('internal', 'usb', 'hybrid', ...). */
  transports: string[];
  /** Whether the credential is backed up (synced to other devices). */
  backedUp: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

/**
 * Passkeys (auth/passkeys-service.ts). Members taking an account id change only that
 * account's passkeys: another account's id changes nothing.
 */
export interface PasskeysRepository {
  /** Stores a new credential; DuplicateError when its id is registered already (to any account). */
  create(passkey: Omit<PasskeyRecord, 'lastUsedAt'>): Promise<void>;
  /** The credential with this id, or null. */
  byId(id: string): Promise<PasskeyRecord | null>;
  /** An account's passkeys, oldest first. */
  listForAccount(accountId: number): Promise<PasskeyRecord[]>;
  /** Renames a passkey of `accountId`; false when it has none of this id. */
  rename(id: string, accountId: number, name: string): Promise<boolean>;
  /** Removes a passkey of `accountId`; false when it has none of this id. */
  remove(id: string, accountId: number): Promise<boolean>;
  /**
   * Records a sign-in in ONE conditional UPDATE: the counter moves only forward (or stays
   * 0 for an authenticator that does not count), with `backedUp` and last_used_at, so of
   * two servers accepting assertions with the same counter, one wins. False when refused.
   */
  recordUse(id: string, counter: number, backedUp: boolean, at: number): Promise<boolean>;
}

/** An account's TOTP factor (migration 0015). */
export interface TotpFactor {
  accountId: number;
  /** The base32 secret, sealed (ServerSecrets.sealFactorSecret). */
  sealedSecret: string;
  /** When a code confirmed it; null while being set up (it does not count then). */
  confirmedAt: number | null;
  /** The newest RFC 6238 time step accepted; a code of this step or an older one is refused. */
  lastStep: number;
  createdAt: number;
}

/**
 * TOTP factors and recovery codes (auth/second-factor-service.ts). Each "used once" rule is
 * one conditional statement, so it holds across servers and engines (second-factors contract).
 */
export interface SecondFactorsRepository {
  /** The account's factor, confirmed or not; null when it has none. */
  totp(accountId: number): Promise<TotpFactor | null>;
  /** Stores a new unconfirmed factor, replacing an unconfirmed one; false (nothing changed) when a confirmed one exists. */
  beginTotp(accountId: number, sealedSecret: string, now: number): Promise<boolean>;
  /**
   * Confirms the unconfirmed factor with a code of `step`; false when there is none or the step is not newer,
   * or (given `sealedSecret`) when another set-up has replaced that stored secret meanwhile.
   */
  confirmTotp(accountId: number, step: number, now: number, sealedSecret?: string): Promise<boolean>;
  /** Accepts a code of `step` once, for a confirmed factor only: false for a replayed or older step. */
  useTotpStep(accountId: number, step: number): Promise<boolean>;
  /** Spends an unused recovery code of the account; false when unknown or already used. */
  useRecoveryCode(accountId: number, codeHash: string, now: number): Promise<boolean>;
  /** Replaces every recovery code of the account with these (keyed hashes). */
  replaceRecoveryCodes(accountId: number, codeHashes: string[], now: number): Promise<void>;
  /** How many recovery codes are still unused. */
  recoveryCodesLeft(accountId: number): Promise<number>;
  /** Removes the factor and the recovery codes; whether there was a factor. */
  remove(accountId: number): Promise<boolean>;
}

/** An OpenID Connect identity (issuer + subject) linked to an account (migration 0015). */
export interface LinkedIdentity {
  id: number;
  accountId: number;
  /** The issuer identifier (the ID token's `iss`). */
  issuer: string;
  /** The issuer's stable id of the person (the ID token's `sub`). */
  subject: string;
  /** The e-mail claim when it was linked, shown to the owner; it never links anything. */
  email: string;
  createdAt: number;
  /** When it last signed in; null when never. */
  lastUsedAt: number | null;
}

/** Identities linked to accounts (single sign-on, issue 26). */
export interface IdentitiesRepository {
  /**
   * Links an identity to an account in one INSERT; DuplicateError when the issuer and
   * subject are linked already (to this account or another): of concurrent linkers on any
   * engine and any number of servers, one wins.
   */
  link(identity: { accountId: number; issuer: string; subject: string; email: string; createdAt: number }): Promise<LinkedIdentity>;
  /** The identity with this issuer and subject, or null. */
  byIssuerSubject(issuer: string, subject: string): Promise<LinkedIdentity | null>;
  /** An account's identities, oldest first. */
  listForAccount(accountId: number): Promise<LinkedIdentity[]>;
  /** Removes identity `id` if `accountId` owns it; false otherwise. */
  unlink(id: number, accountId: number): Promise<boolean>;
  /** Records a sign-in through the identity at `at`. */
  touch(id: number, at: number): Promise<void>;
}

/** How an account can sign in besides its password (issue 26). */
export interface SignInMethods {
  /** A confirmed TOTP factor. */
  totp: boolean;
  /** Passkeys registered. */
  passkeys: number;
  /** OpenID Connect identities linked. */
  identities: number;
}

/** All repositories, bound to one connection or transaction. */
export interface Repositories {
  /** Work this transaction's COMMIT must wait for (outside a transaction: done at once). */
  commit: CommitHooks;
  accounts: AccountsRepository;
  files: FilesRepository;
  folders: FoldersRepository;
  blobs: BlobsRepository;
  blacklist: BlacklistRepository;
  uploadLog: UploadLogRepository;
  audit: AuditRepository;
  operatorQueries: OperatorQueriesRepository;
  housekeeping: HousekeepingRepository;
  serverSettings: ServerSettingsRepository;
  sessions: SessionsRepository;
  signInAddresses: SignInAddressesRepository;
  reservations: ReservationsRepository;
  runLeases: RunLeasesRepository;
  resumableUploads: ResumableUploadsRepository;
  uploadLocks: UploadLocksRepository;
  servedDays: ServedDaysRepository;
  siteDays: SiteDaysRepository;
  shares: SharesRepository;
  uploadRequests: UploadRequestsRepository;
  signInChallenges: SignInChallengesRepository;
  passkeys: PasskeysRepository;
  secondFactors: SecondFactorsRepository;
  locks: LocksRepository;
  identities: IdentitiesRepository;
  davLocks: DavLocksRepository;
  davProperties: DavPropertiesRepository;
}

/** A WebDAV write lock on a path of an account's tree (issue 27, migration 0016). */
export interface DavLockRecord {
  /** The token's unique part (a UUID); on the wire the token is "urn:uuid:<token>". */
  token: string;
  accountId: number;
  /** The locked path: decoded names joined by "/", "/" for the top ("/a/b.txt"). */
  path: string;
  /** Exclusive, or shared. */
  exclusive: boolean;
  /** Depth: infinity (the collection and everything under it), else the resource alone. */
  deep: boolean;
  /** The client's DAV:owner element as XML, '' when none. */
  ownerXml: string;
  /** The timeout granted, in seconds. */
  timeoutSeconds: number;
  createdAt: number;
  /** When it ends by itself (epoch ms). */
  expiresAt: number;
}

/**
 * WebDAV locks (issue 27). Reads leave out locks expired at `now`. Whoever checks for a
 * conflict and then creates a lock holds `locks.davTree(accountId)` in the same
 * transaction, so two servers never grant conflicting locks.
 */
export interface DavLocksRepository {
  /**
   * The account's unexpired locks that matter to `path`: on the path itself, on any of its
   * ancestors (the caller checks `deep`), and on any path below it.
   */
  near(accountId: number, path: string, now: number): Promise<DavLockRecord[]>;
  /** The unexpired lock with this token (any account's: the caller checks), or null. */
  byToken(token: string, now: number): Promise<DavLockRecord | null>;
  /** Inserts a lock. */
  create(lock: DavLockRecord): Promise<void>;
  /** A new timeout for an unexpired lock of `accountId`; false when there is none. */
  refresh(token: string, accountId: number, timeoutSeconds: number, expiresAt: number, now: number): Promise<boolean>;
  /** Removes a lock of `accountId`; false when there was none. */
  remove(token: string, accountId: number): Promise<boolean>;
  /** Removes the account's locks on `path` and below it (the resource was deleted or moved away); how many. */
  removeUnder(accountId: number, path: string): Promise<number>;
  /** Removes locks expired at `now` (housekeeping); how many. */
  purgeExpired(now: number): Promise<number>;
}

/** One dead property of a WebDAV resource (issue 27). */
export interface DavProperty {
  /** Its namespace URI ('' for none). */
  namespace: string;
  /** Its local name. */
  name: string;
  /** The element's content as XML, the namespaces it uses declared in it ('' when empty). */
  valueXml: string;
}

/**
 * Dead properties (PROPPATCH) of an account's resources. A resource is named by what it
 * is: "file:<id>", "folder:<id>", or "top" for the account's top level.
 */
export interface DavPropertiesRepository {
  /** The resource's properties, by namespace then name. */
  list(accountId: number, resource: string): Promise<DavProperty[]>;
  /** The properties of several resources in one query (a Depth: 1 listing); resources without any are absent. */
  listMany(accountId: number, resources: string[]): Promise<Map<string, DavProperty[]>>;
  /** Sets (inserts or replaces) each property. */
  set(accountId: number, resource: string, properties: DavProperty[]): Promise<void>;
  /** Removes the named properties (absent ones are no error). */
  remove(accountId: number, resource: string, names: { namespace: string; name: string }[]): Promise<void>;
  /** Removes every property of the resource (it was deleted, or is about to be replaced). */
  removeAll(accountId: number, resource: string): Promise<void>;
  /** Copies every property of `from` onto `to`, replacing `to`'s (a COPY). */
  copyAll(accountId: number, from: string, to: string): Promise<void>;
  /**
   * Removes the properties of resources that are gone: files deleted (or expired at
   * `liveAt`) by any door, not only WebDAV's, and folders removed (housekeeping); how many.
   */
  removeOrphans(liveAt: number): Promise<number>;
}

/** An upload request (issue 25): others upload into the owner's folder through its link. */
export interface UploadRequestRecord {
  /** The link id (ids.linkId()): unguessable. */
  id: string;
  ownerId: number;
  /** The folder files land in; null for the owner's top level. */
  folderId: string | null;
  title: string;
  message: string;
  /** The password's slow hash (security/passwords.ts); null when none. */
  passwordHash: string | null;
  /** When it stops taking uploads (epoch ms); null for never. */
  expiresAt: number | null;
  /** Files it takes at most; null = unlimited. */
  maxFiles: number | null;
  /** Bytes of all its files together at most; null = unlimited. */
  maxBytes: number | null;
  /** Bytes of each file at most; null = only the server's limit. */
  maxFileSize: number | null;
  /** Files stored through it. */
  files: number;
  /** Bytes of the files stored through it. */
  bytes: number;
  createdAt: number;
  /** Closed by its owner (or an operator): it takes nothing more. */
  closed: boolean;
}

/** What an owner may change on an upload request; absent members stay. */
export type UploadRequestChanges = Partial<
  Pick<UploadRequestRecord, 'title' | 'message' | 'passwordHash' | 'expiresAt' | 'maxFiles' | 'maxBytes' | 'maxFileSize'>
>;

/** An upload into a request that is still arriving (its bytes reserved ahead). */
export interface UploadRequestSlot {
  id: number;
  requestId: string;
  /** Bytes it holds of the request's max_bytes. */
  bytes: number;
  /** Until when it counts unless renewed (epoch ms). */
  leaseUntil: number;
  createdAt: number;
  /** The resumable upload holding it (its tus id); null for an upload that arrives in one request. */
  uploadId: string | null;
}

/**
 * Upload requests and the slots of uploads into them. The rules over the counts
 * (sharing/request-slots.ts) run under `locks.request(id)`.
 */
export interface UploadRequestsRepository {
  /** Inserts a new request with nothing stored through it yet. */
  create(row: Omit<UploadRequestRecord, 'files' | 'bytes' | 'closed'>): Promise<UploadRequestRecord>;
  /** A request by id, closed ones included; null when unknown. */
  byId(id: string): Promise<UploadRequestRecord | null>;
  /** An owner's open requests, newest first (created_at, id), after `before`, at most `limit`. */
  listOwned(ownerId: number, query: { limit: number; before?: { createdAt: number; id: string } }): Promise<UploadRequestRecord[]>;
  /** Changes what an owner may change; false when the request is unknown. */
  change(id: string, changes: UploadRequestChanges): Promise<boolean>;
  /** Closes a request; false when it was unknown or closed already. */
  close(id: string): Promise<boolean>;
  /** Adds a stored file to the counts. */
  countStored(id: string, bytes: number): Promise<void>;
  /** Inserts a slot; returns its id. */
  openSlot(slot: Omit<UploadRequestSlot, 'id' | 'uploadId'> & { uploadId?: string }): Promise<number>;
  /** The slot a resumable upload holds; null when it holds none (any more). */
  slotOfUpload(uploadId: string): Promise<UploadRequestSlot | null>;
  /** Records that a resumable upload goes into a request (for as long as the upload's row lives). */
  bindUpload(uploadId: string, requestId: string, at: number): Promise<void>;
  /** The request a resumable upload goes into; null for an upload of the account itself. */
  requestOfUpload(uploadId: string): Promise<string | null>;
  /** Forgets which request a resumable upload went into (the upload is gone). */
  unbindUpload(uploadId: string): Promise<void>;
  /** Deletes a slot and returns it as it was; null when it is gone already. */
  takeSlot(id: number): Promise<UploadRequestSlot | null>;
  /** Deletes the request's slots whose lease ended before `now`; returns how many. */
  dropLapsedSlots(requestId: string, now: number): Promise<number>;
  /** The slots of a request still in flight at `now`: their count and bytes. */
  slotsInFlight(requestId: string, now: number): Promise<{ files: number; bytes: number }>;
  /** Moves the lease of these slots (those still there); returns how many. */
  renewSlots(ids: number[], leaseUntil: number): Promise<number>;
}

/** How a transaction must run. */
export interface TransactionOptions {
  /**
   * The work acts outside the database on what it reads (removes bytes no row names), so
   * it must read only what is durable: no transaction committed with it may come before
   * it (SQLite's group commit, db/group-commit.ts, then runs it first of its COMMIT).
   */
  readsDurable?: boolean;
}

/** The metadata store: repositories plus transactions. */
export interface MetadataStore extends Repositories {
  /**
   * Runs `work` in one transaction, committed when it resolves and rolled back when it
   * throws; resolves or rejects once that is durable (never before the COMMIT).
   *
   * A rejection does not always mean nothing committed: when the fsync after COMMIT fails
   * (SQLite's group commit, db/group-commit.ts) or the answer to COMMIT is lost, the rows
   * may have landed. A caller that acts on a failure must treat it as "unknown", as the
   * upload path does (blob-lifecycle.ts abandonStagedBlob removes bytes only if no row
   * names them), never as "rolled back".
   */
  transaction<T>(work: (repos: Repositories) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Why nothing the store commits can be promised durable any more (a failed fsync of
   * SQLite's WAL, a COMMIT failed on I/O), or null while all is well. Once set it stays:
   * every transaction fails, readiness fails, and the process must be restarted.
   */
  durabilityLost(): unknown;
  /** The engine underneath (for messages and the operator's `stats`). */
  readonly engine: 'sqlite' | 'postgres';
  /** Migrations a newer version ran on this database that this one does not know (a fleet mid-upgrade). */
  readonly newerMigrations: readonly string[];
  /** Resolves when the database answers a trivial query (readiness probes). */
  ping(): Promise<void>;
  /** The connection pool's state now (metrics); null on SQLite, which has no pool. */
  connections(): PoolConnections | null;
  /** Closes the connection(s). */
  close(): Promise<void>;
}

/** A unique constraint was violated (a login taken, an id collision). */
export class DuplicateError extends Error {
  override name = 'DuplicateError';
}
