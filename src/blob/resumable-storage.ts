import type { Readable } from 'node:stream';
import type { DataStore } from '@tus/utils';
import type { StagedBlob } from './blob-store.js';

/**
 * Where resumable uploads keep their bytes while they arrive, one implementation per blob
 * store: @tus/file-store in `<data>/uploads` beside a LocalBlobStore, @tus/s3-store under
 * `<prefix>uploads/` beside an S3BlobStore. A finished upload becomes a blob where it is
 * (a hard link, or the object itself), never by copying its bytes.
 */
export interface ResumableStorage {
  /** The tus store that writes and reports the uploads. */
  readonly dataStore: DataStore;
  /**
   * Where the digest saves its state, in bytes from the start of an upload of `length`:
   * at every multiple of this. On S3 the part size, since an upload a crash interrupts
   * resumes from a part boundary and then finds its state saved exactly there; locally a
   * bound on what is read again after a crash (the file is readable up to its offset).
   */
  checkpointStep(length: number): number;
  /**
   * Makes what has been written of an upload durable before its digest checkpoint is
   * saved (an fsync); a no-op where a write is durable once acknowledged (S3 parts).
   */
  sync(id: string): Promise<void>;
  /**
   * Bytes [start, end) of an upload still in progress, for a digest to catch up after a
   * crash; null where unfinished uploads cannot be read (S3 multipart parts).
   */
  readUnfinished(id: string, start: number, end: number): Promise<Readable | null>;
  /** Puts together an upload whose every byte is stored, where the store needs that (S3); idempotent. */
  complete(id: string, length: number): Promise<void>;
  /** The upload whose bytes a blob key names (S3: `uploads/<id>`), or null. */
  uploadIdOfKey(key: string): string | null;
  /** The bytes of a finished upload of `size` bytes from `start` on. */
  readFinished(id: string, start: number, size: number): Promise<Readable>;
  /**
   * The finished upload's bytes as a staged blob of the blob store, for the upload use case (UploadsService.upload).
   * The upload itself stays readable until `forgetFinished`.
   */
  stage(id: string, digest: { sha256: string; size: number }): Promise<StagedBlob>;
  /**
   * Removes what the tus store kept of a finished upload whose bytes were staged (its
   * records, and its own name for the bytes where the blob has another); the blob stays.
   */
  forgetFinished(id: string): Promise<void>;
  /** Removes an upload that will not become a file, with its bytes; a missing one is fine. */
  remove(id: string): Promise<void>;
}

/** Upload ids: 128 random bits in hex, made by the server; a request's id is checked against this before any use. */
export const UPLOAD_ID = /^[0-9a-f]{32}$/;
