#!/usr/bin/env node
// Runs the test suite with node's test runner through tsx (Node 20 has no glob support in
// --test), on every storage setup:
//   1. every test/**/*.test.ts on SQLite + the local data folder (the default);
//   2. the HTTP suite (test/http: endpoints, pages, limits, the race tests) again on
//      PostgreSQL + S3 (FILEHAVEN_TEST_BACKEND=postgres-s3), as Kysely's tests loop over
//      dialects. Both passes run at once, two files at a time each.
// PostgreSQL is FILEHAVEN_TEST_DATABASE_URL (default: the machine's server). S3 is
// FILEHAVEN_TEST_S3_ENDPOINT/_ACCESS_KEY/_SECRET_KEY, or else one Ceph RADOS Gateway started
// here for the whole run (scripts/ceph-rgw.sh) when `radosgw` is installed. What is missing
// is named and its tests skip; with CI=true a missing service fails the run instead.
// The CLI, crash and fuzz tests start hundreds of `filehaven` processes: the runner
// compiles the sources once (scripts/build.js, into test-output/) and hands them the build
// (FILEHAVEN_TEST_ENTRY), instead of each process compiling TypeScript through tsx again.
// Extra arguments are files to run alone, once, on the backend the environment names
// (through tsx, with no build).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

const CI = process.env.CI === 'true';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
mkdirSync('test-output', { recursive: true });

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return find(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Runs files with node --test; resolves to the exit code. Output is prefixed when passes run side by side. */
function runTests(files, env, label, concurrency = 1) {
  return new Promise((resolve) => {
    const timings = ['--test-reporter=./scripts/test-timings.js', `--test-reporter-destination=test-output/timings-${label ?? 'run'}.txt`];
    const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout', ...timings];
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...files], {
      // The AWS SDK's Node 22 notice (README: S3) would repeat in every test file that loads it.
      env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...process.env, ...env },
      stdio: label ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    });
    if (label) {
      for (const stream of [child.stdout, child.stderr]) {
        let rest = '';
        stream.setEncoding('utf8');
        stream.on('data', (chunk) => {
          const lines = (rest + chunk).split('\n');
          rest = lines.pop();
          for (const line of lines) process.stdout.write(`[${label}] ${line}\n`);
        });
        stream.on('end', () => rest && process.stdout.write(`[${label}] ${rest}\n`));
      }
    }
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
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

const picked = process.argv.slice(2);
if (picked.length > 0) {
  process.exit(await runTests(picked, {}));
}

const buildDir = path.join(root, 'test-output', 'test-build');
const building = new Promise((resolve) => {
  const child = spawn(process.execPath, [path.join(root, 'scripts', 'build.js'), '--out', buildDir], { stdio: 'inherit' });
  child.on('close', (code) => resolve(code));
});
const s3 = startS3();
const stopS3 = () => s3.stop();
process.on('SIGINT', () => {
  stopS3();
  process.exit(130);
});
let status = 0;
try {
  const built = await building;
  if (built !== 0) throw new Error(`the build for the tests failed (scripts/build.js exited ${built})`);
  process.env.FILEHAVEN_TEST_ENTRY = path.join(buildDir, 'cli', 'index.js');
  const problems = [s3.problem, await postgresProblem()].filter(Boolean);
  const all = find('test').sort();
  // Two files at a time in each pass: much of a test's time is spent waiting (on radosgw,
  // on child servers, on throttled transfers), so four files share the two cores well.
  const passes = [runTests(all, { ...s3.env, FILEHAVEN_TEST_BACKEND: 'sqlite-local' }, problems.length === 0 ? 'sqlite' : undefined, 2)];
  if (problems.length === 0) {
    const http = find(path.join('test', 'http')).sort();
    passes.push(runTests(http, { ...s3.env, FILEHAVEN_TEST_BACKEND: 'postgres-s3' }, 'postgres-s3', 2));
  } else {
    console.log(`PostgreSQL + S3 pass skipped: ${problems.join('; ')}`);
    if (CI) {
      console.error('CI=true: the PostgreSQL + S3 pass must run');
      status = 1;
    }
  }
  const codes = await Promise.all(passes);
  status = Math.max(status, ...codes);
  if (passes.length > 1) console.log(`sqlite-local pass: exit ${codes[0]}; postgres-s3 pass: exit ${codes[1]}`);
} catch (error) {
  console.error(error.message);
  status = 1;
} finally {
  stopS3();
}
process.exit(status);
