/**
 * `npm run bench`: where filehaven stands on this machine, in one run, on each backend
 * (SQLite + local data folder; PostgreSQL + S3). Every figure is measured against a
 * reference in the same run (the machines are shared and noisy, so absolute numbers mean
 * little): nginx for bytes, a bare node:http server for requests, the raw S3 client for
 * the object store. The server runs compiled (dist/, as `npm start` runs it; built first).
 * Prints the figures with the issue's targets and writes BENCHMARKS.md (and the raw
 * figures to bench/results/<date>.json).
 *
 *   BENCH_BACKENDS         comma-separated: local, postgres-s3 (default both)
 *   BENCH_SECTIONS         comma-separated: bytes, memory, requests, copies, rows, small, cluster, resumable, parallel, connections (default all)
 *   BENCH_SIZE             the upload/download of "bytes" (default 256MiB)
 *   BENCH_CONCURRENT_SIZE  each of the 4+4 transfers of "memory" (default 512MiB)
 *   BENCH_COPY_SIZE        the file "copies" copies (default 1GiB)
 *   BENCH_ROWS             the large table of "rows" (default 1000000)
 *   BENCH_CLUSTER_UPLOAD_SIZE  each of the 4 parallel uploads of "cluster" (default 64MiB)
 *   BENCH_KILL_SIZE        the upload of "resumable" whose server is killed three times (default 2GiB)
 *   BENCH_PARALLEL_SIZE    the upload of "parallel" sent through the capped proxy (default 64MiB; uncapped it is BENCH_SIZE)
 *   BENCH_PARALLEL_CAP     the bytes/s the proxy of "parallel" lets through each connection (default 8MB)
 *   BENCH_CONNECTIONS_DOWNLOADS, BENCH_CONNECTIONS_IDLE   "connections": downloads at once and idle keep-alive
 *                          connections beside them (default 1000 and 10000)
 *   BENCH_CONNECTIONS_PACE  the bytes/s each of those downloads is read at (default 1MB)
 *   BENCH_CONNECTIONS_FILE_SIZE  the file they read (default 4MiB)
 *   BENCH_REDIS_URL        the Redis of "cluster"'s servers (default redis://127.0.0.1:6379, left out when it does not answer)
 *   BENCH_ROUNDS           A/B rounds (default 5)
 *   BENCH_LOAD_SECONDS     each wrk round of "requests" (default 5)
 *   BENCH_DATABASE_URL     PostgreSQL for postgres-s3 (default postgres://postgres@127.0.0.1:5432/test);
 *                          a fresh schema bench_<random> is made there and dropped at the end
 *   BENCH_S3_ENDPOINT      S3 for postgres-s3, with BENCH_S3_ACCESS_KEY and BENCH_S3_SECRET_KEY;
 *                          unset: a one-node radosgw is started (scripts/ceph-rgw.sh) for the run.
 *                          A fresh bucket is made either way, and emptied and removed at the end.
 *   BENCH_OUTPUT           a folder for the figures (results/<date>.json) and BENCHMARKS.md instead of
 *                          bench/results/ and the checkout's BENCHMARKS.md
 *   BENCH_ENTRY            a compiled CLI to run (its src/cli/index.js) instead of building dist/ first
 *   BENCH_S3_PART_SIZE, BENCH_S3_QUEUE_SIZE   the server's --s3-part-size / --s3-queue-size,
 *                          used by the raw S3 reference too (default the server's, 8 MiB and 4)
 *
 * nginx (with the WebDAV module) and wrk are not installed by the bench: without them the
 * figures that need them are left out and the run says what to install. postgres-s3 is
 * skipped, with the reason, when PostgreSQL or S3 cannot be had. Everything the run made
 * is removed or stopped at the end, also when it fails or is interrupted (Ctrl-C).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULTS } from '../src/config/config.js';
import { parseBytes } from '../src/config/units.js';
import { defer, section, unwind, unwindOnExit } from './lib/cleanup.js';
import type { BenchContext } from './lib/context.js';
import { figure, type SectionResult } from './lib/figures.js';
import { apiKey, type BackendSettings, createAccount, filehavenCli, startFilehaven } from './lib/filehaven-server.js';
import { describeMachine } from './lib/machine.js';
import { MiB, rssOf } from './lib/measure.js';
import { type NginxReference, nginxMissing, startNginx } from './lib/nginx.js';
import { stackFloorRss } from './lib/platform-floor.js';
import { type BackendReport, printBackend, writeReport } from './lib/report.js';
import type { MetadataLocation } from './lib/seed.js';
import { createBucket, createSchema, DATABASE_URL, type S3Reference, s3Client, s3Endpoint, s3Reference } from './lib/storage.js';
import { cluster } from './sections/cluster.js';
import { connections } from './sections/connections.js';
import { copies } from './sections/copies.js';
import { memory } from './sections/memory.js';
import { parallelUploads } from './sections/parallel.js';
import { requestRates } from './sections/request-rate.js';
import { resumable } from './sections/resumable.js';
import { rows } from './sections/rows.js';
import { smallUploads } from './sections/small-uploads.js';
import { transfers } from './sections/transfers.js';

// As the server does (src/composition.ts): the SDK's "Node 22 after January 2027" notice.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function sizeSetting(name: string, fallback: string): number {
  const raw = process.env[name] ?? fallback;
  const bytes = parseBytes(raw);
  if (bytes === null || bytes < 1) throw new Error(`${name}: expected a size such as 256MiB, got "${raw}"`);
  return bytes;
}

function countSetting(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}: expected a whole number of at least ${min}, got "${raw}"`);
  return value;
}

function listSetting<T extends string>(name: string, all: readonly T[]): T[] {
  const raw = process.env[name];
  if (raw === undefined) return [...all];
  const picked = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const unknown = picked.filter((item) => !(all as readonly string[]).includes(item));
  if (unknown.length > 0 || picked.length === 0) throw new Error(`${name}: expected a comma-separated list of ${all.join(', ')}; got "${raw}"`);
  return all.filter((item) => picked.includes(item));
}

const BACKENDS = ['local', 'postgres-s3'] as const;
type BackendName = (typeof BACKENDS)[number];
// rows before small: its small table is then the thousand rows it seeds and little more.
const SECTIONS = ['bytes', 'memory', 'requests', 'copies', 'rows', 'small', 'cluster', 'resumable', 'parallel', 'connections'] as const;
type SectionName = (typeof SECTIONS)[number];

const settings = {
  backends: listSetting('BENCH_BACKENDS', BACKENDS),
  sections: listSetting('BENCH_SECTIONS', SECTIONS),
  size: sizeSetting('BENCH_SIZE', '256MiB'),
  concurrentSize: sizeSetting('BENCH_CONCURRENT_SIZE', '512MiB'),
  copySize: sizeSetting('BENCH_COPY_SIZE', '1GiB'),
  clusterUploadSize: sizeSetting('BENCH_CLUSTER_UPLOAD_SIZE', '64MiB'),
  killSize: sizeSetting('BENCH_KILL_SIZE', '2GiB'),
  parallelSize: sizeSetting('BENCH_PARALLEL_SIZE', '64MiB'),
  parallelCap: sizeSetting('BENCH_PARALLEL_CAP', '8MB'),
  rows: countSetting('BENCH_ROWS', 1_000_000, 2000),
  rounds: countSetting('BENCH_ROUNDS', 5, 1),
  loadSeconds: countSetting('BENCH_LOAD_SECONDS', 5, 1),
  connections: {
    downloads: countSetting('BENCH_CONNECTIONS_DOWNLOADS', 1000, 1),
    idle: countSetting('BENCH_CONNECTIONS_IDLE', 10_000, 0),
    pace: sizeSetting('BENCH_CONNECTIONS_PACE', '1MB'),
    fileSize: sizeSetting('BENCH_CONNECTIONS_FILE_SIZE', '4MiB'),
  },
  partSize: process.env.BENCH_S3_PART_SIZE ? sizeSetting('BENCH_S3_PART_SIZE', '') : DEFAULTS.s3PartSize,
  queueSize: countSetting('BENCH_S3_QUEUE_SIZE', DEFAULTS.s3QueueSize, 1),
};
if (settings.partSize < 5 * MiB) throw new Error('BENCH_S3_PART_SIZE must be at least 5MiB (S3 refuses smaller parts)');

/** Where a backend keeps its data, made fresh for the run; or why it cannot be had. */
interface Storage {
  settings: BackendSettings;
  metadata: (dataDir: string) => MetadataLocation;
  s3?: S3Reference;
  setup: string;
}

