import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openServices, type Services } from '../../src/composition.js';
import { loadConfig } from '../../src/config/config.js';
import type { ApiError } from '../../src/domain/errors.js';
import type { Account, FileRecord } from '../../src/domain/types.js';
import { assertFails, assertOk, runCli } from '../helpers/cli.js';
import { TestClock } from '../helpers/server.js';
import { storeUpload } from '../helpers/store-upload.js';

const ACTOR = `cli:${userInfo().username}`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-opcli-'));
  tempDirs.push(dir);
  return dir;
}
after(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A data folder opened in-process beside the CLI processes, as the server would. */
async function openData(clock?: TestClock): Promise<{ data: string; services: Services }> {
  const data = await tempDir();
  const services = await openServices(loadConfig({ data }, {}), { log: () => {}, clock: clock?.fn });
  return { data, services };
}

async function storeFile(services: Services, owner: Account, name: string, content: string): Promise<FileRecord> {
  return (await storeUpload(services, owner, name, Buffer.from(content))).file;
}

interface AuditJson {
  at: string;
  actor: string;
  action: string;
  object: string;
  details: string;
}

async function auditEntries(data: string, ...args: string[]): Promise<AuditJson[]> {
  return JSON.parse(assertOk(await runCli(['audit', '--json', ...args, '--data', data]))) as AuditJson[];
}

// Groups use separate data folders and run two at a time; steps inside a group run in order.
describe('operator CLI', { concurrency: 2, timeout: 300_000 }, () => {
  describe('account controls', { concurrency: 1 }, () => {
    let data: string;
    let services: Services;
    let key: string;
    const secrets: string[] = [];
    const accounts = (...args: string[]) => runCli(['accounts', ...args, '--data', data]);
    const bob = async () => (await services.accounts.byLoginOrFail('bob'))!;

    before(async () => {
      ({ data, services } = await openData());
      const account = await services.accounts.create({ login: 'bob', password: 'first password' });
      key = await services.accounts.apiKeyFor(account);
      secrets.push('first password', key);
    });
    after(async () => {
      await services?.close();
    });

    test('disable: the key, POST /apikeys credentials and sessions stop working at once; enable restores', async () => {
      assert.match(assertOk(await accounts('disable', '--login', 'bob')), /disabled account "bob"/);
      assert.equal(await services.accounts.accountForApiKey(key), null);
      await assert.rejects(services.accounts.authenticate('bob', 'first password'), (e: ApiError) => e.code === 'errorWrongCredentials');
      assert.equal(await services.accounts.activeAccount((await bob()).id), null, 'the session hook refuses too');
      assert.match(assertOk(await accounts('disable', '--login', 'bob')), /already disabled/);

      assert.match(assertOk(await accounts('enable', '--login', 'bob')), /enabled account "bob"/);
      assert.equal((await services.accounts.accountForApiKey(key))?.login, 'bob');
      assert.equal((await services.accounts.authenticate('bob', 'first password')).login, 'bob');
      assert.equal((await services.accounts.activeAccount((await bob()).id))?.login, 'bob');
    });

    test('regenerate-key prints only the new key; the old one stops working', async () => {
      const out = assertOk(await accounts('regenerate-key', '--login', 'bob'));
      const lines = out.trim().split('\n');
      assert.equal(lines.length, 1, out);
      const fresh = lines[0]!;
      assert.match(fresh, /^[A-Za-z0-9]{32}$/);
      assert.notEqual(fresh, key);
      assert.equal(await services.accounts.accountForApiKey(key), null);
      assert.equal((await services.accounts.accountForApiKey(fresh))?.login, 'bob');
      assert.equal(await services.accounts.apiKeyFor(await bob()), fresh, 'POST /apikeys now returns the new key');
      secrets.push(fresh);
    });

    test('set-password: the old password is refused, the new one works; a weak one is refused', async () => {
      assert.match(assertOk(await accounts('set-password', '--login', 'bob', '--password', 'second password')), /password of "bob" changed/);
      await assert.rejects(services.accounts.authenticate('bob', 'first password'));
      assert.equal((await services.accounts.authenticate('bob', 'second password')).login, 'bob');
      secrets.push('second password');
      assertFails(await accounts('set-password', '--login', 'bob', '--password', 'short'), 1, /password must be at least 8 characters/);
      assert.equal((await services.accounts.authenticate('bob', 'second password')).login, 'bob');
    });

    test('balance --set and --add (negative too) are stored as cents; list --json shows it', async () => {
      assert.match(assertOk(await accounts('balance', '--login', 'bob', '--set', '12.50')), /bob: balance 12\.50 \(was 0\.00\)/);
      assert.equal((await bob()).balanceCents, 1250);
      assert.match(assertOk(await accounts('balance', '--login', 'bob', '--add', '-3')), /balance 9\.50 \(was 12\.50\)/);
      assert.equal((await bob()).balanceCents, 950);
      const listed = JSON.parse(assertOk(await accounts('list', '--json'))) as Array<{ login: string; balance: string }>;
      assert.equal(listed.find((a) => a.login === 'bob')?.balance, '9.50');
    });

    test('bad amounts, a debit below zero and a missing or doubled flag are refused; nothing changes', async () => {
      assertFails(await accounts('balance', '--login', 'bob', '--add', '-10.00'), 1, /balance of "bob" cannot go below 0\.00/);
      assertFails(await accounts('balance', '--login', 'bob', '--set', '1.234'), 2, /--set takes an amount from 0\.00 to 9999999999999\.99 .*"1\.234"/);
      assertFails(await accounts('balance', '--login', 'bob', '--set', '-1.00'), 2, /--set takes an amount from 0\.00 to 9999999999999\.99 .*"-1\.00"/);
      assertFails(await accounts('balance', '--login', 'bob', '--set', '1', '--add', '1'), 2, /exactly one of --set AMOUNT and --add AMOUNT/);
      assert.equal((await bob()).balanceCents, 950);
    });

    test('unknown logins, missing --login and flags of other commands are refused clearly', async () => {
      assertFails(await accounts('disable', '--login', 'nobody'), 1, /no account with login "nobody"/);
      assertFails(await accounts('regenerate-key'), 2, /--login is required/);
      assertFails(await accounts('enable', '--login', 'bob', '--password', 'x'), 2, /--password/);
    });

    test('the audit log holds every change, newest first, by the CLI user, without passwords or keys', async () => {
      // premium and create are audited too.
      assertOk(await accounts('premium', '--login', 'bob', '--days', '5'));
      assertOk(await accounts('create', '--login', 'carol', '--password', 'carol password'));
      secrets.push('carol password');
      const entries = await auditEntries(data, '--action', 'accounts.');
      assert.deepEqual(
        entries.map((e) => e.action),
        [
          'accounts.create',
          'accounts.premium',
          'accounts.balance',
          'accounts.balance',
          'accounts.set-password',
          'accounts.regenerate-key',
          'accounts.enable',
          'accounts.disable',
        ],
        'failed or no-op commands are not recorded',
      );
      assert.ok(
        entries.every((e) => e.actor === ACTOR),
        JSON.stringify(entries),
      );
      assert.equal(entries[0]!.object, 'account:carol');
      assert.ok(entries.slice(1).every((e) => e.object === 'account:bob'));
      assert.match(entries[2]!.details, /add -3\.00: 12\.50 -> 9\.50/);
      assert.match(entries[0]!.at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const text = JSON.stringify(entries);
      for (const secret of secrets) assert.ok(!text.includes(secret), `the audit log holds a secret: ${secret}`);

      // Text form: a header, then one aligned row per entry; --limit and a prefix filter.
      const rows = assertOk(await runCli(['audit', '--limit', '2', '--action', 'accounts.bal', '--data', data]))
        .trim()
        .split('\n');
      assert.equal(rows.length, 3, rows.join('\n'));
      assert.match(rows[0]!, /^AT \(UTC\) +ACTOR +ACTION +OBJECT +DETAILS$/);
      assert.match(rows[1]!, new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +${ACTOR} +accounts\\.balance +account:bob +add -3\\.00`));
    });

    test('sign-out ends every web session of the account, audited; its API key keeps working', async () => {
      const id = (await bob()).id;
      const apiKey = await services.accounts.apiKeyFor(await bob());
      const first = await services.sessions.start(id);
      const second = await services.sessions.start(id);
      assert.match(assertOk(await accounts('sign-out', '--login', 'bob')), /^ended 2 web sessions of "bob"; its API key still works$/m);
      assert.equal(await services.sessions.resume(first.token), null);
      assert.equal(await services.sessions.resume(second.token), null);
      assert.equal((await services.accounts.accountForApiKey(apiKey))?.login, 'bob');
      const [entry] = await auditEntries(data, '--action', 'accounts.sign-out');
      assert.equal(entry?.object, 'account:bob');
      assert.match(entry!.details, /sessions=2/);
    });
  });

  describe('files list and info', { concurrency: 1 }, () => {
    let data: string;
    let services: Services;
    let oldest: FileRecord;
    let middle: FileRecord;
    let newest: FileRecord;
    const clock = new TestClock();
    const files = (...args: string[]) => runCli(['files', ...args, '--data', data]);

    before(async () => {
      ({ data, services } = await openData(clock));
      const alice = await services.accounts.create({ login: 'alice', password: 'alice password' });
      const dave = await services.accounts.create({ login: 'dave', password: 'dave password' });
      oldest = await storeFile(services, alice, 'a.txt', 'first');
      clock.advance(60_000);
      middle = await storeFile(services, dave, 'b.txt', 'second');
      clock.advance(60_000);
      newest = await storeFile(services, alice, 'report 2026.pdf', 'third');
      const folder = await services.store.folders.create({ id: 'FOLDER0001', ownerId: alice.id, parentId: null, name: 'Reports', createdAt: clock.now });
      await services.store.files.moveOwned([newest.id], alice.id, folder.id);
      await services.store.files.recordDownload(newest.id, clock.now);
      await services.files.block(oldest.id);
    });
    after(async () => {
      await services?.close();
    });

    test('list --json: every file newest first, with owner login and status', async () => {
      const listed = JSON.parse(assertOk(await files('list', '--json'))) as Array<Record<string, unknown>>;
      assert.deepEqual(
        listed.map((f) => f.id),
        [newest.id, middle.id, oldest.id],
      );
      assert.deepEqual(
        listed.map((f) => f.ownerLogin),
        ['alice', 'dave', 'alice'],
      );
      assert.deepEqual(
        listed.map((f) => f.status),
        ['A', 'A', 'B'],
      );
      assert.equal(listed[0]!.name, 'report 2026.pdf');
      assert.equal(listed[0]!.sha256, newest.sha256);
      assert.equal(listed[0]!.created, '2026-11-21 10:06:05');
    });

    test('list filters by --login and --status and honours --limit; text form is a table', async () => {
      const mine = JSON.parse(assertOk(await files('list', '--login', 'alice', '--status', 'B', '--json'))) as Array<{ id: string }>;
      assert.deepEqual(
        mine.map((f) => f.id),
        [oldest.id],
      );
      const rows = assertOk(await files('list', '--status', 'a,b', '--limit', '1'))
        .trim()
        .split('\n');
      assert.equal(rows.length, 2, rows.join('\n'));
      assert.match(rows[0]!, /^ID +STATUS +SIZE +CREATED \(UTC\) +OWNER +DOWNLOADS +NAME$/);
      // The size for people (5 B); --json keeps the bytes.
      assert.match(rows[1]!, new RegExp(`^${newest.id} +A +5 B +2026-11-21 10:06:05 +alice +1 +report 2026\\.pdf$`));
    });

    test('list --before pages on from the last file of the page before; an unknown id is refused', async () => {
      const page = async (...args: string[]) =>
        (JSON.parse(assertOk(await files('list', '--limit', '1', ...args, '--json'))) as Array<{ id: string }>).map((f) => f.id);
      assert.deepEqual(await page('--before', newest.id), [middle.id]);
      assert.deepEqual(await page('--status', 'A,B', '--before', middle.id), [oldest.id]);
      assert.deepEqual(await page('--before', oldest.id), []);
      assertFails(await files('list', '--before', 'ZZZZZZZZZZ'), 1, /no file with id "ZZZZZZZZZZ"/);
    });

    test('info shows owner, digest, size, status, dates, downloads and folder', async () => {
      const info = JSON.parse(assertOk(await files('info', newest.id, '--json')));
      assert.deepEqual(
        { ...info, lastDownload: typeof info.lastDownload },
        {
          id: newest.id,
          name: 'report 2026.pdf',
          ownerId: newest.ownerId,
          ownerLogin: 'alice',
          status: 'A',
          size: 5,
          sha256: newest.sha256,
          created: '2026-11-21 10:06:05',
          downloads: 1,
          lastDownload: 'string',
          folderId: 'FOLDER0001',
          folderName: 'Reports',
        },
      );
      const text = assertOk(await files('info', oldest.id));
      assert.match(text, /^owner: +alice \(account \d+\)$/m);
      assert.match(text, /^status: +B \(blocked\)$/m);
      assert.match(text, new RegExp(`^sha256: +${oldest.sha256}$`, 'm'));
      assert.match(text, /^last download: +-$/m);
      assert.match(text, /^folder: +- \(root\)$/m);
    });

    test('bad filters and unknown ids are refused with one clear line', async () => {
      assertFails(await files('list', '--login', 'nobody'), 1, /no account with login "nobody"/);
      assertFails(await files('list', '--status', 'X'), 2, /--status expects A, B or D/);
      assertFails(await files('list', '--limit', '0'), 2, /--limit takes a whole number from 1 to 10000/);
      assertFails(await files('info'), 2, /files info takes exactly one file id/);
      assertFails(await files('info', 'ZZZZZZZZZZ'), 1, /no file with id "ZZZZZZZZZZ"/);
    });

    test('block, unblock and delete are audited with the file as object', async () => {
      assertOk(await files('unblock', oldest.id));
      assertOk(await files('delete', middle.id));
      const entries = await auditEntries(data, '--action', 'files.');
      assert.deepEqual(
        entries.map((e) => [e.action, e.object, e.actor]),
        [
          ['files.delete', `file:${middle.id}`, ACTOR],
          ['files.unblock', `file:${oldest.id}`, ACTOR],
        ],
      );
      assert.match(entries[0]!.details, /"b\.txt"/);
    });
  });

  describe('blacklist by name and --block-existing', { concurrency: 1 }, () => {
    let data: string;
    let services: Services;
    let owner: Account;
    const blacklist = (...args: string[]) => runCli(['blacklist', ...args, '--data', data]);
    const refused = async (name: string, content = `content of ${name}`) => {
      await assert.rejects(storeFile(services, owner, name, content), (e: ApiError) => e.code === 'errorFileInBlackList', name);
    };

    before(async () => {
      ({ data, services } = await openData());
      owner = await services.accounts.create({ login: 'owner', password: 'owner password' });
    });
    after(async () => {
      await services?.close();
    });

    test('add-name stores patterns in lower case; uploads whose whole name matches are refused, nothing kept', async () => {
      assert.match(assertOk(await blacklist('add-name', '*.EXE', '--reason', 'executables')), /added name pattern \*\.exe/);
      assertOk(await blacklist('add-name', 'cracked-?ame*'));
      await refused('Setup.Exe', 'installer bytes');
      await refused('CRACKED-Game.zip');
      assert.equal(await services.blobs.has(sha256('installer bytes')), false);
      assert.deepEqual(await services.store.files.list({ limit: 10 }), []);
      // Whole-name matches only.
      assert.equal((await storeFile(services, owner, 'setup.exe.txt', 'x')).name, 'setup.exe.txt');
      assert.equal((await storeFile(services, owner, 'my-cracked-game.zip', 'y')).name, 'my-cracked-game.zip');
    });

    test('list shows digests, then patterns; --json both', async () => {
      const digest = 'cd'.repeat(32);
      assertOk(await blacklist('add', digest, '--reason', 'known bad'));
      const rows = assertOk(await blacklist('list'))
        .replace(/\n$/, '')
        .split('\n');
      assert.equal(rows.length, 3, rows.join('\n'));
      assert.match(rows[0]!, new RegExp(`^${digest}\\t.+\\tknown bad$`));
      assert.match(rows[1]!, /^name:\*\.exe\t.+\texecutables$/);
      assert.match(rows[2]!, /^name:cracked-\?ame\*\t.+\t$/);
      const json = JSON.parse(assertOk(await blacklist('list', '--json')));
      assert.deepEqual(
        json.digests.map((d: { sha256: string }) => d.sha256),
        [digest],
      );
      assert.deepEqual(
        json.names.map((n: { pattern: string; reason: string }) => [n.pattern, n.reason]),
        [
          ['*.exe', 'executables'],
          ['cracked-?ame*', ''],
        ],
      );
    });

    test('remove-name (any case) lets the name through again; a second remove says it is not listed', async () => {
      assert.match(assertOk(await blacklist('remove-name', '*.Exe')), /removed name pattern \*\.exe/);
      assert.equal((await storeFile(services, owner, 'Setup.Exe', 'installer bytes')).name, 'Setup.Exe');
      assertFails(await blacklist('remove-name', '*.exe'), 1, /name pattern "\*\.exe" is not in the blacklist/);
    });

    test('a pattern that would match everything, and an unquoted glob, are refused', async () => {
      assertFails(await blacklist('add-name', '*'), 1, /needs at least one character besides \* and \?/);
      assertFails(await blacklist('add-name', 'a.exe', 'b.exe'), 2, /exactly one name pattern \(quote the pattern/);
    });

    test('add --block-existing blocks every active file with the digest and says how many', async () => {
      const other = await services.accounts.create({ login: 'other', password: 'other password' });
      const a = await storeFile(services, owner, 'same.bin', 'same bytes');
      const b = await storeFile(services, other, 'copy.bin', 'same bytes');
      const c = await storeFile(services, other, 'gone.bin', 'same bytes');
      await services.files.operatorDelete(c.id);
      const out = assertOk(await blacklist('add', a.sha256.toUpperCase(), '--block-existing', '--reason', 'abuse report'));
      assert.match(out, /blocked 2 existing files with this digest/);
      for (const [file, status] of [
        [a, 'B'],
        [b, 'B'],
        [c, 'D'],
      ] as const) {
        assert.equal((await services.store.files.byId(file.id))!.status, status, file.name);
      }
      await refused('again.bin', 'same bytes');
    });

    test('every blacklist change is audited', async () => {
      const entries = await auditEntries(data, '--action', 'blacklist');
      assert.deepEqual(
        entries.map((e) => [e.action, e.object]),
        [
          ['blacklist.add', `sha256:${sha256('same bytes')}`],
          ['blacklist.remove-name', 'name:*.exe'],
          ['blacklist.add', `sha256:${'cd'.repeat(32)}`],
          ['blacklist.add-name', 'name:cracked-?ame*'],
          ['blacklist.add-name', 'name:*.exe'],
        ],
      );
      assert.match(entries[0]!.details, /reason: abuse report; blocked 2 existing file\(s\)/);
      assert.ok(entries.every((e) => e.actor === ACTOR));
    });
  });
});
