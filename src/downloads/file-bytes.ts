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

/** A file's bytes from the blob its digest names. */
export function fileBytes(store: MetadataStore, blobs: BlobStore): FileBytes {
  return {
    open: async (file, range) => {
      try {
        const key = await store.blobs.keyOf(file.sha256);
        if (key === null) throw new BlobNotFoundError(file.sha256);
        return await blobs.read(key, range);
      } catch (error) {
        // STYLE.md rule 5: a missing blob is translated here, not left to become a 500.
        if (error instanceof BlobNotFoundError) throw errors.fileNotFound();
        throw error;
      }
    },
  };
}