async function postgresS3Storage(): Promise<Storage | { skipped: string }> {
  const schema = await createSchema();
  if ('problem' in schema) return { skipped: schema.problem };
  const s3 = await s3Endpoint();
  if ('problem' in s3) return { skipped: s3.problem };
  const client = s3Client(s3);
  defer('close the S3 client', async () => client.destroy());
  const bucket = await createBucket(client);
  if ('problem' in bucket) return { skipped: `S3 at ${s3.endpoint} (${s3.origin}): ${bucket.problem}` };
  return {
    settings: {
      flags: [
        '--database-url',
        DATABASE_URL,
        '--database-schema',
        schema.schema,
        '--s3-bucket',
        bucket.bucket,
        '--s3-endpoint',
        s3.endpoint,
        '--s3-force-path-style',
        'true',
        '--s3-checksums',
        'when_required',
        '--s3-part-size',
        String(settings.partSize),
        '--s3-queue-size',
        String(settings.queueSize),
      ],
      env: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_REGION: 'us-east-1' },
    },
    metadata: () => ({ kind: 'postgres', url: DATABASE_URL, schema: schema.schema }),
    s3: await s3Reference(client, bucket.bucket, settings),
    setup: `PostgreSQL ${DATABASE_URL.replace(/:[^:@/]*@/, ':***@')}, S3 ${s3.endpoint} (${s3.origin}), parts ${settings.partSize / MiB} MiB × ${settings.queueSize}`,
  };
}

