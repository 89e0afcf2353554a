// The user commands (filehaven login, upload, download, ls, ...) as a person or a script
// runs them: the real `filehaven` process against a real server, --json parsed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CliResult, cleanEnv, filehavenEntry, outcomeOf } from '../helpers/cli.js';
import { randomPayload, sha256, trafficLeft } from '../helpers/downloads.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';
import { pacedRelay } from '../helpers/tcp-cut.js';
import type { ParsedDocument } from '../helpers/xml.js';

let t: TestServer;
let ada: TestAccount;
let rich: TestAccount;
let work: string;
before(async () => {
  t = await startTestServer();
  ada = await t.account();
  rich = await t.account({ premiumDays: 30, trafficBytes: 100 * 1024 * 1024 });
  work = await mkdtemp(path.join(tmpdir(), 'filehaven-client-'));
});
after(async () => {
  await t.close();
  await rm(work, { recursive: true, force: true });
});

interface RunOptions {
  /** Lines given on stdin. */
  stdin?: string;
  /** A config folder of its own (default: the shared one of `work`). */
  home?: string;
  env?: Record<string, string>;
}

/** Starts `filehaven <args>` with its own config folder and the working folder `work`. */
function start(args: string[], options: RunOptions = {}) {
  const home = options.home ?? path.join(work, 'home');
  return spawn(process.execPath, [filehavenEntry(), ...args], {
    cwd: work,
    env: cleanEnv({ HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), ...options.env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function run(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const child = start(args, options);
  const outcome = outcomeOf(child);
  child.stdin.end(options.stdin ?? '');
  return outcome;
}

/** Runs with a key in the environment (as scripts do); asserts success with nothing on stderr; returns the JSON. */
async function json(args: string[], account: TestAccount = ada, options: RunOptions = {}): Promise<ParsedDocument> {
  const result = await run([...args, '--json'], { ...options, env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: account.key, ...options.env } });
  assert.equal(result.code, 0, `exit code; stderr: ${result.stderr}`);
  assert.equal(result.stderr, '', 'nothing on stderr (no progress output without a terminal)');
  return JSON.parse(result.stdout);
}

/** Runs a command expected to fail with --json: the exit code, one stderr line, one JSON error document. */
async function jsonFailure(
  args: string[],
  code: number,
  account: TestAccount | null = ada,
  options: RunOptions = {},
): Promise<{ error: { code: string; status?: number; message: string }; stderr: string }> {
  const env: Record<string, string> = account ? { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: account.key } : {};
  const result = await run([...args, '--json'], { ...options, env: { ...env, ...options.env } });
  assert.equal(result.code, code, `exit code; stdout: ${result.stdout} stderr: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace');
  const document = JSON.parse(result.stdout);
  assert.ok(document.error, `an error document: ${result.stdout}`);
  return { error: document.error, stderr: result.stderr };
}

const fileHash = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

describe('login and the config file', () => {
  test('login asks for login and password (stdin lines), stores server and key with mode 0600, prints no key', async () => {
    const home = path.join(work, 'login-home');
    const result = await run(['login', '--server', t.url, '--json'], { home, stdin: `${ada.login}\n${ada.password}\n` });
    assert.equal(result.code, 0, result.stderr);
    const answer = JSON.parse(result.stdout);
    const config = path.join(home, 'config', 'filehaven', 'client.json');
    assert.deepEqual(answer, { server: t.url, login: ada.login, account: String(ada.account.id), config });
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(ada.key), 'the key is never printed');
    assert.equal((await stat(config)).mode & 0o777, 0o600);
    assert.equal((await stat(path.dirname(config))).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(await readFile(config, 'utf8')), { server: t.url, key: ada.key, login: ada.login });

    // The stored login serves the next commands, with no environment at all.
    const account = await run(['account', '--json'], { home });
    assert.equal(account.code, 0, account.stderr);
    assert.equal(JSON.parse(account.stdout).id, String(ada.account.id));
    // Another server (flag or FILEHAVEN_SERVER) never gets the stored key.
    const elsewhere = await run(['account'], { home, env: { FILEHAVEN_SERVER: 'http://127.0.0.1:9' } });
    assert.equal(elsewhere.code, 3);
    assert.match(elsewhere.stderr, /not signed in to http:\/\/127\.0\.0\.1:9/);

    const out = await run(['logout', '--json'], { home });
    assert.deepEqual(JSON.parse(out.stdout), { removed: true, config });
    await assert.rejects(stat(config));
    const after = await run(['ls'], { home });
    assert.equal(after.code, 3);
    assert.match(after.stderr, /^filehaven ls: not signed in: run filehaven login --server URL/);
  });

  test('login of an account with a second factor: no key for the password alone, a clear way on (--key), exit 3', async () => {
    const guarded = await t.account();
    const { secondFactors } = t.server.services.store;
    assert.equal(await secondFactors.beginTotp(guarded.account.id, 'sealed', Date.now()), true);
    assert.equal(await secondFactors.confirmTotp(guarded.account.id, 1, Date.now()), true);
    const home = path.join(work, 'guarded-home');
    const refused = await run(['login', '--server', t.url, '--login', guarded.login, '--password-stdin'], { home, stdin: `${guarded.password}\n` });
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /second factor/);
    assert.match(refused.stderr, /filehaven login --server \S+ --key -/);
    assert.doesNotMatch(refused.stderr, /^\s+at /m, 'no stack trace');
    // The key from the profile page, on stdin, signs the client in.
    const given = await run(['login', '--server', t.url, '--key', '-', '--json'], { home, stdin: `${guarded.key}\n` });
    assert.equal(given.code, 0, given.stderr);
    assert.equal(JSON.parse(given.stdout).account, String(guarded.account.id));
  });

  test('a wrong password exits 3 with errorWrongCredentials and stores nothing; --key is checked before it is stored', async () => {
    const home = path.join(work, 'wrong-home');
    const wrong = await jsonFailure(['login', '--server', t.url, '--login', ada.login], 3, null, { home, stdin: 'nope\n' });
    assert.equal(wrong.error.code, 'errorWrongCredentials');
    assert.match(wrong.stderr, /^filehaven login: errorWrongCredentials: Invalid login or password\n$/);
    const badKey = await jsonFailure(['login', '--server', t.url, '--key', 'not-a-key'], 3, null, { home });
    assert.deepEqual([badKey.error.code, badKey.error.status], ['errorPermissionDenied', 401]);
    await assert.rejects(stat(path.join(home, 'config', 'filehaven', 'client.json')));
    const good = await run(['login', '--server', t.url, '--key', rich.key], { home });
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /^signed in to .* as account \d+; the key is stored in /);
    const missing = await run(['login'], { home });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--server URL is required/);
  });
});

describe('files', () => {
  test('upload several files into a folder with --json, then ls, info, link, cp, mv, mkdir, rm, account', async () => {
    const a = path.join(work, 'a & b.txt');
    const b = path.join(work, 'b.bin');
    await writeFile(a, 'alpha');
    await writeFile(b, randomPayload(100 * 1024));
    const folder = await json(['mkdir', 'Reports & co'], rich);
    assert.equal(folder.name, 'Reports & co');
    const uploaded = await json(['upload', a, b, '--folder', folder.id, '--parallel', '2'], rich);
    assert.equal(uploaded.folder, folder.id);
    assert.deepEqual(
      uploaded.files.map((f: { file: string; name: string; size: number }) => [f.file, f.name, f.size]),
      [
        [a, 'a & b.txt', 5],
        [b, 'b.bin', 100 * 1024],
      ],
    );
    const [first, second] = uploaded.files;
    assert.equal((await t.server.services.store.files.byId(second.id))?.sha256, await fileHash(b));

    const listed = await json(['ls', '--folder', folder.id], rich);
    assert.deepEqual(listed.files.map((f: { id: string }) => f.id).sort(), [first.id, second.id].sort());
    assert.equal(listed.more, false);
    assert.equal((await json(['ls', '--limit', '1'], rich)).more, true);
    assert.deepEqual(
      (await json(['ls', '--folders'], rich)).folders.map((f: { id: string; files: number }) => [f.id, f.files]),
      [[folder.id, 2]],
    );

    const info = await json(['info', first.id], rich);
    assert.deepEqual(info, { id: first.id, name: 'a & b.txt', status: 'A', size: 5, downloadLink: first.downloadLink });
    const link = await json(['link', first.id], rich);
    assert.match(link.url, new RegExp(`/direct/${first.id}/`));
    const plainLink = await run(['link', first.id], { env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: rich.key } });
    assert.match(plainLink.stdout, /^http:\/\/\S+\/direct\/\S+\n$/);

    const copy = await json(['cp', first.id], ada);
    assert.equal(copy.size, 5);
    const target = await json(['mkdir', 'inbox'], ada);
    const moved = await json(['mv', copy.id, '--folder', target.id], ada);
    assert.deepEqual([moved.folderId, moved.moved, moved.folderSize], [target.id, 1, 5]);
    const removed = await json(['rm', copy.id], ada);
    assert.deepEqual(removed, { files: [{ id: copy.id, name: 'a & b.txt' }] });
    const account = await json(['account'], rich);
    assert.equal(account.premium, 'Active');
    assert.equal(account.server, t.url);

    // Human output: columns and the download link per uploaded file.
    const human = await run(['upload', a], { env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: ada.key } });
    assert.equal(human.code, 0, human.stderr);
    assert.equal(human.stderr, '');
    assert.match(human.stdout, /^[A-Z0-9]{10} {2}http:\/\/\S+\/a%20%26%20b\.txt\n$/);
    const table = await run(['ls'], { env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: ada.key } });
    assert.match(table.stdout, /^ID\s+STATUS\s+SIZE\s+CREATED\s+NAME\n[A-Z0-9]{10}\s+A\s+5 B\s+\S+ \S+\s+a & b\.txt\n/);
  });

  test('failures: the SPEC code on stderr and in the JSON document, exit 1; usage mistakes exit 2', async () => {
    const unknown = await jsonFailure(['info', 'ZZZZZZZZZZ'], 1, rich);
    assert.deepEqual([unknown.error.code, unknown.error.status], ['errorFileNotFound', 404]);
    assert.equal(unknown.stderr, 'filehaven info: errorFileNotFound: File does not exist or is deleted\n');
    const notPremium = await jsonFailure(['link', 'ZZZZZZZZZZ'], 1, ada);
    assert.equal(notPremium.error.code, 'errorPermissionDenied');
    const folder = await jsonFailure(['mv', 'ZZZZZZZZZZ', '--folder', 'YYYYYYYYYY'], 1, ada);
    assert.equal(folder.error.code, 'errorFolderNotFound');
    const wrongKey = await jsonFailure(['ls'], 3, { ...ada, key: 'nope' });
    assert.match(wrongKey.stderr, /errorPermissionDenied: Wrong apikey \(the key was refused: run filehaven login again/);
    const missingFile = await run(['upload', path.join(work, 'no such file')], { env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: ada.key } });
    assert.equal(missingFile.code, 1);
    assert.match(missingFile.stderr, /^filehaven upload: cannot read .*no such file: no such file\n$/);
    const empty = path.join(work, 'empty');
    await writeFile(empty, '');
    // Several files, one document: each file's outcome, the failed ones with their code.
    const refused = await run(['upload', empty, '--json'], { env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: ada.key } });
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, `filehaven upload: ${empty}: errorEmptyFile: The uploaded file is empty\n`);
    assert.deepEqual(JSON.parse(refused.stdout).files[0].error, { code: 'errorEmptyFile', status: 400, message: 'The uploaded file is empty' });
    for (const args of [
      ['upload'],
      ['info'],
      ['info', '../x'],
      ['mv', 'A'],
      ['ls', '--status', 'D'],
      ['upload', 'x', '--parallel', '0'],
      ['nonsense-flag', '--bogus'],
    ]) {
      const usage = await run(args[0] === 'nonsense-flag' ? ['ls', '--bogus'] : args, { env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: ada.key } });
      assert.equal(usage.code, 2, `${args.join(' ')}: ${usage.stderr}`);
      assert.match(
        usage.stderr,
        new RegExp(
          `^filehaven ${args[0] === 'nonsense-flag' ? 'ls' : args[0]}: .+\\nRun 'filehaven help ${args[0] === 'nonsense-flag' ? 'ls' : args[0]}' for usage\\.\\n$`,
        ),
      );
    }
  });

  test('help shows the user commands and the operator commands as two groups', async () => {
    const help = await run(['help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /For users of a filehaven site[\s\S]*filehaven upload FILE\.\.\.[\s\S]*For operators of this server[\s\S]*filehaven serve/);
  });
});

test('at a terminal, transfers draw a progress bar with speed and ETA on stderr', {
  skip: spawnSync('script', ['--version']).status !== 0 && 'needs script(1) for a terminal',
}, async () => {
  const file = path.join(work, 'watched.bin');
  await writeFile(file, randomPayload(3 * 1024 * 1024));
  // script(1) runs the command on a pseudo-terminal; spawned, never spawnSync: the server answers from this process.
  const command = [process.execPath, filehavenEntry(), 'upload', file].map((arg) => `'${arg}'`).join(' ');
  const output = await new Promise<string>((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: work,
      env: cleanEnv({ HOME: work, XDG_CONFIG_HOME: path.join(work, 'tty-config'), FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: ada.key }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let seen = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (seen += chunk));
    child.on('close', () => resolve(seen));
  });
  assert.match(output, /watched\.bin\s+\|[█░]+\| \d+% [\d.]+ \S+\/3\.00 MiB [\d.]+ \S+\/s ETA/);
  assert.match(output, /[A-Z0-9]{10} {2}http:\/\/\S+\/watched\.bin\r?\n/);
});

describe('downloads', () => {
  const content = randomPayload(2 * 1024 * 1024 + 123);
  let id: string;
  let downloadLink: string;
  before(async () => {
    const source = path.join(work, 'source.bin');
    await writeFile(source, content);
    ({ id, downloadLink } = (await json(['upload', source], ada)).files[0]);
  });

  test('by id (public for a free account, direct for premium), by link, into a folder; an existing file needs --force', async () => {
    const out = path.join(work, 'got.bin');
    const got = await json(['download', id, '-o', out], ada);
    assert.deepEqual(got, { id, name: 'source.bin', file: out, size: content.length, resumedFrom: 0, direct: false });
    assert.equal(await fileHash(out), sha256(content));
    const again = await jsonFailure(['download', id, '-o', out], 1, ada);
    assert.match(again.error.message, /exists; use --force/);
    await json(['download', downloadLink, '-o', out, '--force'], ada);

    const before = await trafficLeft(t, rich.key);
    const dir = path.join(work, 'into');
    await (await import('node:fs/promises')).mkdir(dir);
    const direct = await json(['download', id, '-o', `${dir}/`], rich);
    assert.deepEqual([direct.direct, direct.file], [true, path.join(dir, 'source.bin')]);
    assert.equal(await fileHash(direct.file), sha256(content));
    assert.equal(await trafficLeft(t, rich.key), before - content.length);

    const stdout = await run(['download', id, '-o', '-'], { env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: ada.key } });
    assert.equal(stdout.code, 0);
    assert.equal(stdout.stdout.length > 0, true);

    // A public link needs nobody signed in: no config, no server, no key.
    const stranger = path.join(work, 'stranger');
    const anonymous = await run(['download', downloadLink, '-o', path.join(work, 'anonymous.bin'), '--json'], { home: stranger });
    assert.equal(anonymous.code, 0, anonymous.stderr);
    assert.equal(JSON.parse(anonymous.stdout).direct, false);
    assert.equal(await fileHash(path.join(work, 'anonymous.bin')), sha256(content));
    // By id, it still needs a server to ask.
    assert.equal((await run(['download', id, '--json'], { home: stranger })).code, 3);
  });

  test('a FILE.part of this file is resumed with Range; one whose ETag no longer holds starts over', async () => {
    const out = path.join(work, 'resumed.bin');
    await writeFile(`${out}.part`, content.subarray(0, 700_000));
    await writeFile(`${out}.part.json`, JSON.stringify({ id, etag: `"${sha256(content)}"` }));
    const resumed = await json(['download', id, '-o', out], ada);
    assert.equal(resumed.resumedFrom, 700_000);
    assert.equal(await fileHash(out), sha256(content));
    await assert.rejects(stat(`${out}.part`));
    await assert.rejects(stat(`${out}.part.json`));

    const stale = path.join(work, 'stale.bin');
    await writeFile(`${stale}.part`, Buffer.alloc(500_000, 7));
    await writeFile(`${stale}.part.json`, JSON.stringify({ id, etag: '"some-other-version"' }));
    const restarted = await json(['download', id, '-o', stale], ada);
    assert.equal(restarted.resumedFrom, 0);
    assert.equal(await fileHash(stale), sha256(content));
  });

  test('a download killed (SIGKILL) midway resumes when run again', async () => {
    const slow = await startTestServer({ freeDownloadSpeed: 512 * 1024 });
    try {
      const owner = await slow.account();
      const up = await slow.upload(owner.key, 'slow.bin', content);
      const out = path.join(work, 'killed.bin');
      const env = { FILEHAVEN_SERVER: slow.url, FILEHAVEN_KEY: owner.key };
      const child = start(['download', up.id, '-o', out, '--json'], { env });
      child.stdin.end();
      const exited = new Promise((resolve) => child.on('close', resolve));
      // Killed once part of the file has reached the disk (a child that ends first fails the test).
      let gone = false;
      void exited.then(() => (gone = true));
      while (((await stat(`${out}.part`).catch(() => null))?.size ?? 0) < 256 * 1024) {
        assert.ok(!gone, 'the download ended before it could be killed');
        await sleep(20);
      }
      child.kill('SIGKILL');
      await exited;
      const held = (await stat(`${out}.part`)).size;
      assert.ok(held > 0 && held < content.length, `a partial file: ${held}`);
      const result = await run(['download', up.id, '-o', out, '--json'], { env });
      assert.equal(result.code, 0, result.stderr);
      const resumed = JSON.parse(result.stdout);
      // Nothing writes .part after the kill: the resume starts exactly where it ends.
      assert.equal(resumed.resumedFrom, held);
      assert.equal(await fileHash(out), sha256(content));
    } finally {
      await slow.close();
    }
  });
});

test('a large upload streams: the process does not grow with the file; the server stores its digest', async () => {
  // Peak RSS of the CLI process, reported at its exit through a preloaded module.
  const hook = path.join(work, 'max-rss.mjs');
  await writeFile(
    hook,
    "import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(process.env.RSS_FILE, String(process.resourceUsage().maxRSS * 1024)));\n",
  );
  const peak = async (file: string) => {
    const rssFile = `${file}.rss`;
    const result = await json(['upload', file], ada, { env: { NODE_OPTIONS: `--import=${hook}`, RSS_FILE: rssFile } });
    return { id: result.files[0].id as string, rss: Number(await readFile(rssFile, 'utf8')) };
  };
  const small = path.join(work, 'small.bin');
  await writeFile(small, randomPayload(1024));
  const big = path.join(work, 'big.bin');
  const handle = await (await import('node:fs/promises')).open(big, 'w');
  const hash = createHash('sha256');
  for (let i = 0; i < 96; i++) {
    const chunk = randomPayload(1024 * 1024);
    hash.update(chunk);
    await handle.write(chunk);
  }
  await handle.close();
  const baseline = await peak(small);
  const large = await peak(big);
  assert.ok(large.rss - baseline.rss < 40 * 1024 * 1024, `peak RSS grew by ${((large.rss - baseline.rss) / 1048576).toFixed(1)} MiB for a 96 MiB file`);
  assert.equal((await t.server.services.store.files.byId(large.id))?.sha256, hash.digest('hex'));
});

describe('resumable uploads (tus)', () => {
  /** Writes `size` random bytes to `file` a MiB at a time; returns their SHA-256. */
  async function randomFile(file: string, size: number): Promise<string> {
    const handle = await (await import('node:fs/promises')).open(file, 'w');
    const hash = createHash('sha256');
    for (let written = 0; written < size; written += 1024 * 1024) {
      const chunk = randomPayload(Math.min(1024 * 1024, size - written));
      hash.update(chunk);
      await handle.write(chunk);
    }
    await handle.close();
    return hash.digest('hex');
  }

  const statePath = (home: string) => path.join(home, 'config', 'filehaven', 'uploads.json');
  const storedUrls = async (home: string): Promise<string[]> => {
    const text = await readFile(statePath(home), 'utf8').catch(() => null);
    if (text === null) return [];
    return Object.values((JSON.parse(text) as { uploads: Record<string, { uploadUrl: string }> }).uploads).map((entry) => entry.uploadUrl);
  };

  test('upload goes through tus when the server offers it; --no-resume sends POST /files', async () => {
    // Each request of the CLI process, as `METHOD /path`, through a preloaded fetch wrapper.
    const hook = path.join(work, 'record-fetch.mjs');
    await writeFile(
      hook,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the string is the hook module's source; the placeholder belongs to that module's own template literal
      "import { appendFileSync } from 'node:fs';\nconst original = globalThis.fetch;\nglobalThis.fetch = (input, init) => {\n  appendFileSync(process.env.REQUESTS_FILE, `${init?.method ?? 'GET'} ${new URL(String(input)).pathname}\\n`);\n  return original(input, init);\n};\n",
    );
    const file = path.join(work, 'either way.bin');
    const content = randomPayload(512 * 1024);
    await writeFile(file, content);
    const requestsOf = async (args: string[]) => {
      const log = path.join(work, `requests-${args.length}.log`);
      const home = path.join(work, `transport-home-${args.length}`);
      const result = await json(['upload', file, ...args], ada, { home, env: { NODE_OPTIONS: `--import=${hook}`, REQUESTS_FILE: log } });
      const stored = result.files[0];
      assert.equal((await t.server.services.store.files.byId(stored.id))?.sha256, sha256(content));
      assert.match(stored.deleteLink, new RegExp(`/${stored.id}/delete/`));
      assert.deepEqual(await storedUrls(home), [], 'no entry left');
      return (await readFile(log, 'utf8')).trim().split('\n');
    };
    const tus = await requestsOf([]);
    assert.deepEqual(tus.slice(0, 2), ['OPTIONS /uploads', 'POST /uploads']);
    assert.match(tus[2]!, /^PATCH \/uploads\/\S+$/);
    assert.ok(!tus.includes('POST /files'));
    assert.deepEqual(await requestsOf(['--no-resume']), ['POST /files']);
  });

  test('--chunk-size: PATCHes no larger (the server names its own largest, 64 MiB here, which caps it); not a size, or with --no-resume, is a usage error', async () => {
    // Each PATCH's declared body size, through a preloaded fetch wrapper.
    const hook = path.join(work, 'record-patches.mjs');
    await writeFile(
      hook,
      "import { appendFileSync } from 'node:fs';\nconst original = globalThis.fetch;\nglobalThis.fetch = (input, init) => {\n  if (init?.method === 'PATCH') appendFileSync(process.env.REQUESTS_FILE, new Headers(init.headers).get('content-length') + '\\n');\n  return original(input, init);\n};\n",
    );
    const file = path.join(work, 'in pieces.bin');
    const content = randomPayload(2.5 * 1024 * 1024);
    await writeFile(file, content);
    const log = path.join(work, 'patches.log');
    const result = await json(['upload', file, '--chunk-size', '1MiB'], ada, {
      home: path.join(work, 'chunks-home'),
      env: { NODE_OPTIONS: `--import=${hook}`, REQUESTS_FILE: log },
    });
    assert.equal((await t.server.services.store.files.byId(result.files[0].id))?.sha256, sha256(content));
    assert.deepEqual((await readFile(log, 'utf8')).trim().split('\n').map(Number), [1024 * 1024, 1024 * 1024, 512 * 1024]);

    for (const args of [
      ['--chunk-size', 'lots'],
      ['--chunk-size', '0'],
      ['--chunk-size', '1MiB', '--no-resume'],
    ]) {
      const usage = await run(['upload', file, ...args], { env: { FILEHAVEN_SERVER: t.url, FILEHAVEN_KEY: ada.key } });
      assert.equal(usage.code, 2, `${args.join(' ')}: ${usage.stderr}`);
      assert.match(usage.stderr, /^filehaven upload: --chunk-size .+\nRun 'filehaven help upload' for usage\.\n$/);
    }
  });

  test('a file of 64 MiB goes over --connections partial uploads the server joins; killed, the next run resumes each partial and sends only the rest', async () => {
    const size = 64 * 1024 * 1024;
    const big = path.join(work, 'parallel upload.bin');
    const digest = await randomFile(big, size);
    const relay = await pacedRelay(0, 16 * 1024 * 1024);
    const relayed = await startTestServer({ publicUrl: `http://127.0.0.1:${relay.port}` });
    relay.targetPort = (relayed.server.app.server.address() as AddressInfo).port;
    try {
      const owner = await relayed.account();
      const home = path.join(work, 'parallel-home');
      const env = { FILEHAVEN_SERVER: `http://127.0.0.1:${relay.port}`, FILEHAVEN_KEY: owner.key };
      const partialUrls = async (): Promise<string[][]> => {
        const text = await readFile(statePath(home), 'utf8').catch(() => null);
        if (text === null) return [];
        return Object.values((JSON.parse(text) as { uploads: Record<string, { parallelUploadUrls?: string[] }> }).uploads).map(
          (entry) => entry.parallelUploadUrls ?? [],
        );
      };
      const offsetOf = async (url: string) => {
        const head = await fetch(url.replace(`:${relay.port}/`, `:${relay.targetPort}/`), {
          method: 'HEAD',
          headers: { Authorization: owner.key, 'Tus-Resumable': '1.0.0' },
        });
        assert.equal(head.status, 200);
        assert.equal(head.headers.get('upload-concat'), 'partial');
        return Number(head.headers.get('upload-offset'));
      };

      relay.received = 0;
      const child = start(['upload', big, '--connections', '3', '--json'], { home, env });
      child.stdin.end();
      const outcome = outcomeOf(child);
      const deadline = Date.now() + 30_000;
      // The partials' URLs are stored once all three exist.
      while ((await partialUrls()).length === 0 || relay.received < 12 * 1024 * 1024) {
        assert.ok(Date.now() < deadline, 'the upload did not start');
        await sleep(20);
      }
      child.kill('SIGKILL');
      await outcome;
      const [urls, ...others] = await partialUrls();
      assert.ok(urls !== undefined && others.length === 0, 'one entry is kept');
      assert.equal(urls.length, 3);
      const offsets = await Promise.all(urls.map(offsetOf));
      const held = offsets.reduce((sum, offset) => sum + offset, 0);
      assert.ok(held > 0 && held < size, `the server holds part of the file: ${offsets}`);
      assert.equal(await relayed.storage.count('files'), 0, 'no partial became a file');

      relay.rate = null;
      relay.received = 0;
      const result = await run(['upload', big, '--connections', '3', '--json'], { home, env });
      assert.equal(result.code, 0, result.stderr);
      const stored = JSON.parse(result.stdout).files[0];
      assert.deepEqual([stored.name, stored.size], ['parallel upload.bin', size]);
      assert.equal((await relayed.server.services.store.files.byId(stored.id))?.sha256, digest);
      assert.match(stored.deleteLink, new RegExp(`/${stored.id}/delete/`), 'the final answered, with the delete link');
      assert.ok(relay.received < size - held + 512 * 1024, `sent ${relay.received} bytes for the ${size - held} missing`);
      assert.deepEqual(await partialUrls(), [], 'the entry goes once the upload is done');
      assert.equal(await relayed.storage.count('files'), 1);
      const reserved = (await relayed.storage.rows('reservations')).filter((row) => row.kind === 'upload');
      assert.deepEqual(reserved, [], 'nothing stays reserved');
    } finally {
      await relayed.close();
      await relay.close();
    }
  });

  test('an upload interrupted (Ctrl-C), then killed (SIGKILL), resumes each time: the stored URL is reused and only the rest is sent', async () => {
    const size = 64 * 1024 * 1024;
    const big = path.join(work, 'resumed upload.bin');
    const digest = await randomFile(big, size);
    // Paced at 8 MiB/s through a relay, so the interruptions land midway (and the relay
    // counts what is sent). The server's public URL is the relay's: its upload URLs, which
    // are absolute under {base_url}, lead through it too.
    const relay = await pacedRelay(0, 8 * 1024 * 1024);
    const relayed = await startTestServer({ publicUrl: `http://127.0.0.1:${relay.port}` });
    // The relay leads to the port the server listens on.
    relay.targetPort = (relayed.server.app.server.address() as AddressInfo).port;
    try {
      const owner = await relayed.account();
      const home = path.join(work, 'resume-home');
      const env = { FILEHAVEN_SERVER: `http://127.0.0.1:${relay.port}`, FILEHAVEN_KEY: owner.key };
      /** Upload-Offset of the one stored upload, asked of the server itself. */
      const serverOffset = async (url: string) => {
        const head = await fetch(url.replace(`:${relay.port}/`, `:${relay.targetPort}/`), {
          method: 'HEAD',
          headers: { Authorization: owner.key, 'Tus-Resumable': '1.0.0' },
        });
        assert.equal(head.status, 200);
        return Number(head.headers.get('upload-offset'));
      };
      /** Starts `upload BIG`, stops it with `signal` once its upload exists and 6 MiB more went out; the run's outcome. */
      const interrupted = async (signal: NodeJS.Signals) => {
        relay.received = 0;
        const child = start(['upload', big, '--connections', '1', '--json'], { home, env });
        child.stdin.end();
        const outcome = outcomeOf(child);
        let gone = false;
        void outcome.then(() => (gone = true));
        const deadline = Date.now() + 30_000;
        // The URL is stored before the first byte is sent.
        while ((await storedUrls(home)).length === 0 || relay.received < 6 * 1024 * 1024) {
          assert.ok(!gone, `the upload ended before ${signal}`);
          assert.ok(Date.now() < deadline, 'the upload did not start');
          await sleep(20);
        }
        child.kill(signal);
        return outcome;
      };

      const stopped = await interrupted('SIGINT');
      assert.equal(stopped.code, 130, stopped.stderr);
      assert.match(stopped.stderr, /^filehaven upload: interrupted \(SIGINT\)$/m);
      const [url, ...others] = await storedUrls(home);
      assert.ok(url !== undefined && others.length === 0, 'one entry is kept');
      assert.equal((await stat(statePath(home))).mode & 0o777, 0o600);
      assert.equal(new URL(url).port, String(relay.port), 'the upload URL leads through the relay');
      const first = await serverOffset(url);
      assert.ok(first > 0 && first < size, `the server holds part of the file: ${first}`);

      const killed = await interrupted('SIGKILL');
      assert.equal(killed.code, null, 'killed');
      assert.deepEqual(await storedUrls(home), [url], 'the same upload, continued');
      const second = await serverOffset(url);
      assert.ok(second > first && second < size, `the second run went on from ${first}: ${second}`);

      relay.rate = null;
      relay.received = 0;
      const result = await run(['upload', big, '--connections', '1', '--json'], { home, env });
      assert.equal(result.code, 0, result.stderr);
      const stored = JSON.parse(result.stdout).files[0];
      assert.deepEqual([stored.name, stored.size], ['resumed upload.bin', size]);
      assert.equal((await relayed.server.services.store.files.byId(stored.id))?.sha256, digest);
      assert.match(stored.deleteLink, new RegExp(`/${stored.id}/delete/`), 'the last PATCH answered, with the delete link');
      // Only the rest crossed the relay (plus the requests' heads), not the whole file again.
      assert.ok(relay.received < size - second + 256 * 1024, `sent ${relay.received} bytes for the ${size - second} missing`);
      assert.deepEqual(await storedUrls(home), [], 'the entry goes once the upload is done');
    } finally {
      await relayed.close();
      await relay.close();
    }
  });
});
