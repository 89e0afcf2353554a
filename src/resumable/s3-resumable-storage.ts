import type { Readable } from 'node:stream';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { S3Store } from '@tus/s3-store';
import type { StagedBlob } from '../blob/blob-store.js';
import { RESUMABLE_FOLDER, type S3BlobStore } from '../blob/s3-blob-store.js';
import { UPLOAD_ID, type ResumableStorage } from './resumable-storage.js';

export interface S3ResumableStorageOptions {
  bucket: string;
  /** The store's --s3-prefix: uploads live under `<prefix>uploads/`. */
  prefix: string;
  /** The blob store's client settings (s3ClientConfig). */
  client: S3ClientConfig;
  /** Bytes per part (--s3-part-size). */
  partSize: number;
  /** Parts of one upload sent at once (--s3-queue-size). */
  queueSize: number;
  expiryMs: number;
}

/**
 * @tus/s3-store with every object name under `<prefix>uploads/`: the library names objects
 * by upload id at the bucket's root, so a middleware on its client puts the folder in front
 * of each Key it sends (it reads no Key back). An upload is a multipart upload of
 * `<prefix>uploads/<id>`, with tus's records `<id>.info` and `<id>.part` beside it.
 */
class FolderedS3Store extends S3Store {
  constructor(options: ConstructorParameters<typeof S3Store>[0], folder: string) {
    super(options);
    this.client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Key?: unknown; Delete?: { Objects?: Array<{ Key?: string }> } };
        if (typeof input.Key === 'string') input.Key = folder + input.Key;
        for (const object of input.Delete?.Objects ?? []) if (typeof object.Key === 'string') object.Key = folder + object.Key;
        return next(args);
      },
      { step: 'initialize', name: 'filehavenResumableFolder' },
    );
  }

  /** The size of every part of an upload of `length` bytes but its last (the library's own choice). */
  partSizeFor(length: number): number {
    return this.calcOptimalPartSize(length);
  }

  /** Drops tus's records of a finished upload whose object became a blob. */
  async forget(id: string): Promise<void> {
    await this.client.deleteObjects({ Bucket: this.bucket, Delete: { Objects: [{ Key: this.infoKey(id) }, { Key: this.partKey(id, true) }] } });
    await this.clearCache(id);
  }

  /** Removes an upload whatever its state: its multipart upload, object and records. */
  async removeAll(id: string): Promise<void> {
    try {
      const { 'upload-id': uploadId } = await this.getMetadata(id);
      if (uploadId) await this.client.abortMultipartUpload({ Bucket: this.bucket, Key: id, UploadId: uploadId }).catch(() => {});
    } catch {
      // No records: there is no multipart upload to find; the objects go below.
    }
    await this.client.deleteObjects({ Bucket: this.bucket, Delete: { Objects: [{ Key: id }, { Key: this.infoKey(id) }, { Key: this.partKey(id, true) }] } });
    await this.clearCache(id);
  }
}

export class S3ResumableStorage implements ResumableStorage {
  readonly dataStore: FolderedS3Store;

  constructor(
    options: S3ResumableStorageOptions,
    private readonly blobs: S3BlobStore,
  ) {
    this.dataStore = new FolderedS3Store(
      {
        s3ClientConfig: { ...options.client, bucket: options.bucket },
        partSize: options.partSize,
        maxConcurrentPartUploads: options.queueSize,
        expirationPeriodInMilliseconds: options.expiryMs,
        // Expiry is gc's job (it knows which uploads became files); no lifecycle tags.
        useTags: false,
      },
      `${options.prefix}${RESUMABLE_FOLDER}`,
    );
  }

  checkpointStep(length: number): number {
    return this.dataStore.partSizeFor(length);
  }

  async sync(): Promise<void> {
    // A part is durable once S3 acknowledged it, and the offset counts only those.
  }

  async readUnfinished(): Promise<Readable | null> {
    // Parts of a multipart upload cannot be read before it is completed.
    return null;
  }

  readFinished(id: string, start: number, size: number): Promise<Readable> {
    return this.blobs.read(this.key(id), { start, end: size - 1 });
  }

  async stage(id: string, digest: { sha256: string; size: number }): Promise<StagedBlob> {
    return this.blobs.adoptResumable(this.checked(id), digest);
  }

  forgetFinished(id: string): Promise<void> {
    return this.dataStore.forget(this.checked(id));
  }

  remove(id: string): Promise<void> {
    return this.dataStore.removeAll(this.checked(id));
  }

  private key(id: string): string {
    return `${RESUMABLE_FOLDER}${this.checked(id)}`;
  }

  private checked(id: string): string {
    if (!UPLOAD_ID.test(id)) throw new Error(`not an upload id: ${id}`);
    return id;
  }
}
