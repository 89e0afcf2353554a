import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// `npm run bench` runs end to end, at sizes too small to mean anything: the bench is only
// run by hand, so nothing else would notice a step of it breaking (it once stopped at its
// first step, an account created on a data folder no server had set up, for a whole
// release). Figures are the bench's business, never this test's: it asserts that every
// section ran and that the kill test ended with the right bytes, not how fast anything was.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const TINY = {
  BENCH_BACKENDS: 'local',
  BENCH_SECTIONS: 'bytes,memory,requests,copies,rows,small,resumable,cluster,parallel,connections',
  BENCH_SIZE: '4MiB',
  BENCH_CONCURRENT_SIZE: '4MiB',
  BENCH_COPY_SIZE: '4MiB',
  BENCH_ROWS: '2000',
  BENCH_ROUNDS: '1',
  BENCH_LOAD_SECONDS: '1',
  BENCH_KILL_SIZE: '32MiB',
  BENCH_CLUSTER_UPLOAD_SIZE: '4MiB',
  BENCH_PARALLEL_SIZE: '4MiB',
  BENCH_PARALLEL_CAP: '64MB',
  BENCH_CONNECTIONS_DOWNLOADS: '8',
  BENCH_CONNECTIONS_IDLE: '32',
  BENCH_CONNECTIONS_PACE: '4MB',
  BENCH_CONNECTIONS_FILE_SIZE: '1MiB',
};

test('npm run bench runs every section end to end (tiny sizes, local backend)', { timeout: 300_000 }, async () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BENCH_')));
  // Its report and figures go to a folder of the test's, not over the checkout's BENCHMARKS.md.
  const output = await mkdtemp(path.join(tmpdir(), 'filehaven-bench-smoke-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts'], {
    cwd: ROOT,
    // The runner's compiled tree when there is one: the same sources, not built a second time.
    env: { ...env, ...TINY, BENCH_OUTPUT: output, ...(process.env.FILEHAVEN_TEST_ENTRY ? { BENCH_ENTRY: process.env.FILEHAVEN_TEST_ENTRY } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  for (const stream of [child.stdout, child.stderr]) stream.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, printed);
  for (const section of TINY.BENCH_SECTIONS.split(',')) assert.match(printed, new RegExp(`^local: ${section}\\.\\.\\. \\d+ s$`, 'm'), `section ${section} ran`);
  assert.match(printed, /server killed 3 times mid-PATCH and resumed\s+right SHA-256/, 'the kill test ended with the right bytes');
  // WebDAV (issue 27) beside POST /files and the download links, on the same references.
  assert.match(printed, /upload 4 MiB, WebDAV PUT\s+\d+ MB\/s/, 'the WebDAV PUT figure');
  assert.match(printed, /download 4 MiB, WebDAV GET\s+\d+ MB\/s/, 'the WebDAV GET figure');
  // Issue 28: every byte of the many downloads right, nothing refused, the idle connections held.
  assert.match(printed, /every byte right \(SHA-256\), nothing refused\s+8 of 8 right, 0 refused/, 'the connections figures');
  assert.match(printed, /idle connections held \(none closed before the 60 s idle timeout\)\s+32 of 32/, 'the idle connections held');
  try {
    // Every section ran, so the run is complete and writes its report (there).
    assert.match(await readFile(path.join(output, 'BENCHMARKS.md'), 'utf8'), /^# Benchmarks/);
    assert.equal((await readdir(path.join(output, 'results'))).length, 1);
  } finally {
    await rm(output, { recursive: true, force: true });
  }
});
