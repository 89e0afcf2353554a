import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { watch } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openServices } from '../../src/composition.js';
import { DEFAULTS } from '../../src/config/config.js';
import { download, entryId, errorCodeOf, request } from '../helpers/crash-http.js';
import { changesOf, describeCrashReport, ROUND_MINIMUM, runCrashWorkload } from '../helpers/crash-workload.js';
import { ServerProcess } from '../helpers/server-process.js';

// Issue 7, item 3: a real `filehaven serve` process is killed with SIGKILL at random
// moments of a mixed workload (uploads of a few bytes to 3 MiB, shared contents, copies,
// folders, moves, deletes, premium direct downloads) and started again on the same data
// folder; then every answer the clients got is held against the end state, the blob
// folder, a final `filehaven gc`, and the premium traffic. `npm run soak` runs the same
// with many more kills. FILEHAVEN_CRASH_SEED=<n> replays a run's choices (the timing of
// the server is not reproducible, so a failure may need a few runs to show again).

const seed = process.env.FILEHAVEN_CRASH_SEED ? Number(process.env.FILEHAVEN_CRASH_SEED) : randomInt(2 ** 31);
// Three kills in every `npm test`; `npm run test:deep` runs the five of earlier releases
// (FILEHAVEN_CRASH_ROUNDS=5), and `npm run soak` forty.
const rounds = process.env.FILEHAVEN_CRASH_ROUNDS ? Number(process.env.FILEHAVEN_CRASH_ROUNDS) : 3;

// The timeout only guards against a hang: a machine three times slower than the development
// one took 143 s for three rounds, and the final checks grow with what the workload did.
test('SIGKILL at random moments loses no acknowledged operation and leaves nothing partial', { timeout: 120_000 + 60_000 * rounds }, async (context) => {
  assert.ok(Number.isSafeInteger(seed), `FILEHAVEN_CRASH_SEED must be a whole number, got ${process.env.FILEHAVEN_CRASH_SEED}`);
  assert.ok(Number.isSafeInteger(rounds) && rounds >= 1, `FILEHAVEN_CRASH_ROUNDS must be a whole number from 1, got ${process.env.FILEHAVEN_CRASH_ROUNDS}`);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-crash-'));
  let passed = false;
  try {
    const report = await runCrashWorkload({ rounds, roundMs: 6_000, seed, dataDir, log: (line) => context.diagnostic(line) });
    context.diagnostic(describeCrashReport(report));
    const replay = `(replay with FILEHAVEN_CRASH_SEED=${seed}; data kept in ${dataDir})`;
    assert.deepEqual(report.violations.slice(0, 40), [], `${report.violations.length} violations ${replay}`);
    assert.equal(report.kills, rounds);
    assert.equal(report.cleanRestarts, report.restarts, 'every start after a kill came up');
    // The workload really ran, and kills really cut operations (else nothing was tested).
    assert.ok(report.acknowledged.uploads >= ROUND_MINIMUM.uploads * rounds, `only ${report.acknowledged.uploads} uploads ${replay}`);
    assert.ok(changesOf(report.acknowledged) >= ROUND_MINIMUM.changes * rounds, `too few copies, moves, deletes ${replay}`);
    assert.ok(report.dedupUploads > 0, `no upload was de-duplicated ${replay}`);
    assert.ok(report.traffic.complete > 0, `no direct download completed ${replay}`);
    const cut = report.unknown.uploads + report.unknown.copies + report.unknown.moves + report.unknown.deletes;
    assert.ok(cut > 0, `no kill cut an operation in flight ${replay}`);
    passed = true;
  } finally {
    if (passed) await rm(dataDir, { recursive: true, force: true });
    else context.diagnostic(`seed ${seed}, data folder kept: ${dataDir}`);
  }
});

// The random test above finds this now and then (a DELETE in flight at the kill); here it
// is made likely: the server is killed the moment the blob file leaves blobs/ (inotify).
// That unlink used to run inside the delete's transaction, before its COMMIT, and a kill
// there brought the file back, listed, with its bytes gone; it now runs in a second
// transaction after the delete committed (services/blob-lifecycle.ts). The kill does not
// always land in the window, hence a few attempts. The file must then be gone, or present
// with its bytes: never listed without them.
test('a DELETE killed right after its blob leaves blobs/ is all or nothing', { timeout: 60_000 }, async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-crash-delete-'));
  const password = 'correct horse battery';
  const services = await openServices({ ...DEFAULTS, dataDir, logLevel: 'silent' }, { log: () => {} });
  await services.accounts.create({ login: 'ada', password, premiumDays: 30 });
  await services.close();
  let server = await ServerProcess.start(dataDir, ['--log-level', 'warn']);
  try {
    const keyAnswer = await request(`${server.url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'ada', password }) });
    const key = keyAnswer.kind === 'answer' ? /<content type="text">([^<]+)</.exec(keyAnswer.body)?.[1] : undefined;
    assert.ok(key, JSON.stringify(keyAnswer));
    for (let attempt = 1; attempt <= 3; attempt++) {
      const bytes = randomBytes(1000);
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const form = new FormData();
      form.append('upload', new Blob([new Uint8Array(bytes)]), `doomed-${attempt}.bin`);
      const upload = await request(`${server.url}/files`, { method: 'POST', headers: { Authorization: key }, body: form });
      assert.ok(upload.kind === 'answer' && upload.status === 201, JSON.stringify(upload));
      const id = entryId(upload.body)!;

      const running = server;
      const watcher = watch(path.join(dataDir, 'blobs', sha256.slice(0, 2), sha256.slice(2, 4)), (_event, name) => {
        if (name === sha256) void running.kill();
      });
      try {
        await request(`${server.url}/files/${id}`, { method: 'DELETE', headers: { Authorization: key } });
        await server.kill();
      } finally {
        watcher.close();
      }

      server = await ServerProcess.start(dataDir, ['--log-level', 'warn']);
      const details = await request(`${server.url}/files/${id}`, { headers: { Authorization: key } });
      assert.equal(details.kind, 'answer');
      if (details.kind !== 'answer' || details.status === 404) {
        assert.equal(details.kind === 'answer' && errorCodeOf(details.body), 'errorFileNotFound');
        continue;
      }
      assert.equal(details.status, 200, details.body);
      const link = /<link href="([^"]+)" rel="enclosure"/.exec(details.body)![1]!.replace(/&amp;/g, '&');
      const got = await download(`${link}?download=1`);
      const status = got.outcome.kind === 'answer' ? `${got.outcome.status}` : got.outcome.kind;
      assert.ok(got.complete, `attempt ${attempt}: the file is still there (GET /files/${id} 200) but its download fails: ${status}`);
      assert.equal(got.sha256, sha256);
    }
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});
