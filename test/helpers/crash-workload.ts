import { setTimeout as sleep } from 'node:timers/promises';
import { openServices } from '../../src/composition.js';
import { DEFAULTS } from '../../src/config/config.js';
import { runCli } from './cli.js';
import { ageStorage, BlobScanner, type LiveState, mustBePresent, tempFiles, verifyEndState } from './crash-checks.js';
import { checkTraffic, contentFor, pickSize, prng, type RoundState, sha256Hex, TrafficClient, type TrafficLedger, WorkloadClient } from './crash-clients.js';
import { request } from './crash-http.js';
import { type ClientAccount, type Counts, CrashModel, type Tally } from './crash-model.js';
import { ServerProcess } from './server-process.js';

/*
 * Crash consistency (issue 7, item 3): a mixed workload against a real `filehaven serve`
 * process that is killed with SIGKILL at random moments and started again on the same
 * data folder, then held against everything the clients were told. Used by
 * test/crash/crash-consistency.test.ts (a few kills) and scripts/soak.ts (many).
 */

export interface CrashWorkloadOptions {
  /** Server starts, each ended by a SIGKILL at a random moment. */
  rounds: number;
  /** Longest a round runs before its kill; the kill comes at a random point of it. */
  roundMs: number;
  seed: number;
  /** An empty (or missing) folder; it is the server's data folder. */
  dataDir: string;
  /** Concurrent clients, one account each (default 6). */
  clients?: number;
  /** Largest upload (default 3 MiB). */
  maxSize?: number;
  /** Premium traffic of the downloading account (default 48 MiB: spent within a short run, so refusals are exercised too). */
  trafficBytes?: number;
  /** Progress lines (a round done, the final checks). */
  log?: (line: string) => void;
}

export interface CrashReport {
  seed: number;
  kills: number;
  /** Starts after a kill (and the final one) that came up and served. */
  restarts: number;
  cleanRestarts: number;
  acknowledged: Counts;
  /** Cut by a kill: no answer. */
  unknown: Counts;
  /** Of the unanswered uploads and copies: found done (whole) and not done. */
  unknownDone: number;
  unknownNotDone: number;
  /** Refused at connect, after a kill: nothing happened. */
  refused: number;
  dedupUploads: number;
  bytesUploaded: number;
  liveFiles: number;
  liveBlobs: number;
  tally: Tally;
  gc: { blobsRemoved: number; orphanFilesRemoved: number; tempFilesRemoved: number; bytesFreed: number } | null;
  traffic: TrafficLedger & { left: number | null };
  violations: string[];
  elapsedMs: number;
}

const MiB = 1024 * 1024;
const HOUR_MS = 3_600_000;
const PASSWORD = 'crash test password';

/** Server flags: no limit may refuse the workload, and gc runs often beside it. */
const SERVE_ARGS = [
  '--log-level',
  'warn',
  '--api-rate-per-key',
  '0',
  '--api-rate-per-ip',
  '0',
  '--free-downloads-per-ip',
  '0',
  '--gc-interval',
  '2s',
  '--temp-grace',
  '1m',
];

/** What every round must acknowledge at least, for its kill to land in a workload that runs (the test asserts it per round). */
export const ROUND_MINIMUM = { uploads: 10, changes: 6 } as const;

/** Copies, moves and deletes: the operations that change a file that exists. */
export const changesOf = (counts: Counts): number => counts.copies + counts.moves + counts.deletes;

/** Whether the round that began at `before` has acknowledged its ROUND_MINIMUM. */
function didSomeWork(before: Counts, now: Counts): boolean {
  return now.uploads - before.uploads >= ROUND_MINIMUM.uploads && changesOf(now) - changesOf(before) >= ROUND_MINIMUM.changes;
}

/** Creates the accounts through the services before the first start (premium, so details and direct links work). */
async function createAccounts(dataDir: string, logins: string[], trafficBytes: number[]): Promise<void> {
  const services = await openServices({ ...DEFAULTS, dataDir, logLevel: 'silent' }, { log: () => {} });
  try {
    for (const [i, login] of logins.entries()) {
      await services.accounts.create({ login, password: PASSWORD, premiumDays: 30, trafficBytes: trafficBytes[i] });
    }
  } finally {
    await services.close();
  }
}

async function apiKey(url: string, login: string): Promise<string> {
  const outcome = await request(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login, password: PASSWORD }) });
  const key = outcome.kind === 'answer' ? /<content type="text">([^<]+)<\/content>/.exec(outcome.body)?.[1] : undefined;
  if (!key) throw new Error(`POST /apikeys for ${login}: ${JSON.stringify(outcome).slice(0, 300)}`);
  return key;
}

