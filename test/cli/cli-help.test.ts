import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { assertFails, assertOk, runCli } from '../helpers/cli.js';

// Issue 12: help for every command and flag, --version, short usage errors with a hint,
// negative numbers without parseArgs' "ambiguous".

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Flag lines of a help text: `  --name VALUE  explanation`. */
const flagLines = (text: string) => text.split('\n').filter((line) => /^ {2}(-[a-z], )?--[a-z-]+/.test(line));

describe('CLI help', { concurrency: 2, timeout: 120_000 }, () => {
  test('--version, -V and version print the package version', async () => {
    for (const flag of ['--version', '-V', 'version']) assert.equal(assertOk(await runCli([flag])), `filehaven ${VERSION}\n`);
  });

  test('help CMD, CMD --help and CMD SUB --help: the usage line, then one explained line per flag', async () => {
    const premium = assertOk(await runCli(['accounts', 'premium', '--help']));
    assert.equal(assertOk(await runCli(['help', 'accounts', 'premium'])), premium);
    assert.equal(assertOk(await runCli(['accounts', 'premium', '-h', '--login', 'x'])), premium, 'help wins over the other flags');
    assert.match(premium, /^usage: filehaven accounts premium --login L \[--days D \| --end\] \[--traffic SIZE\] \[--json\]\n/);
    const flags = flagLines(premium);
    assert.deepEqual(
      flags.map((line) => /--([a-z-]+)/.exec(line)![1]),
      ['login', 'days', 'end', 'traffic', 'json'],
    );
    for (const line of flags) assert.match(line, /^ {2}--[a-z-]+( [A-Z|]+)? {2,}\S.{10,}$/, `explained: ${line}`);
    assert.match(premium, /negative shortens/);

    const group = assertOk(await runCli(['accounts', '--help']));
    for (const sub of ['create', 'list', 'premium', 'disable', 'enable', 'set-password', 'regenerate-key', 'balance'])
      assert.match(group, new RegExp(`\\n  filehaven accounts ${sub}\\b`));
    assert.match(assertOk(await runCli(['serve', '--help'])), /^usage: filehaven serve /);
    assert.match(assertOk(await runCli(['help', 'settings'])), /\n {2}--data V +data folder.*FILEHAVEN_DATA/);
    const download = assertOk(await runCli(['download', '--help']));
    assert.match(download, /\n {2}-o, --output FILE\|DIR\/\|- +where to save it/);
    assert.match(download, /\n {2}--server URL +/, "the user commands' common flags are listed");
  });

  test('every command and subcommand the overview lists has its own help with explained flags', async () => {
    const overview = assertOk(await runCli(['help']));
    const commands = [...overview.matchAll(/^ {2}filehaven ([a-z-]+)(?: ([a-z][a-z-]+)(?= |$))?/gm)].map((m) =>
      [m[1]!, m[2]].filter((x): x is string => x !== undefined),
    );
    assert.ok(commands.length > 30, overview);
    for (const words of commands) {
      const text = assertOk(await runCli(['help', ...words]));
      assert.match(text, /^usage: filehaven /, words.join(' '));
      for (const line of flagLines(text)) assert.match(line, /\S {2,}\S/, `${words.join(' ')}: ${line}`);
    }
  });

  test('usage errors: the mistake, then where to read more, and nothing else', async () => {
    assertFails(await runCli(['accounts', 'premium', '--days', '3']), 2, /^filehaven accounts: --login is required$/);
    assertFails(await runCli(['accounts']), 2, /^filehaven accounts: accounts needs a command: create, list, /);
    const result = await runCli(['accounts', 'premium', '--days', '3']);
    assert.equal(result.stderr, "filehaven accounts: --login is required\nRun 'filehaven help accounts premium' for usage.\n");
    const unknown = await runCli(['help', 'frobnicate']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'filehaven help: unknown command "frobnicate"\nRun \'filehaven help\' for the list of commands.\n');
  });

  test('negative numbers reach the flag: its own message, never parseArgs\' "ambiguous"', async () => {
    const limit = await runCli(['audit', '--limit', '-5']);
    assertFails(limit, 2, /^filehaven audit: --limit takes a whole number from 1 to 10000 \(such as 50\), got "-5"$/);
    const days = await runCli(['accounts', 'create', '--login', 'x', '--password', 'long enough', '--premium-days', '-3']);
    assertFails(days, 2, /--premium-days takes 0 to 36500 days \(such as 30 or 0\.5\), got "-3"/);
    const value = await runCli(['accounts', 'premium', '--login', '--days']);
    assertFails(value, 2, /^filehaven accounts: --login needs a value/);
    for (const r of [limit, days, value]) assert.doesNotMatch(r.stderr, /ambiguous/);
  });
});
