#!/usr/bin/env node
// `npm test`: the gates, then every test file on every storage setup, from one queue.
//   Gates, side by side: Biome's lint and format check (npm run lint), the type check of src,
//   test, bench and scripts (npm run typecheck), the import rule (npm run deps: no module
//   imports from a layer above its own, .dependency-cruiser.cjs), and the compiled tree the
//   tests run from (scripts/test-tree.js: src/ and test/ compiled to JavaScript once, so no
//   test process loads TypeScript through tsx, which cost more CPU than many tests spend;
//   its src/cli/index.js is FILEHAVEN_TEST_ENTRY; bundled, it is the `filehaven` the CLI,
//   crash and fuzz tests start, FILEHAVEN_TEST_CLI, and each test file runs bundled too,
//   test-bundle/: a process no longer loads some 500 module files). A failed gate stops the run.
//   Tests: every test/**/*.test.ts on SQLite + the local data folder (the default), and the
//   HTTP suite (test/http: endpoints, pages, limits, the race tests) again on PostgreSQL + S3
//   (FILEHAVEN_TEST_BACKEND=postgres-s3), as Kysely's tests loop over dialects. Each (file,
//   setup) pair is one `node --test` process taken from one queue, FILEHAVEN_TEST_JOBS at a
//   time (default 4: much of a test's time is spent waiting on radosgw, child servers and
//   throttled transfers), slowest first (the last run's times in test-output/test-times.json,
//   else the kinds known to be slow), so no long file starts last. A file's output is printed
//   whole when it ends, with its time; the run ends with the slowest files and one line
//   "N passed, N failed, N skipped".
// PostgreSQL is FILEHAVEN_TEST_DATABASE_URL (default: the machine's server). S3 is
// FILEHAVEN_TEST_S3_ENDPOINT/_ACCESS_KEY/_SECRET_KEY, or else one Ceph RADOS Gateway started
// here for the whole run (scripts/ceph-rgw.sh) when `radosgw` is installed. What is missing
// is named and its tests skip; with CI=true a missing service fails the run instead.
// Extra arguments are files to run alone, once, on the backend the environment names
// (from the sources through tsx, with exact line numbers, no gates and no compiled tree).
// FILEHAVEN_TEST_ONLY=REGEX runs the full run's way (gates, bundles, every setup) only the
// files whose path it matches: a sample of the run.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

const CI = process.env.CI === 'true';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
mkdirSync('test-output', { recursive: true });
const TIMES_FILE = path.join('test-output', 'test-times.json');
/** The longest one test may run in `npm test` (the slowest take about two minutes on a loaded machine). */
const TEST_TIMEOUT_MS = 8 * 60_000;

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return find(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

// The AWS SDK's Node 22 notice (docs/configuration.md: S3) would repeat in every test file that loads it.
const quietEnv = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

/** Runs a command to its end; resolves to its exit code and its output. */
function step(command, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...quietEnv, ...process.env, ...env } });
    let output = '';
    for (const stream of [child.stdout, child.stderr]) stream.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

