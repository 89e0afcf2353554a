// The sharing commands (issue 25: share, shares, unshare, request, requests,
// close-request, expire, upload --expires) as a person or a script runs them: the real
// `filehaven` process against a real server, --json parsed, exit codes checked.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { FilehavenClient } from '../../src/client/index.js';
import { assertFails, type CliResult, cleanEnv, filehavenEntry, outcomeOf } from '../helpers/cli.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';
import type { ParsedDocument } from '../helpers/xml.js';

const clock = new TestClock();
let t: TestServer;
let ada: TestAccount;
let bob: TestAccount;
let work: string;
before(async () => {
  t = await startTestServer({}, clock);
  ada = await t.account();
  bob = await t.account();
  work = await mkdtemp(path.join(tmpdir(), 'filehaven-cli-sharing-'));
});
after(async () => {
  await t.close();
  await rm(work, { recursive: true, force: true });
});

/** Runs `filehaven <args>` as `account` (FILEHAVEN_SERVER and FILEHAVEN_KEY, as scripts do), `stdin` given. */
function run(args: string[], account: TestAccount = ada, stdin = ''): Promise<CliResult> {
  const home = path.join(work, 'home');
  const child = spawn(process.execPath, [filehavenEntry(), ...args], {
    cwd: work,
    env: cleanEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: account.key }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const outcome = outcomeOf(child);
  child.stdin.end(stdin);
  return outcome;
}

/** Runs `filehaven <args>` with nothing stored and no key: someone who only has a link. */
function spawnCli(args: string[], stdin = ''): Promise<CliResult> {
  const home = path.join(work, 'stranger-home');
  const child = spawn(process.execPath, [filehavenEntry(), ...args], {
    cwd: work,
    env: cleanEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const outcome = outcomeOf(child);
  child.stdin.end(stdin);
  return outcome;
}

/** A successful --json run: exit 0, nothing on stderr; its document. */
async function json(args: string[], account: TestAccount = ada, stdin = ''): Promise<ParsedDocument> {
  const result = await run([...args, '--json'], account, stdin);
  assert.equal(result.code, 0, `exit code; stderr: ${result.stderr}`);
  assert.equal(result.stderr, '');
  return JSON.parse(result.stdout);
}

/** A failed --json run: the exit code, one line on stderr, the error document. */
async function jsonFailure(args: string[], code: number, account: TestAccount = ada): Promise<{ code: string; status?: number; stderr: string }> {
  const result = await run([...args, '--json'], account);
  assert.equal(result.code, code, `exit code; stdout: ${result.stdout} stderr: ${result.stderr}`);
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /^\s+at /m);
  return { ...JSON.parse(result.stdout).error, stderr: result.stderr };
}

/** The API's date format of the test clock plus `seconds`. */
const inSeconds = (seconds: number) =>
  new Date(clock.now + seconds * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '');

async function text(body: Readable): Promise<string> {
  let all = '';
  for await (const chunk of body) all += (chunk as Buffer).toString('utf8');
  return all;
}

async function localFile(name: string, content: string): Promise<string> {
  const file = path.join(work, name);
  await writeFile(file, content);
  return file;
}

describe('shares from the terminal', () => {
  test('share prints the link; --expires, --password-stdin, --max-downloads, --fast; shares lists it; unshare revokes it', async () => {
    const uploaded = await json(['upload', await localFile('notes & more.txt', 'shared notes')]);
    const id = uploaded.files[0].id as string;
    const plain = await run(['share', id]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, new RegExp(`^${t.url.replace(/[.:/]/g, '\\$&')}/s/[0-9A-Za-z]{22}\\n$`));
    // A second later: shares of the same second have no order to test.
    clock.advance(1000);

    const share = await json(['share', id, '--expires', '7d', '--max-downloads', '3', '--password-stdin'], ada, 'correct horse\nignored line\n');
    assert.deepEqual(share, {
      id: share.id,
      name: 'notes & more.txt',
      link: `${t.url}/s/${share.id}`,
      target: id,
      expires: inSeconds(7 * 86400),
      maxDownloads: 3,
      downloads: 0,
      protected: true,
      fast: false,
    });
    // The password from stdin is the share's: the first line, without its line break.
    const anyone = new FilehavenClient({ server: t.url });
    assert.equal(await text((await anyone.downloadShare(share.link, { password: 'correct horse' })).body), 'shared notes');

    const listed = await json(['shares']);
    assert.deepEqual(listed.shares[0], { ...share, downloads: 1 });
    assert.equal(listed.shares.length, 2);
    assert.equal(listed.more, false);
    const table = await run(['shares']);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID\s+LINK\s+EXPIRES\s+DOWNLOADS\s+PASSWORD\s+NAME$/);
    assert.match(lines[1]!, new RegExp(`^${share.id}\\s+\\S+/s/${share.id}\\s+${inSeconds(7 * 86400)}\\s+1/3\\s+yes\\s+notes & more\\.txt$`));
    assert.match(lines[2]!, /\s+never\s+0\/unlimited\s+no\s+notes & more\.txt$/);

    const revoked = await run(['unshare', share.id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout, `revoked ${share.id} (notes & more.txt)\n`);
    assert.equal((await json(['shares'])).shares.length, 1);
    const again = await jsonFailure(['unshare', share.id], 1);
    assert.deepEqual([again.code, again.status], ['errorShareNotFound', 404]);
    assert.match(again.stderr, /^filehaven unshare: errorShareNotFound: /);
  });

  test('share --folder shares a folder; --fast is sent; a file of another account is errorPermissionDenied', async () => {
    const folder = await json(['mkdir', 'Shared folder']);
    const share = await json(['share', folder.id, '--folder', '--fast']);
    assert.deepEqual([share.name, share.target, share.fast], ['Shared folder', folder.id, true]);
    const other = await json(['upload', await localFile('bobs.txt', 'bob')], bob);
    const theirs = await jsonFailure(['share', other.files[0].id], 1);
    assert.deepEqual([theirs.code, theirs.status], ['errorPermissionDenied', 403]);
  });

  test('download takes a share link: the password from stdin, no key, one download counted; a wrong one exits 1', async () => {
    const content = 'bytes behind a password';
    const uploaded = await json(['upload', await localFile('guarded.txt', content)]);
    const share = await json(['share', uploaded.files[0].id, '--password-stdin', '--max-downloads', '2'], ada, 'let me in\n');
    const out = path.join(work, 'from-share');
    await mkdir(out);
    // Someone with the link only: no server stored, no key in the environment.
    const stranger = spawnCli(['download', share.link, '-o', `${out}/`, '--password-stdin', '--json'], 'let me in\n');
    const result = await stranger;
    assert.equal(result.code, 0, result.stderr);
    const saved = JSON.parse(result.stdout);
    assert.deepEqual(saved, { id: share.id, name: 'guarded.txt', file: path.join(out, 'guarded.txt'), size: content.length, resumedFrom: 0, direct: false });
    assert.equal(await readFile(saved.file, 'utf8'), content);
    assert.equal((await json(['shares'])).shares.find((s: { id: string }) => s.id === share.id).downloads, 1, 'the HEAD before is not a download');
    const wrong = await spawnCli(['download', share.link, '-o', `${out}/again.txt`, '--password-stdin'], 'guess\n');
    assert.equal(wrong.code, 1, `a wrong share password is no sign-in problem: ${wrong.stderr}`);
    assert.match(wrong.stderr, /^filehaven download: errorSharePassword: /);
    assertFails(await run(['download', 'K7Q2M9X4PA', '--password-stdin']), 2, /^filehaven download: --password-stdin is for share links/);
  });

  test('usage mistakes exit 2 before anything is sent', async () => {
    for (const [args, message] of [
      [['share'], /^filehaven share: share takes exactly one file id$/],
      [['share', 'A', 'B'], /^filehaven share: share takes exactly one file id$/],
      [['share', '../etc'], /^filehaven share: not a file id: "\.\.\/etc"$/],
      [['share', 'ABC', '--expires', 'soon'], /^filehaven share: --expires takes a duration from 1s to 100 years/],
      [['share', 'ABC', '--password-stdin'], /^filehaven share: --password-stdin: no password on standard input$/],
      [['shares', 'extra'], /^filehaven shares: shares takes no arguments besides flags, got "extra"$/],
      [['unshare'], /^filehaven unshare: unshare takes exactly one share id$/],
      [['request', '--folder', 'a/b'], /^filehaven request: --folder expects a folder id, got "a\/b"$/],
      [['request', '--max-bytes', 'lots'], /^filehaven request: --max-bytes takes a size from 1 byte to 1PiB/],
      [['close-request'], /^filehaven close-request: close-request takes exactly one request id$/],
      [['expire', 'ABC'], /^filehaven expire: expire takes a file id and a duration \(such as 7d\) or never$/],
      [
        ['expire', 'ABC', 'tomorrow'],
        /^filehaven expire: expire takes a duration from 1s to 100 years \(36500d\) \(such as 7d, 12h or 30m\) or never, got "tomorrow"$/,
      ],
      [['upload', 'x', '--expires', '0'], /^filehaven upload: --expires takes a duration from 1s to 100 years/],
    ] as Array<[string[], RegExp]>) {
      assertFails(await run(args), 2, message);
    }
  });
});

describe('upload requests from the terminal', () => {
  test('request prints the link with every limit; requests lists it; close-request closes it and its files stay', async () => {
    const folder = await json(['mkdir', 'Drop box']);
    const plain = await run(['request', '--folder', folder.id]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /\/r\/[0-9A-Za-z]{22}\n$/);

    const request = await json(
      [
        'request',
        '--folder',
        folder.id,
        '--title',
        'Your photos',
        '--message',
        'Max 2, please',
        '--expires',
        '12h',
        '--password-stdin',
        '--max-files',
        '2',
        '--max-bytes',
        '1GiB',
        '--max-file-size',
        '100MiB',
      ],
      ada,
      'drop here\n',
    );
    assert.deepEqual(request, {
      id: request.id,
      title: 'Your photos',
      link: `${t.url}/r/${request.id}`,
      folderId: folder.id,
      expires: inSeconds(12 * 3600),
      maxFiles: 2,
      files: 0,
      maxBytes: 1024 ** 3,
      bytes: 0,
      protected: true,
      maxFileSize: 100 * 1024 ** 2,
      message: 'Max 2, please',
    });
    const anyone = new FilehavenClient({ server: t.url });
    const sent = await anyone.uploadToRequest(request.link, new Blob(['a photo']), { name: 'photo.jpg', password: 'drop here' });

    const listed = await json(['requests']);
    // Other tests' requests may share its creation time (a fixed clock): found by id, not by place.
    assert.deepEqual(
      listed.requests.find((listedRequest: { id: string }) => listedRequest.id === request.id),
      { ...request, files: 1, bytes: 7 },
    );
    const table = await run(['requests']);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID\s+LINK\s+EXPIRES\s+FILES\s+BYTES\s+PASSWORD\s+TITLE$/);
    assert.match(
      lines.find((line) => line.startsWith(request.id)) ?? '',
      new RegExp(`^${request.id}\\s+\\S+/r/${request.id}\\s+${inSeconds(12 * 3600)}\\s+1/2\\s+7 B/1\\.00 GiB\\s+yes\\s+Your photos$`),
    );

    const closed = await run(['close-request', request.id]);
    assert.equal(closed.code, 0, closed.stderr);
    assert.equal(closed.stdout, `closed ${request.id} (Your photos)\n`);
    const files = await json(['ls', '--folder', folder.id]);
    assert.deepEqual(
      files.files.map((f: { id: string }) => f.id),
      [sent.id],
    );
    const theirs = await jsonFailure(['close-request', request.id], 1, bob);
    assert.deepEqual([theirs.code, theirs.status], ['errorShareNotFound', 404]);
  });
});

describe('file expiry from the terminal', () => {
  test("upload --expires prints the expiry; expire changes it, or never; another account's file is errorPermissionDenied", async () => {
    const file = await localFile('temporary.txt', 'short-lived');
    const human = await run(['upload', file, '--expires', '2h']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, new RegExp(`^[A-Z0-9]{10}  http://\\S+/temporary\\.txt  \\(expires ${inSeconds(7200)} UTC\\)\\n$`));
    const id = human.stdout.split(' ')[0]!;
    const uploaded = await json(['upload', file, '--expires', '30m', '--no-resume']);
    assert.equal(uploaded.files[0].expires, inSeconds(1800));

    const changed = await run(['expire', id, '1d']);
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal(changed.stdout, `${id} expires ${inSeconds(86400)} UTC\n`);
    assert.deepEqual(await json(['expire', id, 'never']), { id, name: 'temporary.txt', expires: null });
    const never = await run(['expire', id, 'never']);
    assert.equal(never.stdout, `${id} never expires\n`);
    const theirs = await jsonFailure(['expire', id, '1d'], 1, bob);
    assert.deepEqual([theirs.code, theirs.status], ['errorPermissionDenied', 403]);
    const unknown = await jsonFailure(['expire', 'ZZZZZZZZZZ', '1d'], 1);
    assert.deepEqual([unknown.code, unknown.status], ['errorFileNotFound', 404]);
  });
});
