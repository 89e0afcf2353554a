import type { Readable } from 'node:stream';

/** A blob written to staging, hashed and counted, not yet visible under its digest. */
export interface StagedBlob {
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string;
  /** Number of bytes. */
  readonly size: number;
  /** Store-specific handle of the staged bytes. */
  readonly handle: string;
}

/** An inclusive byte range, as RFC 9110 ranges are. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Content-addressed blob storage. Blobs are immutable and named by their SHA-256; the
 * metadata store decides when one may be removed (services/blob-lifecycle.ts).
 */
export interface BlobStore {
  /**
   * Streams `source` into staging while hashing and counting. Rejects with
   * BlobTooLargeError as soon as more than `maxBytes` arrive, with BlobStorageError when
   * the store's own storage fails (disk full, permissions), and with the stream's error
   * (or the signal's reason) otherwise; in every failure nothing is left behind.
   */
  stage(source: Readable, options: { maxBytes: number; signal?: AbortSignal }): Promise<StagedBlob>;
  /** Makes a staged blob durable under its digest; if the digest exists, just drops the staged copy. */
  commit(staged: StagedBlob): Promise<void>;
  /** Drops a staged blob that will not be committed; never fails for a missing one. */
  discard(staged: StagedBlob): Promise<void>;
  /** Streams a blob, or the inclusive range of it; rejects with BlobNotFoundError. */
  read(sha256: string, range?: ByteRange): Promise<Readable>;
  /** Whether a blob is stored. */
  has(sha256: string): Promise<boolean>;
  /** Removes a blob; a missing one is not an error. */
  delete(sha256: string): Promise<void>;
  /**
   * Every stored blob, streamed (a store may hold millions: never all names at once).
   * A blob removed or added during the walk may or may not be listed. gc uses this to find
   * bytes without a blob row; the metadata store, not the listing, decides what may go.
   */
  listBlobs(): AsyncIterable<StoredBlobInfo>;
  /** Every staged upload not yet committed or discarded, streamed; gc removes abandoned ones. */
  listStaged(): AsyncIterable<StagedInfo>;
  /**
   * Removes staged bytes by handle (as listStaged gives it); a missing one is not an error.
   * Only for abandoned uploads: an upload still writing would fail at commit.
   */
  deleteStaged(handle: string): Promise<void>;
}

/** A stored blob as a listing sees it. */
export interface StoredBlobInfo {
  /** Hex SHA-256: the blob's name. */
  readonly sha256: string;
  /** Bytes stored. */
  readonly size: number;
  /** Last modification, epoch ms of the wall clock (the upload's last write). */
  readonly modifiedAt: number;
}

/** A staged upload as a listing sees it. */
export interface StagedInfo {
  /** The StagedBlob handle. */
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
  constructor(readonly sha256: string) {
    super(`blob ${sha256} not found`);
  }
}

/**
 * The store's own storage failed while staging (ENOSPC, EACCES, EMFILE, EIO...): a server
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
