import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { everyFlag } from '../../src/cli/help.js';
import { SETTINGS } from '../../src/config/config.js';
import { assertFails, runCli } from '../helpers/cli.js';

/*
 * Every numeric flag of every command (issue 23, defect 5): a value out of its range, or
 * no number at all, is refused as a usage error (exit code 2) with a message that names
 * the range the flag takes, and the value it got; never a stack trace, and never a mere
 * example ("expects a number of days such as 30") that leaves the reader to guess what
 * was wrong. The operator commands are pointed at a folder that does not exist: the flags
 * are checked before anything is opened, so no site is needed.
 */

const NOWHERE = ['--data', '/nonexistent/filehaven-cli-numbers'];
const PASSWORD = ['--password', 'long enough'];

interface Case {
  /** `accounts create --premium-days`: the command, subcommand and flag. */
  name: string;
  /** The command line without the flag. */
  args: string[];
  /** The values that must be refused. */
  refused: string[];
  /** The range the message must name. */
  range: RegExp;
}

const DAYS = /takes 0 to 36500 days/;
const CHANGE_DAYS = /takes -36500 to 36500 days/;
const TRAFFIC = /takes a size from 0 to 1 PiB/;
const EXPIRES = /takes a duration from 1s to 100 years \(36500d\)/;
const LINK_COUNT = /takes a whole number from 1 to 1000000000/;
const LINK_BYTES = /takes a size from 1 byte to 1PiB/;
/** A server nobody answers at: the flags are refused before it is asked. */
const OFFLINE = ['--server', 'http://127.0.0.1:1'];

/** The catalogue's numeric flags (help.ts: a flag with a range). */
const COMMAND_CASES: Case[] = [
  {
    name: 'accounts create --premium-days',
    args: ['accounts', 'create', '--login', 'ada', ...PASSWORD, ...NOWHERE],
    refused: ['-5', '36501', 'soon'],
    range: DAYS,
  },
  {
    name: 'accounts create --traffic',
    args: ['accounts', 'create', '--login', 'ada', ...PASSWORD, ...NOWHERE],
    refused: ['2PiB', '10XB'],
    range: TRAFFIC,
  },
  { name: 'accounts premium --days', args: ['accounts', 'premium', '--login', 'ada', ...NOWHERE], refused: ['36500.5', 'x'], range: CHANGE_DAYS },
  { name: 'accounts premium --traffic', args: ['accounts', 'premium', '--login', 'ada', ...NOWHERE], refused: ['1025TiB', '1e3'], range: TRAFFIC },
  {
    name: 'accounts balance --set',
    args: ['accounts', 'balance', '--login', 'ada', ...NOWHERE],
    refused: ['-1.00', '1.234'],
    range: /takes an amount from 0\.00 to 9999999999999\.99/,
  },
  {
    name: 'accounts balance --add',
    args: ['accounts', 'balance', '--login', 'ada', ...NOWHERE],
    refused: ['-10000000000000', 'abc'],
    range: /takes an amount from -9999999999999\.99 to 9999999999999\.99/,
  },
  { name: 'files list --limit', args: ['files', 'list', ...NOWHERE], refused: ['10001', '1.5'], range: /takes a whole number from 1 to 10000/ },
  { name: 'audit --limit', args: ['audit', ...NOWHERE], refused: ['-5', '99999'], range: /takes a whole number from 1 to 10000/ },
  { name: 'ls --limit', args: ['ls', '--server', 'http://127.0.0.1:1'], refused: ['0', '100001'], range: /takes a whole number from 1 to 100000/ },
  {
    name: 'upload --parallel',
    args: ['upload', 'some-file', '--server', 'http://127.0.0.1:1'],
    refused: ['9', 'two'],
    range: /takes a whole number from 1 to 8/,
  },
  {
    name: 'upload --connections',
    args: ['upload', 'some-file', '--server', 'http://127.0.0.1:1'],
    refused: ['0', '17', 'four'],
    range: /takes a whole number from 1 to 16/,
  },
  {
    name: 'upload --chunk-size',
    args: ['upload', 'some-file', '--server', 'http://127.0.0.1:1'],
    refused: ['0', '5GiB', 'big'],
    range: /takes a size from 64KiB to 4GiB/,
  },
  // Issue 25: durations in whole seconds up to 100 years, link limits from 1.
  { name: 'upload --expires', args: ['upload', 'some-file', ...OFFLINE], refused: ['0', '36501d', 'soon', '1500ms'], range: EXPIRES },
  { name: 'share --expires', args: ['share', 'K7Q2M9X4PA', ...OFFLINE], refused: ['-1d', '0s', 'tomorrow'], range: EXPIRES },
  { name: 'share --max-downloads', args: ['share', 'K7Q2M9X4PA', ...OFFLINE], refused: ['0', '-3', '2.5', '1000000001'], range: LINK_COUNT },
  { name: 'shares --limit', args: ['shares', ...OFFLINE], refused: ['0', '100001'], range: /takes a whole number from 1 to 100000/ },
  { name: 'request --expires', args: ['request', ...OFFLINE], refused: ['0', 'a week'], range: EXPIRES },
  { name: 'request --max-files', args: ['request', ...OFFLINE], refused: ['0', 'three'], range: LINK_COUNT },
  { name: 'request --max-bytes', args: ['request', ...OFFLINE], refused: ['0', '2PiB', 'lots'], range: LINK_BYTES },
  { name: 'request --max-file-size', args: ['request', ...OFFLINE], refused: ['0', '-5MiB'], range: LINK_BYTES },
  { name: 'requests --limit', args: ['requests', ...OFFLINE], refused: ['0', 'all'], range: /takes a whole number from 1 to 100000/ },
];