async function postgresProblem() {
  const url = process.env.FILEHAVEN_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (error) {
    return `no PostgreSQL at ${url} (${error.message || error.code}); set FILEHAVEN_TEST_DATABASE_URL`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** S3 for the run: the one named by the environment, or a radosgw started now; with its stop(). */
function startS3() {
  if (process.env.FILEHAVEN_TEST_S3_ENDPOINT) return { env: {}, stop() {}, problem: null };
  const found = spawnSync('sh', ['-c', 'command -v radosgw && command -v ceph-mon && command -v ceph-osd'], { encoding: 'utf8' });
  if (found.status !== 0) {
    return { env: {}, stop() {}, problem: "no S3 server: set FILEHAVEN_TEST_S3_ENDPOINT, or install Debian's radosgw ceph-mon ceph-osd (.ci/run does)" };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'filehaven-rgw-'));
  const started = Date.now();
  const init = spawnSync('bash', ['scripts/ceph-rgw.sh', 'init', dir], { encoding: 'utf8' });
  const stop = () => {
    spawnSync('bash', ['scripts/ceph-rgw.sh', 'stop', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  if (init.status !== 0) {
    process.stdout.write(init.stdout + init.stderr);
    stop();
    return { env: {}, stop() {}, problem: `radosgw did not start (scripts/ceph-rgw.sh init exited ${init.status})` };
  }
  const vars = Object.fromEntries(
    readFileSync(path.join(dir, 'env'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  console.log(`radosgw ready at ${vars.S3_ENDPOINT} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return {
    env: { FILEHAVEN_TEST_S3_ENDPOINT: vars.S3_ENDPOINT, FILEHAVEN_TEST_S3_ACCESS_KEY: vars.S3_AK, FILEHAVEN_TEST_S3_SECRET_KEY: vars.S3_SK },
    stop,
    problem: null,
  };
}

/** Seconds a job is expected to take: the last run's time, else a guess by the file's kind. */
function expectedSeconds(times, job) {
  const known = times[`${job.backend} ${job.file}`];
  if (typeof known === 'number') return known;
  if (/test\/(e2e|fuzz|crash)\//.test(job.file)) return 120;
  if (/test\/(cli|contract)\//.test(job.file)) return 45;
  return 20;
}

/** The spec reporter's closing counts of one file ("ℹ pass 12"). */
function countsOf(output) {
  const count = (name) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(output)?.[1] ?? 0);
  return { passed: count('pass'), failed: count('fail') + count('cancelled'), skipped: count('skipped') + count('todo') };
}

/**
 * What a failed file printed about its failures: the spec reporter's closing "✖ failing
 * tests:" section, else (a crash before it) the last 60 lines.
 */
function failureSection(output) {
  const at = output.lastIndexOf('✖ failing tests:');
  const section = at >= 0 ? output.slice(at) : output.split('\n').slice(-60).join('\n');
  return section.length > 20_000 ? `${section.slice(0, 20_000)}\n[… cut]` : section;
}

/**
 * A job's output without the two lines of bash's `times` at its end, and the CPU seconds
 * (user + system) of the processes it waited for, from the second line; null if absent.
 */
function withoutTimes({ code, output }) {
  const match = /\n?\d+m[\d.]+s \d+m[\d.]+s\n(\d+)m([\d.]+)s (\d+)m([\d.]+)s\n?$/.exec(output);
  if (!match) return { code, output, cpu: null };
  const [, userMinutes, userSeconds, systemMinutes, systemSeconds] = match.map(Number);
  return { code, output: output.slice(0, match.index), cpu: userMinutes * 60 + userSeconds + systemMinutes * 60 + systemSeconds };
}

/** Runs the jobs from one queue, `width` at a time, each file bundled in the compiled tree; resolves to each job's result. */
async function runQueue(jobs, width, tree) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      const started = Date.now();
      // A test that hangs fails after TEST_TIMEOUT_MS with its name, and the file goes on:
      // a hang once held a CI run for most of its time with nothing to show for it.
      const args = ['--test', '--test-reporter=spec', `--test-timeout=${TEST_TIMEOUT_MS}`, path.join(tree, 'test-bundle', job.file.replace(/\.ts$/, '.js'))];
      // Through bash, whose `times` then tells the CPU the file cost: its process and every
      // process it started and waited for (test servers, CLI runs, browsers), not the
      // shared services (PostgreSQL, radosgw).
      const measured = await step('bash', ['-c', '"$0" "$@"; code=$?; times >&2; exit $code', process.execPath, ...args], job.env);
      const { code, output, cpu } = withoutTimes(measured);
      const seconds = (Date.now() - started) / 1000;
      const counts = countsOf(output);
      if (code !== 0 && counts.failed === 0) counts.failed = 1;
      // A failure's own account, printed again at the end, where a CI log's tail shows it.
      const failures = code === 0 ? '' : failureSection(output);
      results.push({ ...job, code, seconds, cpu, failures, ...counts });
      const mark = code === 0 ? 'passed' : 'FAILED';
      const cpuNote = cpu === null ? '' : `, CPU ${cpu.toFixed(1)} s`;
      process.stdout.write(`\n── ${job.file} on ${job.backend}: ${mark} in ${seconds.toFixed(1)} s${cpuNote} (${results.length}/${jobs.length})\n${output}`);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

const picked = process.argv.slice(2);
if (picked.length > 0) {
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...picked], {
    stdio: 'inherit',
    env: { ...quietEnv, ...process.env },
  });
  child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  const runStarted = Date.now();
  // The gates and the build run side by side: on two cores they take the time of the slowest.
  const treeDir = path.join(root, 'test-output', 'test-tree');
  const gates = [
    ['biome check (npm run lint)', step(path.join(root, 'node_modules', '.bin', 'biome'), ['check', '--error-on-warnings', '.'])],
    ['tsc --noEmit (npm run typecheck)', step(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit'])],
    // The browser scripts again, as browsers run them: DOM types and no Node ones.
    [
      'tsc --noEmit -p src/http/web/browser (npm run typecheck)',
      step(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', 'src/http/web/browser']),
    ],
    // The import rule: layers point down (.dependency-cruiser.cjs).
    ['depcruise src (npm run deps)', step(path.join(root, 'node_modules', '.bin', 'depcruise'), ['src'])],
    ['the compiled tree for the tests (scripts/test-tree.js)', step(process.execPath, [path.join(root, 'scripts', 'test-tree.js'), treeDir])],
  ];
  const s3 = startS3();
  process.on('SIGINT', () => {
    s3.stop();
    process.exit(130);
  });
  let status = 0;
  try {
    for (const [name, running] of gates) {
      const { code, output } = await running;
      if (code !== 0) process.stdout.write(output);
      console.log(`${name}: ${code === 0 ? 'passed' : `failed (exit ${code})`}`);
      if (code !== 0) status = 1;
    }
    if (status !== 0) throw new Error('not running the tests: a gate above failed');
    const entry = path.join(treeDir, 'src', 'cli', 'index.js');
    const cli = path.join(treeDir, 'cli-bundle', 'index.js');
    const problems = [s3.problem, await postgresProblem()].filter(Boolean);
    // FILEHAVEN_TEST_ONLY (a regular expression on the path) runs a sample the way the full run does.
    const only = new RegExp(process.env.FILEHAVEN_TEST_ONLY ?? '');
    const jobs = find('test')
      .filter((file) => only.test(file))
      .sort()
      .map((file) => ({ file, backend: 'sqlite-local' }));
    if (problems.length === 0) {
      jobs.push(
        ...find(path.join('test', 'http'))
          .filter((file) => only.test(file))
          .sort()
          .map((file) => ({ file, backend: 'postgres-s3' })),
      );
    } else {
      console.log(`PostgreSQL + S3 pass skipped: ${problems.join('; ')}`);
      if (CI) {
        console.error('CI=true: the PostgreSQL + S3 pass must run');
        status = 1;
      }
    }
    let times = {};
    try {
      times = JSON.parse(readFileSync(TIMES_FILE, 'utf8'));
    } catch {}
    for (const job of jobs) job.env = { ...s3.env, FILEHAVEN_TEST_BACKEND: job.backend, FILEHAVEN_TEST_ENTRY: entry, FILEHAVEN_TEST_CLI: cli };
    jobs.sort((a, b) => expectedSeconds(times, b) - expectedSeconds(times, a));
    const width = Number(process.env.FILEHAVEN_TEST_JOBS) || 4;
    const results = await runQueue(jobs, width, treeDir);
    // A sample keeps the other files' times of the last full run.
    const kept = process.env.FILEHAVEN_TEST_ONLY ? times : {};
    const measuredTimes = Object.fromEntries(results.map((r) => [`${r.backend} ${r.file}`, Math.round(r.seconds)]));
    writeFileSync(TIMES_FILE, `${JSON.stringify({ ...kept, ...measuredTimes }, null, 2)}\n`);
    const sum = (key) => results.reduce((total, result) => total + result[key], 0);
    console.log(`\nslowest files (all in test-output/test-times.json):`);
    for (const result of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 15)) {
      console.log(`${result.seconds.toFixed(1).padStart(7)} s  ${result.backend.padEnd(12)} ${result.file}`);
    }
    const measured = results.filter((result) => result.cpu !== null);
    if (measured.length > 0) {
      // CPU is what two cores run out of: where to look when the run is slow.
      console.log(`\nmost CPU (${sum('cpu').toFixed(0)} s of CPU in all, shared services not counted):`);
      for (const result of [...measured].sort((a, b) => b.cpu - a.cpu).slice(0, 15)) {
        console.log(`${result.cpu.toFixed(1).padStart(7)} s  ${result.backend.padEnd(12)} ${result.file}`);
      }
      writeFileSync(
        path.join('test-output', 'test-cpu.json'),
        `${JSON.stringify(Object.fromEntries(measured.map((r) => [`${r.backend} ${r.file}`, Math.round(r.cpu)])), null, 2)}\n`,
      );
    }
    const failed = results.filter((result) => result.code !== 0);
    for (const result of failed) {
      console.log(`\n── failed: ${result.file} on ${result.backend}\n${result.failures.trimEnd()}`);
    }
    for (const result of failed) console.log(`failed: ${result.file} on ${result.backend}`);
    if (failed.length > 0) status = 1;
    console.log(`${jobs.length} files in ${((Date.now() - runStarted) / 60000).toFixed(1)} min, ${width} at a time`);
    console.log(`${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`);
  } catch (error) {
    console.error(error.message);
    status = 1;
  } finally {
    s3.stop();
  }
  process.exit(status);
}
