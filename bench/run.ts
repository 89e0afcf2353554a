/**
 * `npm run bench`: throughput and memory of uploads and downloads through a real
 * server process (the compiled dist/, as `npm start` runs it: built first), each reported as a ratio against a baseline measured in the same run
 * on the same machine (the machines are shared and noisy, so absolute numbers mean little).
 *
 *   BENCH_SIZE           bytes to upload/download (default 2 GiB; e.g. BENCH_SIZE=256MiB for a quick run)
 *   BENCH_BACKENDS       comma-separated: local, postgres-s3 (default both)
 *   BENCH_DATABASE_URL   PostgreSQL for postgres-s3 (default postgres://postgres@127.0.0.1:5432/test);
 *                        a fresh schema bench_<random> is created there and dropped at the end
 *   BENCH_S3_ENDPOINT    S3 for postgres-s3, with BENCH_S3_ACCESS_KEY and BENCH_S3_SECRET_KEY;
 *                        unset: a one-node radosgw is started (scripts/ceph-rgw.sh) in a temporary
 *                        folder for the run and stopped at the end. A fresh bucket is created
 *                        either way, and emptied and removed at the end.
 *   BENCH_S3_PART_SIZE, BENCH_S3_QUEUE_SIZE   the server's --s3-part-size / --s3-queue-size
 *                        (default the server's defaults, 8 MiB and 4), used by the S3 baseline too
 *
 * Baselines (each backend measures its own, right before the server is measured):
 * - local disk: hashing and writing the same bytes to a local file (what an upload must do
 *   at least), and reading the stored file back (what a download must do at least);
 * - S3 (postgres-s3): a raw lib-storage Upload of the same bytes to the same endpoint with the
 *   server's part size and queue size (what an upload to S3 must do at least; it does not
 *   hash, the server does), and a raw GetObject of that object (what a download must do at least).
 *
 * postgres-s3 is skipped, with the reason printed, when PostgreSQL or S3 cannot be had. Every
 * schema, bucket, server and radosgw the run made is removed or stopped at the end, also when
 * the run fails or is interrupted (Ctrl-C).
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Transform, Writable } from 'node:stream';
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
import { DEFAULTS } from '../src/config/config.js';
import { parseBytes } from '../src/config/units.js';

const MiB = 1024 * 1024;
const SIZE = parseBytes(process.env.BENCH_SIZE ?? '2GiB') ?? 2 * 1024 ** 3;
const CHUNK = randomBytes(1024 * 1024);
const BACKEND_NAMES = ['local', 'postgres-s3'] as const;
type BackendName = (typeof BACKEND_NAMES)[number];
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PART_SIZE = process.env.BENCH_S3_PART_SIZE ? parseBytes(process.env.BENCH_S3_PART_SIZE) : DEFAULTS.s3PartSize;
const QUEUE_SIZE = process.env.BENCH_S3_QUEUE_SIZE ? Number(process.env.BENCH_S3_QUEUE_SIZE) : DEFAULTS.s3QueueSize;
const CEPH_RGW = path.resolve('scripts/ceph-rgw.sh');
/** The target: "a 2 GiB upload to S3 keeps the server under 200 MB RSS" (200 MB = 200 x 10^6 bytes, the stricter reading). */
const RSS_TARGET = 200e6;
const run = promisify(execFile);
// As the server does (src/composition.ts): the SDK's "Node 22 after January 2027" notice.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// ---------------------------------------------------------------------------------------
// Clean-up: everything the run makes registers how to undo it; sections unwind their own,
// a signal unwinds everything. Unwinding is serialised, so a Ctrl-C during a section's own
// clean-up never runs a step twice or out of order.

const deferred: { what: string; undo: () => Promise<unknown> }[] = [];
let unwinding: Promise<void> = Promise.resolve();

function defer(what: string, undo: () => Promise<unknown>): void {
  deferred.push({ what, undo });
}