/** What a value of each numeric setting cannot be (config.ts). */
const SETTING_VALUES: Record<string, string[]> = {
  port: ['65536', 'http'],
  'max-file-size': ['0'],
  'upload-chunk-size': ['512KiB'],
  'direct-link-ttl': ['forever'],
  'upload-volume-free': ['0'],
  'upload-volume-premium': ['lots'],
  'login-attempts': ['0'],
  'api-rate-per-key': ['-1'],
  'api-rate-per-ip': ['1.5'],
  'free-download-speed': ['0'],
  'free-downloads-per-ip': ['many'],
  'gc-interval': ['-1h'],
  'temp-grace': ['59s'],
  'upload-expiry': ['30s'],
  'expire-after-days': ['-7'],
  'headers-timeout': ['500ms'],
  'shutdown-grace': ['soon'],
  'idle-timeout': ['0'],
  'max-connections-per-ip': ['-1'],
  'database-pool-size': ['1001'],
  'database-pool-wait': ['0s'],
  's3-part-size': ['4MiB'],
  's3-queue-size': ['17'],
  'share-max-expiry': ['0s'],
  'file-expiry-default': ['forever'],
  'file-expiry-max': ['-1d'],
};

/** A setting is numeric when what it expects is a number, a size, a duration or bytes. */
const numericSettings = SETTINGS.filter((s) => /number|size|duration|bytes/.test(s.expected));
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The settings, on the command line of an operator command; `migrate` names its target with --to-*. */
const SETTING_CASES: Case[] = [
  ...numericSettings.map((s) => ({
    name: `--${s.flag}`,
    args: ['stats', ...NOWHERE],
    refused: SETTING_VALUES[s.flag] ?? [],
    range: new RegExp(`: expected ${escapeRegExp(s.expected)}$`),
  })),
  ...numericSettings
    .filter((s) => s.key.startsWith('database') || s.key.startsWith('s3'))
    .map((s) => ({
      name: `migrate --to-${s.flag}`,
      args: ['migrate', ...NOWHERE],
      refused: (SETTING_VALUES[s.flag] ?? []).slice(0, 1),
      range: new RegExp(`: expected ${escapeRegExp(s.expected)}$`),
    })),
];

describe('every numeric flag names its range when it refuses a value', () => {
  test('the table holds every numeric flag of the catalogue and every numeric setting', () => {
    const numeric = everyFlag().filter(({ flag }) => flag.range !== undefined);
    assert.deepEqual(
      numeric.map(({ command, sub, flag }) => [command, sub, `--${flag.name}`].filter(Boolean).join(' ')).sort(),
      COMMAND_CASES.map((c) => c.name).sort(),
    );
    // A flag whose value is a number (N, not --name N), days, a size or an amount says which ones it takes.
    for (const { command, sub, flag } of everyFlag()) {
      if (['D', 'SIZE', 'AMOUNT'].includes(flag.value ?? '') || (flag.value === 'N' && flag.name !== 'name'))
        assert.ok(flag.range, `${command} ${sub ?? ''} --${flag.name} has no range`);
    }
    for (const s of numericSettings) {
      assert.ok(SETTING_VALUES[s.flag]?.length, `no refused value for --${s.flag}`);
      // The range itself: a bound, not only an example.
      assert.match(s.expected, /\d/, `--${s.flag}: "${s.expected}"`);
    }
    assert.deepEqual(Object.keys(SETTING_VALUES).sort(), numericSettings.map((s) => s.flag).sort());
  });

  describe('refusals', { concurrency: 4 }, () => {
    for (const c of [...COMMAND_CASES, ...SETTING_CASES]) {
      const flag = c.name.split(' ').at(-1)!;
      for (const value of c.refused) {
        test(`${c.name} ${value}`, async () => {
          // `--flag=value`, as parseArgs takes a value that starts with a dash too.
          const result = await runCli([...c.args, `${flag}=${value}`]);
          const command = c.args[0]!;
          assertFails(result, 2, new RegExp(`^filehaven ${command}: (invalid )?${escapeRegExp(flag)}[ "]`));
          const message = result.stderr.split('\n')[0]!;
          assert.match(message, c.range);
          assert.ok(message.includes(`"${value}"`), `the value given: ${message}`);
        });
      }
    }
  });

  test('serve refuses its port the same way, before it opens anything', async () => {
    const result = await runCli(['serve', '--port', '70000', ...NOWHERE]);
    assertFails(result, 2, /^filehaven serve: invalid --port "70000": expected a port number 0-65535$/);
  });
});
