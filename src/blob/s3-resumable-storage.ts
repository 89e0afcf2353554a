import { Readable } from 'node:stream';
import type { Part, S3ClientConfig } from '@aws-sdk/client-s3';
import { S3Store } from '@tus/s3-store';
import type { StagedBlob } from './blob-store.js';
import { type ResumableStorage, UPLOAD_ID } from './resumable-storage.js';
import { RESUMABLE_FOLDER, type S3BlobStore } from './s3-blob-store.js';

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

  /**
   * Only the parts 1..n without a gap. Parts are sent a few at a time, so a server that dies
   * can leave part k+1 stored and part k not; the library would count both, resume after
   * k+1, and complete an object missing part k's bytes. Without the stray part the upload
   * resumes at part k, and sending k+1 again replaces it.
   */
  protected override async retrieveParts(id: string, partNumberMarker?: string): Promise<Part[]> {
    const parts = await super.retrieveParts(id, partNumberMarker);
    // The library pages through the listing by calling itself with a marker: trim only the whole.
    if (partNumberMarker !== undefined) return parts;
    const run: Part[] = [];
    for (const part of [...parts].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0))) {
      if (part.PartNumber !== run.length + 1) break;
      run.push(part);
    }
    return run;
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
        // One semaphore for every upload of the store: a few parts per upload in flight,
        // for many uploads at once (each part waits in a temp file of os.tmpdir()).
        maxConcurrentPartUploads: options.queueSize * 8,
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

  async complete(id: string, length: number): Promise<void> {
    if (await this.blobs.has(this.key(id))) return;
    // Every part is there but the object is not: an empty write at the end completes it.
    await this.dataStore.write(Readable.from([]), this.checked(id), length);
  }

  uploadIdOfKey(key: string): string | null {
    return key.startsWith(RESUMABLE_FOLDER) && UPLOAD_ID.test(key.slice(RESUMABLE_FOLDER.length)) ? key.slice(RESUMABLE_FOLDER.length) : null;
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
