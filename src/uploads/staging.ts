import type { Readable } from 'node:stream';
import { BlobStorageError, type BlobStore, BlobTooLargeError, type StagedBlob } from '../blob/blob-store.js';
import { errors } from '../domain/errors.js';

/**
 * Streams an upload into the blob store's staging while it is hashed: errorFileSize past
 * `maxBytes` (nothing kept), and a failure of the storage itself is logged and answered
 * 500 errorUploadFaild (API.md 3). Other stream failures (client gone, malformed body, a
 * volume refusal) are rethrown for the caller to map.
 */
export async function stageUpload(
  blobs: BlobStore,
  source: Readable,
  options: { maxBytes: number; signal?: AbortSignal; log: (error: unknown, message: string) => void },
): Promise<StagedBlob> {
  try {
    return await blobs.stage(source, { maxBytes: options.maxBytes, signal: options.signal });
  } catch (error) {
    if (error instanceof BlobTooLargeError) throw errors.fileSize(options.maxBytes);
    if (error instanceof BlobStorageError) {
      options.log(error, 'staging an upload failed');
      throw errors.uploadStorage();
    }
    throw error;
  }
}
