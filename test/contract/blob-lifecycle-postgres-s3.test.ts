import { describe } from 'node:test';
import { S3BlobStore } from '../../src/blob/s3-blob-store.js';
import { openPostgres } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import { createTestSchema, POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { createTestBucket, s3SkipReason } from '../helpers/s3-test-bucket.js';
import { blobLifecycleContract } from './blob-lifecycle.contract.js';

const skip = (await postgresSkipReason()) || s3SkipReason();
if (skip) {
  describe('blob lifecycle: PostgreSQL + S3', { skip }, () => {});
} else {
  blobLifecycleContract('PostgreSQL + S3', async () => {
    const [{ schema, drop }, bucket] = await Promise.all([createTestSchema(), createTestBucket()]);
    const store = await openMetadataStore(openPostgres({ url: POSTGRES_TEST_URL, schema, poolSize: 8 }));
    const blobs = new S3BlobStore({ bucket: bucket.bucket, prefix: '', client: bucket.client, partSize: 5 * 1024 * 1024, queueSize: 2 });
    await blobs.init();
    return {
      store,
      blobs,
      async cleanup() {
        await store.close();
        await Promise.all([drop(), bucket.remove()]);
      },
    };
  });
}
