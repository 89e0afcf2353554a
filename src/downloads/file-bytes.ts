import type { Readable } from 'node:stream';
import { BlobNotFoundError, type BlobStore, type ByteRange } from '../blob/blob-store.js';
import type { MetadataStore } from '../db/repositories/repositories.js';
import { errors } from '../domain/errors.js';
import type { FileRecord } from '../domain/types.js';

/** Opens a file's bytes: what downloads, ZIPs and thumbnails read through. */
export interface FileBytes {
  /** The bytes of a file, or a range of them; errorFileNotFound when the blob is gone (deleted meanwhile). */
  open(file: FileRecord, range?: ByteRange): Promise<Readable>;
}

/** Blob keys remembered (a digest and a key: ~200 bytes each); the least recently read go first. */
export const REMEMBERED_KEYS = 10_000;

/**
 * A file's bytes from the blob its digest names. The digest's key is remembered: a blob's
 * row never changes its key while the blob lives, and without it every download took a
 * second pool connection for this lookup (issue 28: 1,000 downloads at once queued for 10
 * connections). Downloads of one file that start together share one lookup. A key that
 * names no blob any more (removed once unreferenced, its digest stored again since under a
 * new key; or a shared lookup that began before that) is asked again, by a query of its own.
 */
export function fileBytes(store: MetadataStore, blobs: BlobStore): FileBytes {
  const keys = new Map<string, string>();
  const remember = (sha256: string, key: string) => {
    keys.delete(sha256);
    keys.set(sha256, key);
    if (keys.size > REMEMBERED_KEYS) keys.delete(keys.keys().next().value!);
  };
  const lookingUp = new Map<string, Promise<string | null>>();
  const lookUp = async (sha256: string): Promise<string | null> => {
    const shared = lookingUp.get(sha256);
    if (shared) {
      // Joined, not started: it may have begun before this file's blob row was written
      // (the digest's last file deleted, then stored again). Null from it is asked again.
      const key = await shared;
      return key ?? store.blobs.keyOf(sha256);
    }
    const pending = store.blobs.keyOf(sha256);
    lookingUp.set(sha256, pending);
    const forget = () => lookingUp.delete(sha256);
    pending.then(forget, forget);
    return pending;
  };
  const keyOf = async (sha256: string): Promise<string> => {
    const key = keys.get(sha256) ?? (await lookUp(sha256));
    if (key === null) throw new BlobNotFoundError(sha256);
    remember(sha256, key);
    return key;
  };
  return {
    open: async (file, range) => {
      try {
        const key = await keyOf(file.sha256);
        try {
          return await blobs.read(key, range);
        } catch (error) {
          if (!(error instanceof BlobNotFoundError)) throw error;
          keys.delete(file.sha256);
          const now = await store.blobs.keyOf(file.sha256);
          if (now === null || now === key) throw error;
          remember(file.sha256, now);
          return await blobs.read(now, range);
        }
      } catch (error) {
        // STYLE.md rule 5: a missing blob is translated here, not left to become a 500.
        if (error instanceof BlobNotFoundError) throw errors.fileNotFound();
        throw error;
      }
    },
  };
}
