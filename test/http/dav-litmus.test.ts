import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { onPath, runTool, toolSkip } from '../helpers/dav-clients.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// Issue 27, "done when": litmus, the WebDAV conformance suite (Debian's package), runs its
// basic, copymove, props, locks and http suites against /dav/ without a failure, on each
// backend. litmus makes its own collection "litmus/" under the URL it is given and works
// in it. Its warnings (things RFC 4918 allows but litmus frowns on) are printed, not failed.

const SUITES = ['basic', 'copymove', 'props', 'locks', 'http'] as const;

let t: TestServer;
let ada: TestAccount;
before(async () => {
  t = await startTestServer();
  ada = await t.account();
});
after(() => t?.close());

/** One test's result line in litmus's output: " 3. put_get............... pass". */
interface LitmusLine {
  suite: string;
  test: string;
  result: string;
}

/** What litmus printed, by suite: every test line, every warning, every suite's summary. */
function parseLitmus(output: string): { lines: LitmusLine[]; warnings: string[]; summaries: Map<string, { run: number; failed: number }> } {
  const lines: LitmusLine[] = [];
  const warnings: string[] = [];
  const summaries = new Map<string, { run: number; failed: number }>();
  let suite = '';
  let last: LitmusLine | undefined;
  for (const raw of output.split('\n')) {
    // litmus redraws a test's line with a carriage return when it ends: the last redraw is its result.
    const line = raw.split('\r').at(-1)!.trimEnd();
    const running = /^-> running `([^']+)'/.exec(line);
    const summary = /^<- summary for `([^']+)': of (\d+) tests run: (\d+) passed, (\d+) failed/.exec(line);
    const result = /^\s*\d+\.\s+(\w+)\.*\s*(pass|FAIL|SKIPPED)\b(.*)$/.exec(line);
    // A warning comes on the test's own line or on a line of its own before the result.
    if (/WARNING: /.test(line)) warnings.push(`${suite}: ${line.trim()}`);
    if (running) suite = running[1]!;
    if (summary) summaries.set(summary[1]!, { run: Number(summary[2]), failed: Number(summary[4]) });
    if (result) {
      last = { suite, test: result[1]!, result: `${result[2]}${result[3]}` };
      lines.push(last);
    } else if (running || summary || line.startsWith('->') || line.startsWith('<-')) {
      last = undefined;
    } else if (last?.result.startsWith('FAIL') && line.trim() !== '') {
      // A failure's reason may run over several lines.
      last.result += ` ${line.trim()}`;
    }
  }
  return { lines, warnings, summaries };
}

test(`litmus ${SUITES.join(', ')}: no failure`, { skip: toolSkip('litmus'), timeout: 300_000 }, async () => {
  const litmus = onPath('litmus');
  assert.ok(litmus, 'CI=true: litmus must be installed (.ci/run installs it: apt-get install litmus)');
  // litmus writes debug.log and child.log where it runs: a folder of the test's.
  const work = await mkdtemp(path.join(tmpdir(), 'filehaven-litmus-'));
  const run = await runTool(litmus, ['--keep-going', `${t.url}/dav/`, ada.login, ada.key], { cwd: work, env: { TESTS: SUITES.join(' ') } });
  const { lines, warnings, summaries } = parseLitmus(run.output);
  // Its progress redraws lines with carriage returns: each line as it ended.
  const printed = run.output
    .split('\n')
    .map((line) => line.split('\r').at(-1))
    .join('\n');
  for (const warning of warnings) console.log(`litmus warning: ${warning}`);
  const skipped = lines.filter((line) => line.result.startsWith('SKIPPED'));
  for (const line of skipped) console.log(`litmus skipped: ${line.suite} ${line.test}`);
  const failures = lines.filter((line) => line.result.startsWith('FAIL')).map((line) => `${line.suite} ${line.test}: ${line.result}`);
  const notRun = SUITES.filter((suite) => !summaries.has(suite));
  const problems = [...failures, ...notRun.map((suite) => `${suite}: did not run to its summary`)];
  if (problems.length === 0 && run.code === 0) await rm(work, { recursive: true, force: true });
  assert.deepEqual(problems, [], `litmus failed (${failures.length} FAIL lines; its traces are in ${work}/debug.log):\n${problems.join('\n')}\n\n${printed}`);
  assert.equal(run.code, 0, `litmus exited with ${run.code ?? run.signal}:\n${printed}`);
  for (const suite of SUITES) assert.equal(summaries.get(suite)?.failed, 0, `${suite}: ${JSON.stringify(summaries.get(suite))}`);
});
