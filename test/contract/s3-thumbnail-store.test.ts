import { S3ThumbnailStore } from '../../src/blob/s3-thumbnail-store.js';
import { bucketContents, createTestBucket, s3SkipReason } from '../helpers/s3-test-bucket.js';
import { thumbnailStoreContract } from './thumbnail-store.contract.js';

// Throws on CI when no server is configured: there the S3 tests must run, not skip.
const skip = s3SkipReason();
const PREFIX = 'fh/';
const THUMB_NAME = /^fh\/thumbs\/[0-9a-f]{64}$/;

thumbnailStoreContract(
  'S3ThumbnailStore',
  async () => {
    const bucket = await createTestBucket();
    return {
      store: new S3ThumbnailStore({ bucket: bucket.bucket, prefix: PREFIX, client: bucket.client }),
      // Unfinished multipart uploads and any object that is not a thumbnail name.
      strayEntries: async () => {
        const { objects, uploads } = await bucketContents(bucket.client, bucket.bucket);
        return [...uploads, ...objects.filter((name) => !THUMB_NAME.test(name))];
      },
      cleanup: () => bucket.remove(),
      raceRepeats: 5,
    };
  },
  { skip },
);
