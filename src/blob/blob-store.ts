import type { Readable } from 'node:stream';
import type { CommitHooks } from '../db/group-commit.js';

/** A blob written to staging, hashed and counted, durable but not yet named by any blob row. */
export interface StagedBlob {
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string;
  /** Number of bytes. */
  readonly size: number;
  /** Store-specific handle of the staged bytes (a temp file, an object key). */
  readonly handle: string;
}

/** An inclusive byte range, as RFC 9110 ranges are. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Blob storage. Blobs are immutable; each is stored under a key the store chooses and a
 * blob row records (digest -> key), so a store may name bytes by their digest (local) or
 * keep an upload where it was written (S3: no second pass over the bytes to rename them).
 * The metadata store decides when a key may be published or removed, under per-key
 * locks (services/blob-lifecycle.ts): a store never decides that on its own.
 */
export interface BlobStore {
  /**
   * Checks at start that the storage is there and usable (folders created, bucket
   * reachable with these credentials); rejects with BlobStoreUnavailableError naming
   * the setting to fix.
   */
  init(): Promise<void>;
  /**
   * Checks, changing nothing, that the storage is still there and usable (readiness
   * probes): unlike init, it creates no folder, so an unmounted volume is not ready.
   */
  check(): Promise<void>;
  /**
   * Streams `source` into staging while hashing and counting. Rejects with
   * BlobTooLargeError as soon as more than `maxBytes` arrive, with BlobStorageError when
   * the store's own storage fails (disk full, permissions, the object store down), and
   * with the stream's error (or the signal's reason) otherwise; in every failure nothing
   * is left behind.
   */
  stage(source: Readable, options: { maxBytes: number; signal?: AbortSignal }): Promise<StagedBlob>;
  /**
   * The key `publish` will return for this staged blob, known before publishing so the
   * caller can lock it first. Pure: no I/O.
   */
  keyFor(staged: StagedBlob): string;
  /**
   * Makes staged bytes readable under `keyFor(staged)` and returns that key. Cheap (a
   * rename or an existence check, never a copy of the bytes), because it runs inside the
   * metadata transaction that records the key, under the key's lock. If bytes are already
   * stored under the key (the same digest on a content-addressed store), the staged copy
   * is dropped. Rejects with BlobNotFoundError when the staged bytes are gone (gc took an
   * abandoned upload). `commit`, the hooks of that transaction, takes what makes the
   * publication durable (a folder's fsync) to run once before its COMMIT, shared with the
   * transactions committed with it; without it, that is done before this resolves.
   */
  publish(staged: StagedBlob, commit?: CommitHooks): Promise<string>;
  /** Drops a staged blob that will not be published; never fails for a missing one. */
  discard(staged: StagedBlob): Promise<void>;
  /**
   * Streams a blob, or the inclusive range of it; rejects with BlobNotFoundError. The
   * stream may also be RecyclableChunks, for a reader that can say when it is done with
   * each chunk.
   */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Whether bytes are stored under a key; false for a key this store could never have made. */
  has(key: string): Promise<boolean>;
  /** Removes the bytes under a key; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Every published or fully staged object, streamed (a store may hold millions: never
   * all names at once). An object removed or added during the walk may or may not be
   * listed. gc uses this to find bytes no blob row names; the metadata store, not the
   * listing, decides what may go.
   */
  listBlobs(): AsyncIterable<StoredBlobInfo>;
  /**
   * Every upload still being written (a temp file, an unfinished multipart upload),
   * streamed; gc removes those untouched for its grace.
   */
  listStaged(): AsyncIterable<StagedInfo>;
  /**
   * Removes an unfinished upload by handle (as listStaged gives it); a missing one is not
   * an error. Only for abandoned uploads: an upload still writing then fails cleanly.
   */
  deleteStaged(handle: string): Promise<void>;
}

/**
 * A blob stream whose chunks a reader may hand back once it no longer needs them (their
 * bytes have left the process), for the stream to read into again: downloads at disk
 * speed then allocate nothing per chunk (blob/file-range-stream.ts says why that matters).
 * A recycled chunk must not be touched again; handing back one the stream did not make
 * is ignored.
 */
export interface RecyclableChunks {
  recycle(chunk: Buffer): void;
}

export const canRecycle = (stream: Readable): stream is Readable & RecyclableChunks => typeof (stream as Partial<RecyclableChunks>).recycle === 'function';

/** A stored blob as a listing sees it. */
export interface StoredBlobInfo {
  /** The key, as blob rows record it. */
  readonly key: string;
  /** Bytes stored. */
  readonly size: number;
  /** Last modification, epoch ms of the wall clock (when the object was completed or written). */
  readonly modifiedAt: number;
}

/** A staged upload as a listing sees it. */
export interface StagedInfo {
  /** What deleteStaged takes: a temp file's name, an unfinished multipart upload's key and id. */
  readonly handle: string;
  /** Last write, epoch ms of the wall clock: an upload in progress keeps this fresh. */
  readonly modifiedAt: number;
}

export class BlobTooLargeError extends Error {
  override name = 'BlobTooLargeError';
  constructor(readonly limit: number) {
    super(`blob exceeds ${limit} bytes`);
  }
}

export class BlobNotFoundError extends Error {
  override name = 'BlobNotFoundError';
  constructor(readonly key: string) {
    super(`blob ${key} not found`);
  }
}

/**
 * The store cannot be used at all (a missing bucket, refused credentials, a data folder
 * that is not writable); the message names the setting to fix, in one line.
 */
export class BlobStoreUnavailableError extends Error {
  override name = 'BlobStoreUnavailableError';
}

/**
 * The store's own storage failed (ENOSPC, EACCES, EMFILE, EIO, the object store down): a server
 * fault, not the client's. `cause` holds the underlying error for the log.
 */
export class BlobStorageError extends Error {
  override name = 'BlobStorageError';
  constructor(
    /** What failed: open, write, fsync, close. */
    readonly operation: string,
    cause: unknown,
  ) {
    super(`blob storage failed during ${operation}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export const SHA256_PATTERN = /^[0-9a-f]{64}$/;
