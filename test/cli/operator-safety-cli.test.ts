import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { TEST_BACKEND } from '../helpers/backend.js';
import { Browser } from '../helpers/browser.js';
import { assertFails, assertOk, createSite, runCli, runCliWithInput } from '../helpers/cli.js';
import { startTestServer } from '../helpers/server.js';
import { ServerProcess } from '../helpers/server-process.js';

// Issue 12, the operator's CLI: bounded numbers, readers that survive a date no page can
// show, premium that can be shortened and ended, a first start that cannot listen, and
// commands that refuse a data folder that is not a site's.

const DAY_MS = 86_400_000;
const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-safety-'));
  tempDirs.push(dir);
  return dir;
}
after(() => Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function site(): Promise<string> {
  const data = await tempDir();
  await createSite(data);
  return data;
}

describe('operator safety', { concurrency: 2, timeout: 180_000 }, () => {
  test('numbers are bounded with clear messages; nothing out of range is written', async () => {
    const data = await site();
    const create = (...args: string[]) =>
      runCliWithInput(['accounts', 'create', '--login', 'ada', '--password-stdin', '--data', data, ...args], 'correct horse\n');
    assertFails(
      await create('--premium-days', '99999999'),
      2,
      /^filehaven accounts: --premium-days takes 0 to 36500 days \(such as 30 or 0\.5\), got "99999999"$/,
    );
    assertFails(await create('--traffic', '2048TiB'), 2, /--traffic takes a size from 0 to 1 PiB \(such as 500MB or 2GiB\), got "2048TiB"/);
    assertFails(await create('--traffic', '10XB'), 2, /^filehaven accounts: --traffic takes a size from 0 to 1 PiB \(such as 500MB or 2GiB\), got "10XB"$/);
    assertFails(await create('--premium-days', '-5'), 2, /--premium-days takes 0 to 36500 days \(such as 30 or 0\.5\), got "-5"/);
    // Nothing was created by the refusals, and the listing works.
    assert.deepEqual(JSON.parse(assertOk(await runCli(['accounts', 'list', '--json', '--data', data]))), []);

    assertOk(await create('--premium-days', '36500', '--traffic', '1GiB'));
    assertFails(await runCli(['accounts', 'premium', '--login', 'ada', '--days', '1', '--data', data]), 1, /would end more than 36500 days from now/);
    assertFails(
      await runCli(['accounts', 'premium', '--login', 'ada', '--days', '36501', '--data', data]),
      2,
      /--days takes -36500 to 36500 days \(such as 30 or -10\), got "36501"/,
    );
    assertFails(await runCli(['accounts', 'premium', '--login', 'ada', '--traffic', '1024TiB', '--data', data]), 1, /traffic of "ada" would exceed 1 PiB/);
    const [ada] = JSON.parse(assertOk(await runCli(['accounts', 'list', '--json', '--data', data])));
    assert.equal(ada.trafficLeft, 1024 ** 3, 'the refused top-up was rolled back');
  });

  test('premium: negative days shorten, --end ends now, both audited; shortening an inactive period is refused', async () => {
    const data = await site();
    assertOk(await runCliWithInput(['accounts', 'create', '--login', 'bob', '--password-stdin', '--premium-days', '30', '--data', data], 'correct horse\n'));
    const listed = async () => JSON.parse(assertOk(await runCli(['accounts', 'list', '--json', '--data', data])))[0];
    const before = await listed();
    const shortened = JSON.parse(assertOk(await runCli(['accounts', 'premium', '--login', 'bob', '--days', '-10', '--json', '--data', data])));
    assert.equal(Date.parse(`${before.premiumEnd}Z`) - Date.parse(`${shortened.premiumEnd}Z`), 10 * DAY_MS);
    assert.equal(shortened.premium, 'Active');

    assert.match(
      assertOk(await runCli(['accounts', 'premium', '--login', 'bob', '--end', '--data', data])),
      /^bob: premium Expired \(ended \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/,
    );
    assert.equal((await listed()).premium, 'Expired');
    assert.match(
      assertOk(await runCli(['accounts', 'premium', '--login', 'bob', '--end', '--data', data])),
      /premium was not active \(Expired\); nothing changed/,
    );
    assertFails(
      await runCli(['accounts', 'premium', '--login', 'bob', '--days', '-1', '--data', data]),
      1,
      /premium of "bob" is not active: there is nothing to shorten/,
    );
    assertFails(await runCli(['accounts', 'premium', '--login', 'bob', '--days', '3', '--end', '--data', data]), 2, /give --days D or --end, not both/);

    const audit = JSON.parse(assertOk(await runCli(['audit', '--json', '--action', 'accounts.premium', '--data', data]))) as Array<{ details: string }>;
    assert.deepEqual(
      audit.map((e) => e.details.split(';')[0]),
      ['end traffic=0', 'days=-10 traffic=0'],
    );
  });

  test('a stored premium end past year 9999: accounts list, GET /account and the profile show it clamped, and --end repairs it', {
    skip: TEST_BACKEND !== 'sqlite-local' && 'writes the SQLite file directly',
  }, async () => {
    const t = await startTestServer();
    try {
      const user = await t.account({ premiumDays: 30 });
      const other = await t.account();
      // What `--premium-days 99999999` wrote before the bound: a date toISOString cannot write.
      const db = new SQLite(path.join(t.dataDir, 'filehaven.db'));
      try {
        db.prepare('UPDATE accounts SET premium_end = ? WHERE id = ?').run(t.server.services.clock() + 99_999_999 * DAY_MS, user.account.id);
      } finally {
        db.close();
      }
      const list = await runCli(['accounts', 'list', '--data', t.dataDir]);
      const out = assertOk(list);
      assert.match(out, new RegExp(`\\n${user.account.id} +${user.login} +Active +9999-12-31 23:59:59 `));
      assert.match(out, new RegExp(`\\n${other.account.id} +${other.login} +None `), 'every other account is listed too');

      const account = await t.fetch('/account', { headers: { Authorization: user.key } });
      const body = await account.text();
      assert.equal(account.status, 200, body);
      assert.match(body, /<ed:premium_end>9999-12-31 23:59:59<\/ed:premium_end>/);

      const browser = new Browser(t.url);
      await browser.signIn(user.login, user.password);
      const profile = await browser.get('/accounts/profile/misc');
      assert.equal(profile.status, 200, profile.body);
      assert.match(profile.body, /until 9999-12-31 23:59 UTC/);

      // The operator can repair it.
      assertOk(await runCli(['accounts', 'premium', '--login', user.login, '--end', '--data', t.dataDir]));
      const [fixed] = (
        JSON.parse(assertOk(await runCli(['accounts', 'list', '--json', '--data', t.dataDir]))) as Array<{ login: string; premium: string }>
      ).filter((a) => a.login === user.login);
      assert.equal(fixed!.premium, 'Expired');
    } finally {
      await t.close();
    }
  });

  test('a first serve whose port is taken fails clearly and creates no admin; the next start shows the password, which works', async () => {
    const data = await tempDir();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    let closed = false;
    try {
      const failed = await runCli(['serve', '--data', data, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'silent']);
      assertFails(failed, 1, /^filehaven serve: cannot listen: .*EADDRINUSE/);
      assert.doesNotMatch(failed.stdout, /password/);
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
      closed = true;
      const server = await ServerProcess.start(data, ['--port', String(port), '--log-level', 'silent']);
      try {
        assert.match(server.log, /shown only once/);
        const password = /password: (\S+)/.exec(server.log)?.[1];
        assert.ok(password, server.log);
        const key = await fetch(`${server.url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'admin', password }) });
        assert.equal(key.status, 201, await key.text());
      } finally {
        await server.stop();
      }
    } finally {
      if (!closed) blocker.close();
    }
  });

  test("commands other than serve refuse a data folder that is not a site's, and create nothing", async () => {
    const root = await tempDir();
    const missing = path.join(root, 'typo');
    for (const args of [['stats'], ['accounts', 'list'], ['audit'], ['gc'], ['reservations'], ['files', 'list'], ['blacklist', 'list']]) {
      assertFails(
        await runCli([...args, '--data', missing]),
        1,
        new RegExp(
          `^filehaven ${args[0]}: no data folder at .*typo \\(--data, FILEHAVEN_DATA\\): give the folder 'filehaven serve' uses; only serve and init create one$`,
        ),
      );
    }
    assert.equal(existsSync(missing), false);
    const empty = path.join(root, 'empty');
    await mkdir(empty);
    assertFails(
      await runCli(['accounts', 'create', '--login', 'x', '--password', 'long enough', '--data', empty]),
      1,
      /empty \(--data, FILEHAVEN_DATA\) is not a filehaven data folder: it holds no filehaven\.db/,
    );
    assert.deepEqual(await readdir(empty), []);
    assertFails(await runCli(['migrate', '--data', missing, '--to-database-url', 'postgres://x@127.0.0.1:1/y']), 1, /^filehaven migrate: no data folder at /);
    assert.equal(existsSync(missing), false);

    // On PostgreSQL with --secret and S3 the data folder holds nothing and need not exist:
    // the command goes on to the database (unreachable here) instead of refusing the folder.
    const remote = ['--database-url', 'postgres://filehaven@127.0.0.1:1/site', '--secret', 'a secret of enough length', '--s3-bucket', 'fh-bucket'];
    assertFails(await runCli(['stats', '--data', missing, ...remote]), 1, /cannot use PostgreSQL at/);
    assert.equal(existsSync(missing), false, 'not created either');
    // Without --secret, the folder must hold the site's secret.
    assertFails(await runCli(['stats', '--data', empty, ...remote.slice(0, 2)]), 1, /is not this site's data folder: it holds no secret, and no --secret/);

    // On SQLite too: a site whose server runs with --secret has no secret file, and a
    // command run without --secret must not write a new one beside its database.
    const sealed = await site();
    await rm(path.join(sealed, 'secret'));
    assertFails(
      await runCli(['accounts', 'regenerate-key', '--login', 'nobody', '--data', sealed]),
      1,
      /is not this site's data folder: it holds no secret, and no --secret/,
    );
    assert.equal(existsSync(path.join(sealed, 'secret')), false, 'no secret written');
  });

  test('--password-stdin: set-password takes the first line of standard input; an empty one is refused', async () => {
    const data = await site();
    assertOk(await runCliWithInput(['accounts', 'create', '--login', 'cy', '--password-stdin', '--data', data], 'first password\nignored second line\n'));
    assertOk(await runCliWithInput(['accounts', 'set-password', '--login', 'cy', '--password-stdin', '--data', data], 'second password\r\n'));
    assertFails(
      await runCliWithInput(['accounts', 'set-password', '--login', 'cy', '--password-stdin', '--data', data], ''),
      2,
      /--password-stdin: no password on standard input/,
    );
    assertFails(
      await runCli(['accounts', 'set-password', '--login', 'cy', '--password', 'x1234567', '--password-stdin', '--data', data]),
      2,
      /give --password or --password-stdin, not both/,
    );
    const { loadConfig } = await import('../../src/config/config.js');
    const { openServices } = await import('../../src/composition.js');
    const services = await openServices(loadConfig({ data }, {}), { log: () => {} });
    try {
      assert.equal((await services.accounts.authenticate('cy', 'second password')).login, 'cy');
    } finally {
      await services.close();
    }
  });
});