function unwind(to = 0): Promise<void> {
  unwinding = unwinding.then(async () => {
    while (deferred.length > to) {
      const { what, undo } = deferred.pop()!;
      try {
        await undo();
      } catch (error) {
        console.error(`clean-up failed (${what}): ${(error as Error).message}`);
      }
    }
  });
  return unwinding;
}

async function section<T>(work: () => Promise<T>): Promise<T> {
  const mark = deferred.length;
  try {
    return await work();
  } finally {
    await unwind(mark);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up (servers, schema, bucket, radosgw)...`);
    void unwind(0).finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------
// Measuring

/** SIZE bytes from one reused 1 MiB buffer: the generator itself holds no file in memory. */
function payload(): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= SIZE) return this.push(null);
      const n = Math.min(CHUNK.length, SIZE - sent);
      sent += n;
      this.push(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n));
    },
  });
}

/** Samples a process's resident memory (VmRSS) until stopped; returns the peak in bytes. */
function rssSampler(pid: number): { stop(): number; now(): number } {
  const read = () => {
    try {
      return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      return 0; // the process is gone; the request in flight reports why
    }
  };
  let peak = read();
  const timer = setInterval(() => (peak = Math.max(peak, read())), 20);
  return { stop: () => (clearInterval(timer), Math.max(peak, read())), now: read };
}

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const sink = () => new Writable({ write: (_c, _e, done) => done() });

/** Local-disk baselines: hash+write SIZE bytes to a file, then read it back. */
async function localBaselines(work: string): Promise<{ write: number; read: number }> {
  const file = path.join(work, 'baseline.bin');
  const write = await timed(async () => {
    const hash = createHash('sha256');
    const hasher = new Transform({ transform: (chunk: Buffer, _e, done) => (hash.update(chunk), done(null, chunk)) });
    await pipeline(payload(), hasher, createWriteStream(file, { flush: true }));
  });
  const read = await timed(() => pipeline(createReadStream(file), sink()));
  await rm(file);
  return { write, read };
}

// ---------------------------------------------------------------------------------------
// The server and its HTTP API

/** The server's settings beyond the data folder (flags), and its extra environment. */
interface ServerSettings {
  flags: string[];
  env: Record<string, string>;
}

/** The environment without FILEHAVEN_* settings, so the caller's shell cannot change what a backend is. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FILEHAVEN_')));
  return { ...env, ...extra };
}

function cli(dataDir: string, settings: ServerSettings, ...args: string[]): string {
  const result = spawnSync(process.execPath, ['bin/filehaven.js', ...args, '--data', dataDir, ...settings.flags], { encoding: 'utf8', env: cleanEnv(settings.env) });
  if (result.status !== 0) throw new Error(`filehaven ${args.join(' ')}: ${result.stderr || result.stdout}`);
  return result.stdout;
}

async function startServer(dataDir: string, settings: ServerSettings): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['dist/cli/index.js', 'serve', '--port', '0', '--data', dataDir, '--log-level', 'warn', '--max-file-size', String(SIZE + MiB), ...settings.flags],
    { stdio: ['ignore', 'pipe', 'inherit'], env: cleanEnv(settings.env) },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  defer('stop the server', async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (data: Buffer) => {
      out += data.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ child, url: match[1]! });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

function upload(url: string, key: string): Promise<string> {
  const boundary = `bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/files`, {
      method: 'POST',
      headers: { Authorization: key, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': head.length + SIZE + tail.length },
    });
    request.on('response', (response) => {
      let body = '';
      response.on('data', (d: Buffer) => (body += d));
      response.on('end', () => (response.statusCode === 201 ? resolve(body) : reject(new Error(`${response.statusCode} ${body}`))));
    });
    request.on('error', reject);
    request.write(head);
    const source = payload();
    source.pipe(request, { end: false });
    source.on('end', () => request.end(tail));
  });
}

/** Downloads and counts the bytes (no hashing: the baseline read does not hash either). */
function download(link: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get(link, (response) => {
        let received = 0;
        response.on('data', (d: Buffer) => (received += d.length));
        response.on('end', () => (received === SIZE ? resolve() : reject(new Error(`${response.statusCode}: got ${received} of ${SIZE} bytes`))));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

interface ServerFigures {
  idleRss: number;
  uploadSeconds: number;
  uploadPeak: number;
  downloadSeconds: number;
  downloadPeak: number;
}

/** Starts a server on these settings, uploads SIZE bytes through it and downloads them back. */
async function measureServer(work: string, settings: ServerSettings): Promise<ServerFigures> {
  return section(async () => {
    const dataDir = path.join(work, 'data');
    mkdirSync(dataDir);
    cli(dataDir, settings, 'accounts', 'create', '--login', 'bench', '--password', 'bench-password', '--json');
    const { child, url } = await startServer(dataDir, settings);
    const keyBody = await (await fetch(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'bench', password: 'bench-password' }) })).text();
    const key = /<content type="text">([^<]+)</.exec(keyBody)?.[1];
    if (!key) throw new Error(`no API key: ${keyBody}`);
    const idle = rssSampler(child.pid!);
    const idleRss = idle.now();

    let body = '';
    const uploadSeconds = await timed(async () => void (body = await upload(url, key)));
    const uploadPeak = idle.stop();
    const link = /title="download_link" href="([^"]+)"/.exec(body)?.[1];
    if (!link) throw new Error(`no download link: ${body}`);

    const dl = rssSampler(child.pid!);
    const downloadSeconds = await timed(() => download(`${link}?download=1`));
    const downloadPeak = dl.stop();
    return { idleRss, uploadSeconds, uploadPeak, downloadSeconds, downloadPeak };
  });
}

// ---------------------------------------------------------------------------------------
// PostgreSQL and S3

/** A fresh schema bench_<random> (dropped when the section unwinds), or why there is none. */
async function createSchema(): Promise<{ schema: string } | { problem: string }> {
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

interface S3Endpoint {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** 'BENCH_S3_ENDPOINT' or 'radosgw started for this run' */
  origin: string;
}

/** BENCH_S3_* when set; else a radosgw started now (stopped when the section unwinds); or why neither. */
async function s3Endpoint(): Promise<S3Endpoint | { problem: string }> {
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
function s3Client(s3: S3Endpoint): S3Client {
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
async function createBucket(client: S3Client): Promise<{ bucket: string } | { problem: string }> {
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

/** S3 baselines: a raw lib-storage Upload of SIZE bytes with the server's part and queue size, then a raw GetObject of it. */
async function s3Baselines(client: S3Client, bucket: string): Promise<{ upload: number; read: number }> {
  const Key = `bench-baseline-${randomBytes(6).toString('hex')}`;
  try {
    // Warm-up, untimed: a fresh radosgw pays one-time costs on its first multipart upload
    // and read (index and data pool objects, connections); neither measurement should.
    const warmKey = `${Key}-warm-up`;
    await new Upload({ client, params: { Bucket: bucket, Key: warmKey, Body: Buffer.alloc(2 * PART_SIZE!) }, partSize: PART_SIZE!, queueSize: QUEUE_SIZE, leavePartsOnError: false }).done();
    const warm = await client.send(new GetObjectCommand({ Bucket: bucket, Key: warmKey }));
    await pipeline(warm.Body as Readable, sink());
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: warmKey }));

    const uploadSeconds = await timed(async () => {
      await new Upload({ client, params: { Bucket: bucket, Key, Body: payload() }, partSize: PART_SIZE!, queueSize: QUEUE_SIZE, leavePartsOnError: false }).done();
    });
    const readSeconds = await timed(async () => {
      const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key }));
      let received = 0;
      const counter = new Writable({ write: (chunk: Buffer, _e, done) => ((received += chunk.length), done()) });
      await pipeline(response.Body as Readable, counter);
      if (received !== SIZE) throw new Error(`GetObject: got ${received} of ${SIZE} bytes`);
    });
    return { upload: uploadSeconds, read: readSeconds };
  } finally {
    // Gone before the server runs: the bucket it sees is as fresh as the schema.
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key })).catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------
// The backends

interface BackendResult {
  backend: BackendName;
  /** what it ran on, for the report */
  setup: string;
  seconds: number;
  baselines: { localWrite: number; localRead: number; s3Upload?: number; s3Read?: number };
  server: ServerFigures;
}
type Outcome = BackendResult | { backend: BackendName; skipped: string };

async function benchLocal(): Promise<Outcome> {
  return section(async () => {
    const started = Date.now();
    const work = await mkdtemp(path.join(tmpdir(), 'filehaven-bench-'));
    defer(`remove ${work}`, () => rm(work, { recursive: true, force: true }));
    const local = await localBaselines(work);
    const server = await measureServer(work, { flags: [], env: {} });
    return { backend: 'local', setup: 'SQLite + blobs in the data folder', seconds: (Date.now() - started) / 1000, baselines: { localWrite: local.write, localRead: local.read }, server };
  });
}

async function benchPostgresS3(): Promise<Outcome> {
  return section(async () => {
    const started = Date.now();
    const skip = (reason: string): Outcome => ({ backend: 'postgres-s3', skipped: reason });
    if (PART_SIZE === null || PART_SIZE < 5 * MiB) return skip(`BENCH_S3_PART_SIZE must be a size of at least 5MiB: ${process.env.BENCH_S3_PART_SIZE}`);
    if (!Number.isInteger(QUEUE_SIZE) || QUEUE_SIZE < 1 || QUEUE_SIZE > 16) return skip(`BENCH_S3_QUEUE_SIZE must be 1-16: ${process.env.BENCH_S3_QUEUE_SIZE}`);
    const schema = await createSchema();
    if ('problem' in schema) return skip(schema.problem);
    const s3 = await s3Endpoint();
    if ('problem' in s3) return skip(s3.problem);
    const client = s3Client(s3);
    defer('close the S3 client', async () => client.destroy());
    const bucket = await createBucket(client);
    if ('problem' in bucket) return skip(`S3 at ${s3.endpoint} (${s3.origin}): ${bucket.problem}`);
    const setupSeconds = (Date.now() - started) / 1000;

    const work = await mkdtemp(path.join(tmpdir(), 'filehaven-bench-'));
    defer(`remove ${work}`, () => rm(work, { recursive: true, force: true }));
    const local = await localBaselines(work);
    const remote = await s3Baselines(client, bucket.bucket);
    const server = await measureServer(work, {
      flags: [
        '--database-url', DATABASE_URL,
        '--database-schema', schema.schema,
        '--s3-bucket', bucket.bucket,
        '--s3-endpoint', s3.endpoint,
        '--s3-force-path-style', 'true',
        '--s3-checksums', 'when_required',
        '--s3-part-size', String(PART_SIZE),
        '--s3-queue-size', String(QUEUE_SIZE),
      ],
      env: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_REGION: 'us-east-1' },
    });
    return {
      backend: 'postgres-s3',
      setup: `PostgreSQL ${DATABASE_URL.replace(/:[^:@/]*@/, ':***@')} schema ${schema.schema}; S3 ${s3.endpoint} (${s3.origin}) bucket ${bucket.bucket}, parts ${PART_SIZE! / MiB} MiB x queue ${QUEUE_SIZE}; setup ${setupSeconds.toFixed(1)} s`,
      seconds: (Date.now() - started) / 1000,
      baselines: { localWrite: local.write, localRead: local.read, s3Upload: remote.upload, s3Read: remote.read },
      server,
    };
  });
}

// ---------------------------------------------------------------------------------------
// Report

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

function report(result: BackendResult): void {
  const { baselines: b, server: s } = result;
  const speed = (seconds: number) => (SIZE / MiB / seconds).toFixed(0);
  const ratio = (baseline: number | undefined, seconds: number) => (baseline === undefined ? '-' : (baseline / seconds).toFixed(2));
  const rows: [string, string, string, string, string][] = [
    ['baseline: hash+write local file', speed(b.localWrite), '1.00', '-', ''],
    ['baseline: read local file', speed(b.localRead), '1.00', '-', ''],
  ];
  if (b.s3Upload !== undefined && b.s3Read !== undefined) {
    rows.push([`baseline: S3 Upload (${PART_SIZE! / MiB} MiB x ${QUEUE_SIZE})`, speed(b.s3Upload), '-', '1.00', '']);
    rows.push(['baseline: S3 GetObject', speed(b.s3Read), '-', '1.00', '']);
  }
  rows.push(['upload through filehaven', speed(s.uploadSeconds), ratio(b.localWrite, s.uploadSeconds), ratio(b.s3Upload, s.uploadSeconds), `${mib(s.uploadPeak - s.idleRss)} over idle (${mib(s.uploadPeak)})`]);
  rows.push(['download through filehaven', speed(s.downloadSeconds), ratio(b.localRead, s.downloadSeconds), ratio(b.s3Read, s.downloadSeconds), `${mib(s.downloadPeak - s.idleRss)} over idle (${mib(s.downloadPeak)})`]);

  console.log(`\n== ${result.backend}: ${result.setup}`);
  console.log(`server idle RSS ${mib(s.idleRss)}; section took ${result.seconds.toFixed(0)} s`);
  console.log('what'.padEnd(36), 'MiB/s'.padStart(7), 'vs local'.padStart(9), 'vs S3'.padStart(6), '  server peak RSS');
  for (const [what, mibps, vsLocal, vsS3, memory] of rows) {
    console.log(what.padEnd(36), mibps.padStart(7), vsLocal.padStart(9), vsS3.padStart(6), ' ', memory);
  }
  if (result.backend === 'postgres-s3') {
    const verdict = s.uploadPeak < RSS_TARGET ? 'PASS' : 'FAIL';
    const caveat = SIZE === 2 * 1024 ** 3 ? '' : ` (payload ${(SIZE / MiB).toFixed(0)} MiB, not 2 GiB: indicative only)`;
    console.log(
      `target "a 2 GiB upload to S3 keeps the server under 200 MB RSS": peak ${(s.uploadPeak / 1e6).toFixed(1)} MB (${mib(s.uploadPeak)}) during the upload: ${verdict}${caveat}`,
    );
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const requested = (process.env.BENCH_BACKENDS ?? BACKEND_NAMES.join(',')).split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = requested.filter((name) => !(BACKEND_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0 || requested.length === 0) throw new Error(`BENCH_BACKENDS: expected a comma-separated list of ${BACKEND_NAMES.join(', ')}; got ${process.env.BENCH_BACKENDS}`);
  const backends = BACKEND_NAMES.filter((name) => requested.includes(name));

  // The server runs as production runs it: compiled (npm start), not through tsx.
  const build = spawnSync(process.execPath, ['scripts/build.js'], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  console.log(`payload ${(SIZE / MiB).toFixed(0)} MiB; backends ${backends.join(', ')}`);
  const outcomes: Outcome[] = [];
  try {
    for (const backend of backends) {
      const outcome = backend === 'local' ? await benchLocal() : await benchPostgresS3();
      outcomes.push(outcome);
      if ('skipped' in outcome) console.log(`\n== ${backend}: SKIPPED: ${outcome.skipped}`);
      else report(outcome);
    }
  } finally {
    await unwind(0);
  }
  const totalSeconds = (Date.now() - started) / 1000;
  console.log(`\nrun took ${totalSeconds.toFixed(0)} s`);

  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/${new Date(started).toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(
    file,
    JSON.stringify(
      {
        size: SIZE,
        startedAt: new Date(started).toISOString(),
        totalSeconds,
        s3: { partSize: PART_SIZE, queueSize: QUEUE_SIZE },
        rssTarget: RSS_TARGET,
        backends: Object.fromEntries(outcomes.map(({ backend, ...rest }) => [backend, rest])),
      },
      null,
      2,
    ),
  );
  console.log(`results in ${file}`);
}

await main();