const MB = 1e6;

async function benchBackend(backend: BackendName, nginx: NginxReference | { missing: string }): Promise<BackendReport> {
  return section(async () => {
    const started = Date.now();
    const storage: Storage | { skipped: string } =
      backend === 'local'
        ? { settings: { flags: [], env: {} }, metadata: (dataDir) => ({ kind: 'sqlite', dataDir }), setup: 'SQLite and blobs in the data folder' }
        : await postgresS3Storage();
    if ('skipped' in storage) return { backend, skipped: storage.skipped };
    const work = await mkdtemp(path.join(tmpdir(), 'filehaven-bench-'));
    defer(`remove ${work}`, () => rm(work, { recursive: true, force: true }));
    const dataDir = path.join(work, 'data');
    mkdirSync(dataDir);
    // Operator commands run only on a site `init` (or `serve`) set up.
    filehavenCli(dataDir, storage.settings, 'init');
    createAccount(dataDir, storage.settings, 'bench');
    const server = await startFilehaven(dataDir, storage.settings);
    // Idle: started, settled, not yet asked anything.
    await sleep(2000);
    const idleRss = rssOf(server.pid);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    defer('close the keep-alive agent', async () => agent.destroy());
    const context: BenchContext = {
      backend,
      dataDir,
      work,
      settings: storage.settings,
      metadata: storage.metadata(dataDir),
      server,
      login: 'bench',
      key: await apiKey(server.url, 'bench'),
      nginx,
      ...(storage.s3 ? { s3: storage.s3 } : {}),
      agent,
      rounds: settings.rounds,
    };
    const runners: Record<SectionName, () => Promise<SectionResult>> = {
      bytes: () => transfers(context, settings.size),
      memory: async () => {
        const result = await memory(context, settings.concurrentSize);
        // The stack alone (Fastify, Kysely, better-sqlite3; none of filehaven) is the floor
        // the idle figure stands on: measured here, in the same run.
        const floor = await stackFloorRss(work);
        result.figures.unshift(
          figure('idle RSS, 2 s after the start', `${(idleRss / MB).toFixed(0)} MB`, {
            reference: `${(floor / MB).toFixed(0)} MB Fastify + Kysely + better-sqlite3 alone`,
            target: '≤ 80 MB',
            met: idleRss <= 80 * MB,
          }),
        );
        return result;
      },
      requests: () => requestRates(context, settings.loadSeconds),
      copies: () => copies(context, settings.copySize),
      small: () => smallUploads(context),
      rows: () => rows(context, settings.rows),
      cluster: () => cluster(context, settings.loadSeconds, settings.clusterUploadSize),
      resumable: () => resumable(context, settings.size, settings.killSize),
      parallel: () => parallelUploads(context, { cappedSize: settings.parallelSize, size: settings.size, cap: settings.parallelCap }),
      connections: () => connections(context, { ...settings.connections, loadSeconds: settings.loadSeconds }),
    };
    const results: SectionResult[] = [];
    for (const name of settings.sections) {
      process.stdout.write(`${backend}: ${name}... `);
      const sectionStarted = Date.now();
      try {
        results.push(await runners[name]());
        console.log(`${((Date.now() - sectionStarted) / 1000).toFixed(0)} s`);
      } catch (error) {
        console.log('FAILED');
        results.push({ title: name, figures: [], notes: [`FAILED: ${(error as Error).stack ?? String(error)}`] });
      }
    }
    return { backend, setup: storage.setup, seconds: (Date.now() - started) / 1000, sections: results };
  });
}

