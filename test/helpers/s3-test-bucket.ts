import { randomBytes } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  paginateListObjectsV2,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';

/** Where the S3 tests find a server (scripts/s3-test-server.ts starts one for a test run). */
export interface S3TestEnvironment {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
}

const VARIABLES = ['FILEHAVEN_TEST_S3_ENDPOINT', 'FILEHAVEN_TEST_S3_ACCESS_KEY', 'FILEHAVEN_TEST_S3_SECRET_KEY'] as const;

/** The test server from FILEHAVEN_TEST_S3_ENDPOINT, _ACCESS_KEY and _SECRET_KEY, or null when any is unset. */
export function s3TestEnvironment(): S3TestEnvironment | null {
  const [endpoint, accessKeyId, secretAccessKey] = VARIABLES.map((name) => process.env[name]);
  if (!endpoint || !accessKeyId || !secretAccessKey) return null;
  return { endpoint, accessKeyId, secretAccessKey };
}

/**
 * Why S3 tests cannot run here, for `describe(name, { skip })`, or false when they can. On CI
 * (CI=true) a missing server is a failure, not a skip: a suite that silently skips there
 * proves nothing.
 */
export function s3SkipReason(): string | false {
  if (s3TestEnvironment()) return false;
  const missing = VARIABLES.filter((name) => !process.env[name]).join(', ');
  if (process.env.CI === 'true') throw new Error(`CI=true but ${missing} not set: the S3 tests must run on CI (see docs/testing.md)`);
  return `S3 tests skipped: set FILEHAVEN_TEST_S3_ENDPOINT (see docs/testing.md); missing ${missing}`;
}

/**
 * A client for the test server. Tests only pass credentials explicitly; the server reads
 * them from the SDK's chain (createS3Client).
 */
export function testS3Client(overrides: Partial<S3TestEnvironment> = {}, config: S3ClientConfig = {}): S3Client {
  return new S3Client(testS3ClientConfig(overrides, config));
}

/** The settings of testS3Client, for a store that builds its own client (the resumable storage). */
export function testS3ClientConfig(overrides: Partial<S3TestEnvironment> = {}, config: S3ClientConfig = {}): S3ClientConfig {
  const env = s3TestEnvironment();
  if (!env) throw new Error('no S3 test server: check s3SkipReason() first');
  const { endpoint, accessKeyId, secretAccessKey } = { ...env, ...overrides };
  return {
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    // radosgw refuses aws-chunked bodies with trailing checksums (../shared/S3-TESTING.md).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...config,
  };
}

export interface TestBucket {
  bucket: string;
  client: S3Client;
  /** Deletes every object and aborts every multipart upload, then the bucket; closes the client. */
  remove(): Promise<void>;
}

/** A fresh, empty bucket `fh-test-<random>` on the test server. */
export async function createTestBucket(): Promise<TestBucket> {
  const client = testS3Client();
  const bucket = `fh-test-${randomBytes(8).toString('hex')}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    bucket,
    client,
    async remove() {
      try {
        await emptyBucket(client, bucket);
        await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      } finally {
        client.destroy();
      }
    },
  };
}

/** Every object (one request each: test buckets are small) and every multipart upload. */
async function emptyBucket(client: S3Client, bucket: string): Promise<void> {
  for await (const page of paginateListObjectsV2({ client }, { Bucket: bucket })) {
    await Promise.all((page.Contents ?? []).map((object) => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }))));
  }
  for (let round = 0; ; round++) {
    if (round === 100) throw new Error(`multipart uploads in ${bucket} do not go away`);
    // Each round aborts what it saw, so a fresh listing is the next page.
    const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    const uploads = page.Uploads ?? [];
    if (uploads.length === 0) return;
    await Promise.all(uploads.map((upload) => client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }))));
  }
}

/** What a bucket holds, straight from S3: object names and unfinished multipart uploads (`upload:<name>`). */
export async function bucketContents(client: S3Client, bucket: string): Promise<{ objects: string[]; uploads: string[] }> {
  const objects: string[] = [];
  for await (const page of paginateListObjectsV2({ client }, { Bucket: bucket })) {
    for (const object of page.Contents ?? []) objects.push(object.Key!);
  }
  const uploads: string[] = [];
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  for (let more = true; more; ) {
    const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
    for (const upload of page.Uploads ?? []) uploads.push(`upload:${upload.Key}`);
    ({ NextKeyMarker: keyMarker, NextUploadIdMarker: uploadIdMarker } = page);
    more = page.IsTruncated === true;
  }
  return { objects: objects.sort(), uploads: uploads.sort() };
}