/** Runs the workload, the kills and the final checks; returns the figures and every violation found. */
export async function runCrashWorkload(options: CrashWorkloadOptions): Promise<CrashReport> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const { dataDir, seed } = options;
  const rng = prng(seed);
  const model = new CrashModel();
  const maxSize = options.maxSize ?? 3 * MiB;
  const ledger: TrafficLedger = { initial: options.trafficBytes ?? 48 * MiB, received: 0, lowest: Infinity, downloads: 0, complete: 0, refused: 0, checks: 0 };
  const clientCount = options.clients ?? 6;
  const accounts: ClientAccount[] = Array.from({ length: clientCount }, (_, index) => ({
    index,
    login: `crash${index}`,
    password: PASSWORD,
    key: '',
    folders: [],
  }));
  await createAccounts(dataDir, [...accounts.map((a) => a.login), 'traffic'], [...accounts.map(() => 0), ledger.initial]);

  const shared = Array.from({ length: 8 }, (_, i) => {
    const bytes = contentFor(seed, `shared-${i}`, pickSize(rng, maxSize));
    return { bytes, sha256: sha256Hex(bytes) };
  });
  const context = { model, seed, maxSize, shared, uploadedDigests: new Set<string>() };
  const clients = accounts.map((account) => new WorkloadClient(context, account, prng(seed + 1000 + account.index)));
  const scanner = new BlobScanner(dataDir, model);
  let trafficKey = '';
  let trafficClients: TrafficClient[] = [];
  const report = { kills: 0, restarts: 0, cleanRestarts: 0 };
  /** Files whose missing blob was reported already (once is enough). */
  const missingBlobs = new Set<string>();

  /** A start after a kill must come up; a failure is the worst finding there is. */
  const start = async (afterKill: boolean): Promise<ServerProcess> => {
    if (!afterKill) return ServerProcess.start(dataDir, SERVE_ARGS);
    report.restarts += 1;
    try {
      const server = await ServerProcess.start(dataDir, SERVE_ARGS);
      report.cleanRestarts += 1;
      return server;
    } catch (error) {
      throw new Error(`the start after kill ${report.kills} failed (${report.cleanRestarts}/${report.restarts} clean restarts): ${(error as Error).message}`);
    }
  };

  for (let round = 0; round < options.rounds; round++) {
    const server = await start(round > 0);
    try {
      if (round === 0) {
        for (const account of accounts) account.key = await apiKey(server.url, account.login);
        trafficKey = await apiKey(server.url, 'traffic');
        trafficClients = [0, 1].map((i) => new TrafficClient(model, trafficKey, ledger, prng(seed + 2000 + i)));
      } else {
        await checkTraffic(model, ledger, server.url, trafficKey, `after restart ${round}`, true);
      }
      const state: RoundState = { url: server.url, stopping: false };
      const running = [...clients.map((c) => c.run(state)), ...trafficClients.map((c) => c.run(state))];
      const before = { ...model.acknowledged };
      // Anywhere from just after the start to the end of the round.
      await sleep(Math.round(options.roundMs * (0.1 + 0.9 * rng())));
      // On a slow or loaded machine that can be before the workload did much (a CI run
      // once saw 14 uploads in a round); the kill waits until this round has some of each,
      // so that every kill lands in a workload that really runs. Bounded: a workload that
      // stalls is for the checks below to report, not a reason to wait forever.
      const stalledAt = Date.now() + 10 * options.roundMs;
      while (!didSomeWork(before, model.acknowledged) && Date.now() < stalledAt) await sleep(50);
      state.stopping = true;
      await server.kill();
      report.kills += 1;
      await Promise.all(running);
    } catch (error) {
      await server.kill();
      throw new Error(`round ${round}: ${(error as Error).message}\n--- server output ---\n${server.log}`);
    }
    // With the server dead: no blob is half written, and no acknowledged file lost its bytes.
    const onDisk = await scanner.scan(`after kill ${report.kills}`);
    for (const file of model.files.values()) {
      if (mustBePresent(model, file) && !onDisk.has(file.sha256) && !missingBlobs.has(file.id)) {
        missingBlobs.add(file.id);
        model.violation('lost', `after kill ${report.kills}: the blob of ${file.id} (${file.origin} acknowledged) is not on disk`);
      }
    }
    log(
      `round ${round + 1}/${options.rounds}: killed; ${model.acknowledged.uploads} uploads, ${model.acknowledged.copies} copies, ${model.acknowledged.moves} moves, ${model.acknowledged.deletes} deletes acknowledged; ${model.violations.length} violations`,
    );
  }

  // gc with the shortest grace allowed, every file aged past it: nothing is spared as
  // "maybe an upload in progress", so every orphan must go and every live blob stay.
  const beforeGc = await scanner.scan('before gc');
  await ageStorage(dataDir, 2 * HOUR_MS);
  // --wait: a server killed in the middle of its gc left a lease that runs out first.
  const gcRun = await runCli(['gc', '--json', '--wait', '--temp-grace', '1m', '--data', dataDir]);
  let gc: CrashReport['gc'] = null;
  if (gcRun.code !== 0) model.violation('unexpected', `filehaven gc exited ${gcRun.code}: ${gcRun.stderr}`);
  else gc = JSON.parse(gcRun.stdout) as NonNullable<CrashReport['gc']>;

  const server = await start(true);
  let live: LiveState;
  let left: number | null = null;
  try {
    left = await checkTraffic(model, ledger, server.url, trafficKey, 'at the end', true);
    live = await verifyEndState(model, accounts, server.url);
  } finally {
    await server.stop();
  }

  const afterGc = await scanner.scan('after gc');
  // A live digest missing before gc already failed its download above; one gc took is new.
  for (const digest of live.digests) {
    if (!afterGc.has(digest) && beforeGc.has(digest)) model.violation('gcRemovedLive', `gc removed the blob ${digest} of a live file`);
  }
  for (const digest of afterGc) if (!live.digests.has(digest)) model.violation('orphans', `blob ${digest} has no live file after gc`);
  const temps = await tempFiles(dataDir);
  if (temps.length > 0) model.violation('orphans', `${temps.length} temp files left after gc`);
  const stats = await runCli(['stats', '--json', '--data', dataDir]);
  if (stats.code !== 0) model.violation('unexpected', `filehaven stats exited ${stats.code}: ${stats.stderr}`);
  else {
    const figures = JSON.parse(stats.stdout) as { files: { active: { count: number }; blocked: { count: number } }; stored: { blobs: number } };
    if (figures.stored.blobs !== live.digests.size)
      model.violation('orphans', `${figures.stored.blobs} blob rows after gc for ${live.digests.size} live digests`);
    const liveCount = figures.files.active.count + figures.files.blocked.count;
    if (liveCount !== live.files) model.violation('phantom', `${liveCount} live files in the database, ${live.files} listed for the workload's accounts`);
  }

  return {
    seed,
    ...report,
    acknowledged: model.acknowledged,
    unknown: model.unknown,
    unknownDone: live.unknownDone,
    unknownNotDone: live.unknownNotDone,
    refused: model.refused,
    dedupUploads: model.dedupUploads,
    bytesUploaded: model.bytesUploaded,
    liveFiles: live.files,
    liveBlobs: live.digests.size,
    tally: model.tally,
    gc,
    traffic: { ...ledger, left },
    violations: model.violations,
    elapsedMs: Date.now() - started,
  };
}

