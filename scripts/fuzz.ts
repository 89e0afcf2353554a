// The long fuzz run (issue 7): the generators of test/fuzz/ against a real `filehaven
// serve` process, ~25,000 requests by default, without stopping at the first failure: a
// crash is counted and the server restarted, and the end prints a summary table (requests,
// crashes, non-Atom API answers, 5xx, stack traces, timeouts, status codes) and the first
// example of each kind of failure with a shell line that reproduces it.
//
//   node --import tsx scripts/fuzz.ts [--runs 25000] [--seed N] [--family api|web|upload|protocol|mixed] [--root DIR]
//
// --root fuzzes another checkout, e.g. an older commit to tell a regression from an old
// bug: git archive <commit> | tar -x -C /tmp/old && ln -s "$PWD/node_modules" /tmp/old/
//
// FILEHAVEN_FUZZ_RUNS / FILEHAVEN_FUZZ_SEED / FILEHAVEN_FUZZ_FAMILY work too (flags win).
// Exit code 0 when nothing failed, 1 otherwise.

import path from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { caseArb } from '../test/fuzz/arbitraries.js';
import type { ViolationKind } from '../test/fuzz/checks.js';
import { CORPUS } from '../test/fuzz/corpus.js';
import { prepareFixtures } from '../test/fuzz/fixtures.js';
import { familyPlan, fuzzConfig } from '../test/fuzz/fuzz-config.js';
import { FuzzSession, reportCase } from '../test/fuzz/harness.js';
import { embeddedTarget, embeddedTargetOf, NO_LIMITS } from '../test/fuzz/targets.js';

const { values } = parseArgs({ options: { runs: { type: 'string' }, seed: { type: 'string' }, family: { type: 'string' }, root: { type: 'string' } } });
const env = { ...process.env };
if (values.runs) env.FILEHAVEN_FUZZ_RUNS = values.runs;
if (values.seed) env.FILEHAVEN_FUZZ_SEED = values.seed;
if (values.family) env.FILEHAVEN_FUZZ_FAMILY = values.family;
const config = fuzzConfig(25_000, env);

const target = await (values.root ? embeddedTargetOf(path.resolve(values.root)) : embeddedTarget)(NO_LIMITS);
const started = Date.now();
let exitCode = 0;
try {
  console.log(`fuzzing ${target.name} at ${target.url}: ${config.runs} requests, FILEHAVEN_FUZZ_SEED=${config.seed}`);
  const fixtures = await prepareFixtures(target);
  const session = new FuzzSession(target);
  let crashes = 0;
  const perFamily: string[] = [];
  // The seed corpus (test/fuzz/corpus.ts) first, then the generated cases.
  for (const entry of CORPUS) {
    const c = entry.build(fixtures);
    const result = await session.run(c);
    if (result.violations.length > 0) console.log(`corpus: ${entry.name}\n${reportCase(c, result.violations, result.exchange)}\n`);
  }
  perFamily.push(`corpus ${CORPUS.length} requests`);
  for (const family of config.families) {
    const plan = familyPlan(config, family);
    const familyStart = Date.now();
    const before = session.stats.requests;
    await fc.assert(
      fc.asyncProperty(caseArb(family, fixtures), async (c) => {
        const result = await session.run(c);
        if (result.violations.some((violation) => violation.kind === 'crash')) {
          crashes++;
          console.log(`\n--- crash #${crashes}\n${reportCase(c, result.violations, result.exchange)}\n`);
        }
        const n = session.stats.requests;
        if (n % 1000 === 0) console.log(`  ${n} requests, ${Math.round((Date.now() - started) / 1000)} s`);
      }),
      { seed: plan.seed, numRuns: plan.numRuns },
    );
    perFamily.push(`${family} ${session.stats.requests - before} requests in ${((Date.now() - familyStart) / 1000).toFixed(1)} s (seed ${plan.seed})`);
  }
  const final = await session.finalCheck();
  for (const violation of final) session.stats.byKind.set(violation.kind, (session.stats.byKind.get(violation.kind) ?? 0) + 1);

  const { stats } = session;
  const rows: [string, number | string][] = [
    ['requests', stats.requests],
    ['crashes (process exited)', stats.count('crash')],
    ['non-Atom API answers', stats.count('non-Atom API answer')],
    ['5xx', stats.count('5xx')],
    ['stack traces or internals', stats.count('stack trace or internals')],
    ['timeouts (no answer or close in 10 s)', stats.count('timeout')],
    ['closed without an answer', stats.count('no answer')],
    ['unhealthy after a request', stats.count('unhealthy')],
    ['malformed or cut answers', stats.count('bad response')],
    ['kept from refused uploads', stats.count('kept')],
    ['wall time', `${Math.round((Date.now() - started) / 1000)} s`],
  ];
  console.log(`\n${perFamily.join('\n')}\n`);
  console.log('| check | count |\n|---|---:|');
  for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
  console.log('\n| status | requests |\n|---|---:|');
  for (const [status, count] of [...stats.statuses].sort(([a], [b]) => a.localeCompare(b))) console.log(`| ${status} | ${count} |`);

  const failures = [...stats.byKind.values()].reduce((a, b) => a + b, 0);
  if (failures > 0) {
    exitCode = 1;
    console.log(`\nFirst example of each kind of failure (${stats.examples.size}):`);
    for (const [key, { c, violation }] of stats.examples) console.log(`\n--- ${key}\n${reportCase(c, [violation])}`);
    for (const violation of final) console.log(`\n--- at the end: ${violation.kind}: ${violation.detail}`);
  }
  const kinds = [...stats.byKind.keys()] as ViolationKind[];
  console.log(`\n${failures === 0 ? 'no failures' : `${failures} failures (${kinds.join(', ')})`}; replay with FILEHAVEN_FUZZ_SEED=${config.seed}`);
} finally {
  await target.stop();
}
process.exit(exitCode);
