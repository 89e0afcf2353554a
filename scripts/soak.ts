// The crash-consistency soak (issue 7, item 3): the workload of
// test/crash/crash-consistency.test.ts with many more SIGKILLs, and its figures.
//
//   npm run soak                                   # 40 kills, 6 s rounds
//   npm run soak -- --kills 10 --round-ms 4000 --clients 8 --seed 42 --keep
//
// Exit code 0 when nothing was lost, corrupt, partial or overspent; 1 otherwise.

import { randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { describeCrashReport, runCrashWorkload } from '../test/helpers/crash-workload.js';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '40' },
    'round-ms': { type: 'string', default: '6000' },
    clients: { type: 'string', default: '6' },
    'max-size': { type: 'string', default: String(3 * 1024 * 1024) },
    traffic: { type: 'string', default: String(1024 ** 3) },
    seed: { type: 'string', default: process.env.FILEHAVEN_CRASH_SEED },
    keep: { type: 'boolean', default: false },
  },
});

const whole = (name: string, raw: string | undefined): number => {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) {
    console.error(`--${name} expects a whole number >= 1, got "${raw}"`);
    process.exit(2);
  }
  return n;
};

const seed = values.seed === undefined ? randomInt(2 ** 31) : whole('seed', values.seed);
const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-soak-'));
console.log(`soak: seed ${seed}, data ${dataDir}`);
const report = await runCrashWorkload({
  rounds: whole('kills', values.kills),
  roundMs: whole('round-ms', values['round-ms']),
  clients: whole('clients', values.clients),
  maxSize: whole('max-size', values['max-size']),
  trafficBytes: whole('traffic', values.traffic),
  seed,
  dataDir,
  log: (line) => console.log(line),
});
console.log(describeCrashReport(report));
const failed = report.violations.length > 0 || report.cleanRestarts !== report.restarts;
if (failed) {
  console.log(`\n${report.violations.length} violations (replay with FILEHAVEN_CRASH_SEED=${seed}):`);
  for (const line of report.violations.slice(0, 200)) console.log(`  ${line}`);
}
if (failed || values.keep) console.log(`data folder kept: ${dataDir}`);
else await rm(dataDir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
