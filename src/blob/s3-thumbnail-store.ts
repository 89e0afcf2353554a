import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { BlobStorageError, SHA256_PATTERN } from './blob-store.js';
import type { StoredThumbnail, ThumbnailStore } from './thumbnail-store.js';

/**
 * Thumbnails as objects `<prefix>thumbs/<sha256>` in the blob store's bucket. A PUT is
 * atomic in S3: readers see the old object or the new one.
 */
export class S3ThumbnailStore implements ThumbnailStore {
  private readonly base: string;

  constructor(private readonly options: { bucket: string; prefix: string; client: S3Client }) {
    this.base = `${options.prefix}thumbs/`;
  }

  async put(sha256: string, bytes: Buffer): Promise<void> {
    try {
      await this.options.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: this.nameOf(sha256), Body: bytes, ContentLength: bytes.length }));
    } catch (error) {
      throw new BlobStorageError('thumbnail write', error);
    }
  }

  async get(sha256: string): Promise<Buffer | null> {
    try {
      const response = await this.options.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.nameOf(sha256) }));
      return Buffer.from((await response.Body?.transformToByteArray()) ?? []);
    } catch (error) {
      if (error instanceof Error && (error.name === 'NoSuchKey' || error.name === 'NotFound')) return null;
      throw new BlobStorageError('thumbnail read', error);
    }
  }

  async delete(sha256: string): Promise<void> {
    try {
      await this.options.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.nameOf(sha256) }));
    } catch (error) {
      throw new BlobStorageError('thumbnail delete', error);
    }
  }

  async *list(): AsyncIterable<StoredThumbnail> {
    let token: string | undefined;
    for (let more = true; more; ) {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.options.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: this.base, ContinuationToken: token }));
      } catch (error) {
        throw new BlobStorageError('thumbnail list', error);
      }
      for (const object of page.Contents ?? []) {
        const sha256 = object.Key?.slice(this.base.length) ?? '';
        if (SHA256_PATTERN.test(sha256)) yield { sha256, modifiedAt: object.LastModified?.getTime() ?? 0 };
      }
      token = page.NextContinuationToken;
      // As the blob store's listings: go on only when truncated and given a marker (radosgw always sends one).
      more = page.IsTruncated === true && token !== undefined;
    }
  }

  /** The object name of a digest, validated so no name is ever built from raw input. */
  private nameOf(sha256: string): string {
    if (!SHA256_PATTERN.test(sha256)) throw new Error(`not a sha256 digest: ${sha256}`);
    return this.base + sha256;
  }
}
