/**
 * `npm run bench`: throughput and memory of uploads and downloads through a real
 * server process, each reported as a ratio against a baseline measured in the same run
 * on the same machine (the machines are shared and noisy, so absolute numbers mean little).
 *
 *   BENCH_SIZE   bytes to upload/download (default 2 GiB; e.g. BENCH_SIZE=256MiB for a quick run)
 *
 * Baselines: hashing and writing the same bytes to a local file (what an upload must do
 * at least), and reading the stored file back (what a download must do at least).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseBytes } from '../src/config/units.js';

const SIZE = parseBytes(process.env.BENCH_SIZE ?? '2GiB') ?? 2 * 1024 ** 3;
const CHUNK = randomBytes(1024 * 1024);
const MiB = 1024 * 1024;

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
  const read = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  let peak = read();
  const timer = setInterval(() => (peak = Math.max(peak, read())), 20);
  return { stop: () => (clearInterval(timer), Math.max(peak, read())), now: read };
}

async function timed(work: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['bin/filehaven.js', 'serve', '--port', '0', '--data', dataDir, '--log-level', 'warn', '--max-file-size', String(SIZE + MiB)], {
    stdio: ['ignore', 'pipe', 'inherit'],
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
    http.get(link, (response) => {
      let received = 0;
      response.on('data', (d: Buffer) => (received += d.length));
      response.on('end', () => (received === SIZE ? resolve() : reject(new Error(`got ${received} of ${SIZE} bytes`))));
      response.on('error', reject);
    });
  });
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'filehaven-bench-'));
  const dataDir = path.join(work, 'data');
  mkdirSync(dataDir);
  const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/filehaven.js', ...args, '--data', dataDir], { encoding: 'utf8' });
  const created = cli('accounts', 'create', '--login', 'bench', '--password', 'bench-password', '--json');
  if (created.status !== 0) throw new Error(created.stderr);

  console.log(`payload ${(SIZE / MiB).toFixed(0)} MiB`);

  // Baseline 1: hash + write to a local file (the least an upload must do).
  const baselineFile = path.join(work, 'baseline.bin');
  const baseWrite = await timed(async () => {
    const hash = createHash('sha256');
    const hasher = new Transform({ transform: (chunk: Buffer, _e, done) => (hash.update(chunk), done(null, chunk)) });
    await pipeline(payload(), hasher, createWriteStream(baselineFile, { flush: true }));
  });
  // Baseline 2: read the file back (the least a download must do).
  const baseRead = await timed(() => pipeline(createReadStream(baselineFile), new Writable({ write: (_c, _e, done) => done() })));
  await rm(baselineFile);

  const { child, url } = await startServer(dataDir);
  try {
    const keyBody = await (await fetch(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'bench', password: 'bench-password' }) })).text();
    const key = /<content type="text">([^<]+)</.exec(keyBody)![1]!;
    const idle = rssSampler(child.pid!);
    const idleRss = idle.now();

    let body = '';
    const uploadSeconds = await timed(async () => void (body = await upload(url, key)));
    const uploadPeak = idle.stop();
    const link = /title="download_link" href="([^"]+)"/.exec(body)![1]!;

    const dl = rssSampler(child.pid!);
    const downloadSeconds = await timed(async () => await download(`${link}?download=1`));
    const downloadPeak = dl.stop();

    const mbps = (seconds: number) => SIZE / MiB / seconds;
    const rows = [
      ['baseline: hash+write local file', mbps(baseWrite), 1, '-'],
      ['upload through filehaven', mbps(uploadSeconds), baseWrite / uploadSeconds, `${((uploadPeak - idleRss) / MiB).toFixed(1)} MiB over idle`],
      ['baseline: read local file', mbps(baseRead), 1, '-'],
      ['download through filehaven', mbps(downloadSeconds), baseRead / downloadSeconds, `${((downloadPeak - idleRss) / MiB).toFixed(1)} MiB over idle`],
    ] as const;
    console.log(`server idle RSS ${(idleRss / MiB).toFixed(1)} MiB`);
    console.log('what'.padEnd(36), 'MiB/s'.padStart(8), 'ratio'.padStart(7), '  peak RSS');
    for (const [what, speed, ratio, memory] of rows) {
      console.log(what.padEnd(36), speed.toFixed(0).padStart(8), ratio.toFixed(2).padStart(7), ' ', memory);
    }
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      `bench/results/${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
      JSON.stringify({ size: SIZE, idleRss, uploadPeak, downloadPeak, baseWrite, baseRead, uploadSeconds, downloadSeconds }, null, 2),
    );
  } finally {
    child.kill('SIGTERM');
    await rm(work, { recursive: true, force: true });
  }
}

await main();
