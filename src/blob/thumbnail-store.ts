/**
 * Where thumbnails live (docs/web.md "Thumbnails"): beside the blobs, keyed by the digest of
 * the bytes they were made from, never named by any blob row. They are derived bytes: a
 * lost one is made again, and none keeps a blob alive. gc removes those whose digest no
 * longer has a blob row (gc-service.ts). A thumbnail is small (a bounded WebP, or an
 * empty marker for "this content has no thumbnail"), so it is passed around whole.
 */
export interface ThumbnailStore {
  /** Stores the bytes for a digest, replacing any: readers see the old or the new bytes, never a part. */
  put(sha256: string, bytes: Buffer): Promise<void>;
  /** The bytes stored for a digest, or null when there are none. */
  get(sha256: string): Promise<Buffer | null>;
  /** Removes a digest's thumbnail; a missing one is not an error. */
  delete(sha256: string): Promise<void>;
  /** Every stored thumbnail, streamed (never all names at once). */
  list(): AsyncIterable<StoredThumbnail>;
}

/** A stored thumbnail as a listing sees it. */
export interface StoredThumbnail {
  /** The digest of the content it was made from. */
  readonly sha256: string;
  /** When it was written, epoch ms of the wall clock. */
  readonly modifiedAt: number;
}
