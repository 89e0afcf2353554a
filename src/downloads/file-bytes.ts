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
 * connections). A remembered key whose blob is gone (removed once unreferenced, its digest
 * stored again since under a new key) is looked up again, once.
 */
export function fileBytes(store: MetadataStore, blobs: BlobStore): FileBytes {
  const keys = new Map<string, string>();
  const remember = (sha256: string, key: string) => {
    keys.delete(sha256);
    keys.set(sha256, key);
    if (keys.size > REMEMBERED_KEYS) keys.delete(keys.keys().next().value!);
  };
  const lookUp = async (sha256: string) => {
    const key = await store.blobs.keyOf(sha256);
    if (key === null) throw new BlobNotFoundError(sha256);
    remember(sha256, key);
    return key;
  };
  return {
    open: async (file, range) => {
      try {
        const known = keys.get(file.sha256);
        if (known === undefined) return await blobs.read(await lookUp(file.sha256), range);
        remember(file.sha256, known);
        try {
          return await blobs.read(known, range);
        } catch (error) {
          if (!(error instanceof BlobNotFoundError)) throw error;
          keys.delete(file.sha256);
          const key = await lookUp(file.sha256);
          if (key === known) throw error;
          return await blobs.read(key, range);
        }
      } catch (error) {
        // STYLE.md rule 5: a missing blob is translated here, not left to become a 500.
        if (error instanceof BlobNotFoundError) throw errors.fileNotFound();
        throw error;
      }
    },
  };
}