async function main(): Promise<number> {
  unwindOnExit();
  const started = new Date();
  if (process.env.BENCH_ENTRY === undefined) {
    const build = spawnSync(process.execPath, ['scripts/build.js'], { stdio: 'inherit' });
    if (build.status !== 0) throw new Error('the build failed (node scripts/build.js)');
  }
  const machine = describeMachine(tmpdir());
  console.log(machine.join('\n'));
  const reports: BackendReport[] = [];
  try {
    const missing = nginxMissing();
    let nginx: NginxReference | { missing: string } = { missing: missing ?? '' };
    if (!missing) {
      const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-bench-nginx-'));
      defer(`remove ${dir}`, () => rm(dir, { recursive: true, force: true }));
      nginx = await startNginx(dir);
    } else {
      console.log(missing);
    }
    for (const backend of settings.backends) {
      const report = await benchBackend(backend, nginx);
      reports.push(report);
      printBackend(report);
    }
  } finally {
    await unwind(0);
  }
  const seconds = (Date.now() - started.getTime()) / 1000;
  console.log(`\nrun took ${seconds.toFixed(0)} s`);
  // BENCH_OUTPUT: a folder for both files instead of the checkout (the smoke test's).
  const output = process.env.BENCH_OUTPUT;
  const resultsDir = output ? path.join(output, 'results') : 'bench/results';
  mkdirSync(resultsDir, { recursive: true });
  const json = path.join(resultsDir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(json, JSON.stringify({ startedAt: started.toISOString(), seconds, machine, settings, reports }, null, 2));
  console.log(`figures in ${json}`);
  const complete = settings.sections.length === SECTIONS.length && reports.some((report) => 'sections' in report);
  if (complete) {
    const report = output ? path.join(output, 'BENCHMARKS.md') : 'BENCHMARKS.md';
    writeReport(report, { started, seconds, machine, settings: describeSettings(), reports });
    console.log(`${report} written`);
  } else {
    console.log('a partial run (BENCH_SECTIONS): BENCHMARKS.md left as it was');
  }
  const failed = reports.some((report) => 'sections' in report && report.sections.some((result) => result.notes.some((note) => note.startsWith('FAILED'))));
  return failed ? 1 : 0;
}

function describeSettings(): string {
  const size = (bytes: number) => (bytes >= 1024 * MiB ? `${bytes / (1024 * MiB)} GiB` : `${bytes / MiB} MiB`);
  return `transfers of ${size(settings.size)}, 4+4 × ${size(settings.concurrentSize)}, copy of ${size(settings.copySize)}, ${settings.rows.toLocaleString('en')} rows, ${settings.rounds} A/B rounds, wrk rounds of ${settings.loadSeconds} s`;
}

process.exitCode = await main();
