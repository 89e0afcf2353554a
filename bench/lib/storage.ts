/**
 * PostgreSQL and S3 for the postgres-s3 backend: a fresh schema, an S3 endpoint (given, or
 * a one-node radosgw started for the run), a fresh bucket, and the raw S3 baselines. Each
 * is removed or stopped when its section unwinds.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import pg from 'pg';
import { defer } from './cleanup.js';
import { CHUNK } from './http-client.js';
import { counter, payload, timed } from './measure.js';

export const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CEPH_RGW = path.resolve('scripts/ceph-rgw.sh');
const run = promisify(execFile);

/** A fresh schema bench_<random> (dropped when the section unwinds), or why there is none. */
export async function createSchema(): Promise<{ schema: string } | { problem: string }> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(`create schema "${schema}"`);
  } catch (error) {
    return { problem: `no PostgreSQL at ${DATABASE_URL} (${(error as Error).message || String(error)}); set BENCH_DATABASE_URL` };
  } finally {
    await client.end().catch(() => {});
  }
  defer(`drop schema ${schema}`, async () => {
    const dropper = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
    await dropper.connect();
    try {
      await dropper.query(`drop schema if exists "${schema}" cascade`);
    } finally {
      await dropper.end();
    }
  });
  return { schema };
}

export interface S3Endpoint {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** 'BENCH_S3_ENDPOINT' or 'radosgw started for this run' */
  origin: string;
}

/** BENCH_S3_* when set; else a radosgw started now (stopped when the section unwinds); or why neither. */
export async function s3Endpoint(): Promise<S3Endpoint | { problem: string }> {
  const { BENCH_S3_ENDPOINT: endpoint, BENCH_S3_ACCESS_KEY: accessKeyId, BENCH_S3_SECRET_KEY: secretAccessKey } = process.env;
  if (endpoint) {
    if (!accessKeyId || !secretAccessKey) return { problem: 'BENCH_S3_ENDPOINT is set but BENCH_S3_ACCESS_KEY or BENCH_S3_SECRET_KEY is not' };
    return { endpoint, accessKeyId, secretAccessKey, origin: 'BENCH_S3_ENDPOINT' };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-bench-rgw-'));
  // Registered before init: whatever init started before failing stops with the folder.
  defer(`stop radosgw in ${dir}`, async () => {
    try {
      await run('bash', [CEPH_RGW, 'stop', dir]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  const started = Date.now();
  process.stdout.write('starting radosgw (scripts/ceph-rgw.sh init)... ');
  try {
    await run('bash', [CEPH_RGW, 'init', dir], { timeout: 180_000, killSignal: 'SIGKILL' });
  } catch (error) {
    console.log('failed');
    const stderr = (error as { stderr?: string }).stderr?.trim();
    return { problem: `no BENCH_S3_ENDPOINT, and radosgw did not start (bash scripts/ceph-rgw.sh init): ${stderr || (error as Error).message}` };
  }
  console.log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const env = Object.fromEntries(
    (await readFile(path.join(dir, 'env'), 'utf8'))
      .split('\n')
      .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
  if (!env.S3_ENDPOINT || !env.S3_AK || !env.S3_SK) return { problem: `${dir}/env lacks S3_ENDPOINT, S3_AK or S3_SK` };
  return { endpoint: env.S3_ENDPOINT, accessKeyId: env.S3_AK, secretAccessKey: env.S3_SK, origin: 'radosgw started for this run' };
}

/** A client configured as the server's createS3Client configures its own, with explicit credentials. */
export function s3Client(s3: S3Endpoint): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    // radosgw refuses aws-chunked bodies with trailing checksums; the server runs with
    // --s3-checksums when_required for the same reason.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
}

/** A fresh bucket filehaven-bench-<random>, emptied and removed when the section unwinds; or why not. */
export async function createBucket(client: S3Client): Promise<{ bucket: string } | { problem: string }> {
  const bucket = `filehaven-bench-${randomBytes(6).toString('hex')}`;
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }), { abortSignal: AbortSignal.timeout(30_000) });
  } catch (error) {
    return { problem: `could not create bucket ${bucket}: ${(error as Error).name}: ${(error as Error).message}` };
  }
  defer(`empty and remove bucket ${bucket}`, async () => {
    await emptyBucket(client, bucket);
    await client.send(new DeleteBucketCommand({ Bucket: bucket }));
  });
  return { bucket };
}

/** Deletes every object and aborts every multipart upload. Paged by hand: radosgw always sends a next marker. */
async function emptyBucket(client: S3Client, bucket: string): Promise<void> {
  for (let token: string | undefined, more = true; more; ) {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const object of page.Contents ?? []) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key! }));
    token = page.NextContinuationToken;
    more = page.IsTruncated === true && token !== undefined;
  }
  for (let keyMarker: string | undefined, idMarker: string | undefined, more = true; more; ) {
    const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, KeyMarker: keyMarker, UploadIdMarker: idMarker }));
    for (const u of page.Uploads ?? []) await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key!, UploadId: u.UploadId! }));
    keyMarker = page.NextKeyMarker;
    idMarker = page.NextUploadIdMarker;
    more = page.IsTruncated === true && keyMarker !== undefined;
  }
}

/**
 * The raw S3 reference: a lib-storage Upload of the same bytes with the server's part and
 * queue size (what an upload to S3 must do at least; it does not hash, the server does),
 * and a GetObject of that object (what a download must do at least).
 */
export interface S3Reference {
  /** Seconds to upload `size` bytes under the reference key. */
  upload(size: number): Promise<number>;
  /** Seconds to read the reference object back (counted, not hashed). */
  read(size: number): Promise<number>;
}

export async function s3Reference(client: S3Client, bucket: string, s3: { partSize: number; queueSize: number }): Promise<S3Reference> {
  const Key = `bench-reference-${randomBytes(6).toString('hex')}`;
  defer(`delete ${Key}`, () => client.send(new DeleteObjectCommand({ Bucket: bucket, Key })));
  const send = (Body: Readable | Buffer) =>
    new Upload({ client, params: { Bucket: bucket, Key, Body }, partSize: s3.partSize, queueSize: s3.queueSize, leavePartsOnError: false }).done();
  const read = async (size: number) => {
    const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key }));
    const sink = counter();
    await pipeline(response.Body as Readable, sink);
    if (sink.bytes !== size) throw new Error(`GetObject: got ${sink.bytes} of ${size} bytes`);
  };
  // Warm-up, untimed: a fresh radosgw pays one-time costs on its first multipart upload
  // and read (index and data pool objects, connections); no measurement should.
  await send(Buffer.alloc(2 * s3.partSize));
  await read(2 * s3.partSize);
  return {
    upload: (size) => timed(() => send(payload(size, CHUNK))),
    read: (size) => timed(() => read(size)),
  };
}
