import { S3BlobStore } from '../../src/blob/s3-blob-store.js';
import { S3ResumableStorage, type S3ResumableStorageOptions } from '../../src/blob/s3-resumable-storage.js';
import { bucketContents, createTestBucket, s3SkipReason, testS3ClientConfig } from '../helpers/s3-test-bucket.js';
import { resumableStorageContract } from './resumable-storage.contract.js';

// Throws on CI when no server is configured: there the S3 tests must run, not skip.
const skip = s3SkipReason();
const PREFIX = 'fh/';
const MiB = 1024 * 1024;
/** A blob name the blob store lists: its own objects and finished uploads (`uploads/<id>`). */
const BLOB_NAME = /^fh\/(blobs|uploads)\/[0-9a-f]{32}$/;

resumableStorageContract(
  'S3ResumableStorage',
  async () => {
    const bucket = await createTestBucket();
    const blobs = new S3BlobStore({ bucket: bucket.bucket, prefix: PREFIX, client: bucket.client, partSize: 5 * MiB, queueSize: 2 });
    await blobs.init();
    const options: S3ResumableStorageOptions = {
      bucket: bucket.bucket,
      prefix: PREFIX,
      // Its own client, as composition.ts builds it: the storage adds a middleware of its own.
      client: testS3ClientConfig(),
      partSize: 5 * MiB,
      queueSize: 2,
      expiryMs: 86_400_000,
    };
    return {
      storage: new S3ResumableStorage(options, blobs),
      blobs,
      sibling: async () => new S3ResumableStorage(options, blobs),
      // tus's `.info` and `.part` records, unfinished multipart uploads, stray objects.
      uploadEntries: async () => {
        const { objects, uploads } = await bucketContents(bucket.client, bucket.bucket);
        return [...uploads, ...objects.filter((name) => !BLOB_NAME.test(name))];
      },
      cleanup: () => bucket.remove(),
    };
  },
  { skip },
);