/** The figures as a few lines, for the test's diagnostics and the soak's output. */
export function describeCrashReport(r: CrashReport): string {
  const t = r.tally;
  return [
    `seed ${r.seed}: ${r.kills} kills, ${r.cleanRestarts}/${r.restarts} clean restarts, ${(r.elapsedMs / 1000).toFixed(1)} s`,
    `acknowledged: ${r.acknowledged.uploads} uploads (${r.dedupUploads} de-duplicated, ${(r.bytesUploaded / MiB).toFixed(1)} MiB), ${r.acknowledged.copies} copies, ${r.acknowledged.moves} moves, ${r.acknowledged.deletes} deletes, ${r.acknowledged.folders} folders, ${r.acknowledged.checks} reads`,
    `cut by a kill: ${r.unknown.uploads} uploads, ${r.unknown.copies} copies, ${r.unknown.moves} moves, ${r.unknown.deletes} deletes, ${r.unknown.folders} folders (uploads/copies found done ${r.unknownDone}, not done ${r.unknownNotDone}); ${r.refused} refused at connect`,
    `end: ${r.liveFiles} live files, ${r.liveBlobs} blobs; gc removed ${r.gc ? `${r.gc.orphanFilesRemoved} orphan files, ${r.gc.blobsRemoved} unreferenced blobs, ${r.gc.tempFilesRemoved} temp files` : '(gc failed)'}`,
    `lost ${t.lost}, corrupt ${t.corrupt}, partial ${t.partial}, phantom ${t.phantom}, wrong folder ${t.wrongFolder}, undeleted ${t.undeleted}, gc removed live blobs ${t.gcRemovedLive}, orphans after gc ${t.orphans}, unexpected answers ${t.unexpected}, timeouts ${t.timeouts}`,
    `traffic: ${r.traffic.initial} initial, ${r.traffic.left} left, ${r.traffic.received} received over ${r.traffic.downloads} direct downloads (${r.traffic.complete} complete, ${r.traffic.refused} refused for traffic), overspent ${t.overspent} (in ${r.traffic.checks} checks)`,
  ].join('\n');
}
