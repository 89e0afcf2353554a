import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openServices, type Services } from '../../src/composition.js';
import { loadConfig } from '../../src/config/config.js';
import { type FileRecord, FileStatus } from '../../src/domain/types.js';
import { type CliResult, cleanEnv, createSite, filehavenEntry, runCli } from '../helpers/cli.js';
import { storeUpload } from '../helpers/store-upload.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = filehavenEntry();
const DAY_MS = 86_400_000;
const GiB = 1024 ** 3;

/** Asserts a failed run: the exit code, one stderr line matching `message`, no stack trace. */
function assertFails(result: CliResult, code: number, message: RegExp, oneLine = true): void {
  assert.equal(result.code, code, `exit code; stderr: ${result.stderr}`);
  const lines = result.stderr.trimEnd().split('\n');
  assert.match(lines[0]!, message);
  if (oneLine) assert.equal(lines.length, 1, `more than one line on stderr:\n${result.stderr}`);
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'stack trace on stderr');
}

interface Serving {
  child: ChildProcess;
  url: string;
  /** stdout up to and including the listening line. */
  banner: string;
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code and signal. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `filehaven serve --port 0 ...` and resolves once it prints its URL. */
function serve(args: string[], env: Record<string, string> = {}): Promise<Serving> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let started = false;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on('exit', (code, signal) => done({ code, signal })));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /filehaven listening on (http:\/\/\S+)/.exec(stdout);
      if (started || !match) return;
      started = true;
      const end = stdout.indexOf('\n', match.index);
      resolve({
        child,
        url: match[1]!,
        banner: end === -1 ? stdout : stdout.slice(0, end + 1),
        stderr: () => stderr,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
    child.on('error', reject);
    void exited.then(({ code, signal }) => {
      if (!started) reject(new Error(`serve exited (${code ?? signal}) before listening:\n${stdout}\n${stderr}`));
    });
  });
}

async function apiKey(url: string, login: string, password: string): Promise<Response> {
  return fetch(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login, password }) });
}

const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-cli-'));
  tempDirs.push(dir);
  return dir;
}
after(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

// Groups use separate data folders and run two at a time; steps inside a group run in order.
describe('filehaven CLI', { concurrency: 2, timeout: 120_000 }, () => {
  describe('serve', { concurrency: 1 }, () => {
    let data: string;
    let operator: { login: string; password: string };
    before(async () => {
      data = await tempDir();
    });

    test('first start: prints the operator password once, answers /healthz, stops with 0 on SIGTERM', async () => {
      const server = await serve(['--data', data, '--log-level', 'silent']);
      try {
        assert.match(server.banner, /shown only once/);
        const login = /login: (\S+)/.exec(server.banner)?.[1];
        const password = /password: (\S+)/.exec(server.banner)?.[1];
        assert.ok(login && password, `no credentials in:\n${server.banner}`);
        assert.ok(password.length >= 12, 'a real password');
        operator = { login, password };
        assert.ok(server.banner.includes(data), 'the banner names the data folder');

        const health = await fetch(`${server.url}/healthz`);
        assert.equal(health.status, 200);
        assert.equal(await health.text(), 'ok\n');
      } finally {
        const { code, signal } = await server.stop();
        assert.equal(signal, null);
        assert.equal(code, 0, server.stderr());
      }
    });

    test('second start on the same data: no password, and the first one works with POST /apikeys', async () => {
      assert.ok(operator, 'needs the first start');
      // Default log level: the server's own log lines must not confuse the banner.
      const server = await serve(['--data', data]);
      try {
        assert.doesNotMatch(server.banner, /password/i);
        assert.equal((await fetch(`${server.url}/healthz`)).status, 200);

        const good = await apiKey(server.url, operator.login, operator.password);
        const body = await good.text();
        assert.equal(good.status, 201, body);
        assert.match(body, /<content type="text">[A-Za-z0-9]{16,}<\/content>/);
        const wrong = await apiKey(server.url, operator.login, `${operator.password}x`);
        assert.equal(wrong.status, 401);
        await wrong.text();
      } finally {
        const { code } = await server.stop();
        assert.equal(code, 0, server.stderr());
      }
    });

    test('a bad --port is refused naming the flag and the range', async () => {
      // Typed on the command line: a usage error (2); in the environment, a configuration error (1).
      assertFails(await runCli(['serve', '--port', '99999', '--data', data]), 2, /--port.*99999.*port number 0-65535/, false);
    });

    test('a bad FILEHAVEN_PORT is refused naming the variable', async () => {
      assertFails(await runCli(['serve', '--data', data], { FILEHAVEN_PORT: 'abc' }), 1, /FILEHAVEN_PORT.*"abc".*port number/);
    });
  });

  describe('accounts', { concurrency: 1 }, () => {
    let data: string;
    let created: { id: number; login: string; premiumEnd: string; trafficLeft: number };
    before(async () => {
      data = await tempDir();
      await createSite(data);
    });

    test('create --json prints one JSON object with id and login', async () => {
      const result = await runCli([
        'accounts',
        'create',
        '--login',
        'alice',
        '--password',
        'correct horse',
        '--name',
        'Alice A',
        '--email',
        'alice@example.com',
        '--premium-days',
        '30',
        '--traffic',
        '10GiB',
        '--json',
        '--data',
        data,
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim().split('\n').length, 1, result.stdout);
      const account = JSON.parse(result.stdout);
      assert.equal(typeof account.id, 'number');
      assert.equal(account.login, 'alice');
      assert.equal(account.name, 'Alice A');
      assert.equal(account.email, 'alice@example.com');
      assert.equal(account.premium, 'Active');
      assert.equal(account.trafficLeft, 10 * GiB);
      assert.equal(Date.parse(`${account.premiumEnd}Z`) - Date.parse(`${account.premiumStart}Z`), 30 * DAY_MS);
      created = account;
    });

    test('a taken login fails with one clear line', async () => {
      assertFails(await runCli(['accounts', 'create', '--login', 'alice', '--password', 'another one', '--data', data]), 1, /login "alice" is already taken/);
    });

    test('a short password fails with one clear line', async () => {
      assertFails(await runCli(['accounts', 'create', '--login', 'bob', '--password', 'short', '--data', data]), 1, /password must be at least 8 characters/);
    });

    test('an unknown flag is a usage error naming the flag', async () => {
      const result = await runCli(['accounts', 'create', '--login', 'carol', '--password', 'long enough', '--bogus', '--data', data]);
      assertFails(result, 2, /^filehaven accounts: unknown flag --bogus$/, false);
      assert.equal(result.stderr, "filehaven accounts: unknown flag --bogus\nRun 'filehaven help accounts create' for usage.\n");
    });

    test('list shows the account (and only the accounts that were created)', async () => {
      const result = await runCli(['accounts', 'list', '--data', data]);
      assert.equal(result.code, 0, result.stderr);
      const rows = result.stdout.trim().split('\n');
      assert.match(rows[0]!, /^ID +LOGIN +PREMIUM +PREMIUM END \(UTC\) +TRAFFIC LEFT +FLAGS$/);
      assert.equal(rows.length, 2, result.stdout);
      // Sizes for people in the table; --json keeps the bytes (below).
      assert.match(rows[1]!, new RegExp(`^${created.id} +alice +Active +${created.premiumEnd} +10\\.0 GiB +-$`));
    });

    test('premium --days 10 --traffic 1000 extends the period and tops up traffic', async () => {
      const result = await runCli(['accounts', 'premium', '--login', 'alice', '--days', '10', '--traffic', '1000', '--data', data]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /alice/);
    });

    test('FILEHAVEN_DATA is honoured: list --json sees the extended account', async () => {
      const result = await runCli(['accounts', 'list', '--json'], { FILEHAVEN_DATA: data });
      assert.equal(result.code, 0, result.stderr);
      const accounts = JSON.parse(result.stdout) as Array<{ id: number; login: string; premiumEnd: string; trafficLeft: number }>;
      assert.deepEqual(
        accounts.map((a) => a.login),
        ['alice'],
      );
      const alice = accounts[0]!;
      assert.equal(alice.id, created.id);
      // Extended from the old end (premium was active), not from now.
      assert.equal(Date.parse(`${alice.premiumEnd}Z`) - Date.parse(`${created.premiumEnd}Z`), 10 * DAY_MS);
      assert.equal(alice.trafficLeft, 10 * GiB + 1000);
    });

    test('premium for an unknown login fails with one clear line', async () => {
      assertFails(await runCli(['accounts', 'premium', '--login', 'nobody', '--days', '1', '--data', data]), 1, /no account with login "nobody"/);
    });
  });

  describe('files', { concurrency: 1 }, () => {
    let data: string;
    let services: Services;
    let file: FileRecord;
    const status = async () => (await services.store.files.byId(file.id))!.status;
    const files = (...args: string[]) => runCli(['files', ...args, '--data', data]);

    before(async () => {
      data = await tempDir();
      // The same data folder opened in-process, as the server would.
      services = await openServices(loadConfig({ data }, {}), { log: () => {} });
      const owner = await services.accounts.create({ login: 'owner', password: 'owner password' });
      ({ file } = await storeUpload(services, owner, 'note.txt', Buffer.from('moderate me')));
    });
    after(async () => {
      await services?.close();
    });

    test('block: A → B', async () => {
      const result = await files('block', file.id);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`${file.id}.*note\\.txt`));
      assert.equal(await status(), FileStatus.Blocked);
    });

    test('block of a blocked file is refused with the reason', async () => {
      assertFails(await files('block', file.id), 1, /only an active file can be blocked/);
      assert.equal(await status(), FileStatus.Blocked);
    });

    test('unblock: B → A', async () => {
      const result = await files('unblock', file.id);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(await status(), FileStatus.Active);
    });

    test('delete: A → D, and the last reference releases the bytes', async () => {
      assert.equal(await services.blobs.has(file.sha256), true);
      const result = await files('delete', file.id);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(await status(), FileStatus.Deleted);
      assert.equal(await services.blobs.has(file.sha256), false);
    });

    test('a deleted file can be neither deleted again nor unblocked', async () => {
      assertFails(await files('delete', file.id), 1, /already deleted/);
      assertFails(await files('unblock', file.id), 1, /only a blocked file can be unblocked/);
      assert.equal(await status(), FileStatus.Deleted);
    });

    test('an unknown id is named in the message', async () => {
      assertFails(await files('block', 'ZZZZZZZZZZ'), 1, /no file with id "ZZZZZZZZZZ"/);
    });
  });

  describe('blacklist', { concurrency: 1 }, () => {
    let data: string;
    const digest = 'ab'.repeat(32);
    const blacklist = (...args: string[]) => runCli(['blacklist', ...args, '--data', data]);
    before(async () => {
      data = await tempDir();
      await createSite(data);
    });

    test('add (any case) then list shows the digest and reason', async () => {
      const added = await blacklist('add', digest.toUpperCase(), '--reason', 'known malware');
      assert.equal(added.code, 0, added.stderr);
      const listed = await blacklist('list');
      assert.equal(listed.code, 0, listed.stderr);
      const rows = listed.stdout.trim().split('\n');
      assert.equal(rows.length, 1, listed.stdout);
      assert.match(rows[0]!, new RegExp(`^${digest}\\t.*\\tknown malware$`));
    });

    test('remove takes it off; a second remove says it is not listed', async () => {
      const removed = await blacklist('remove', digest);
      assert.equal(removed.code, 0, removed.stderr);
      assertFails(await blacklist('remove', digest), 1, /not in the blacklist/);
    });

    test('a bad digest is refused with one clear line', async () => {
      assertFails(await blacklist('add', 'not-a-digest'), 1, /"not-a-digest" is not a SHA-256 digest/);
    });
  });

  test('an unknown command says so in one line and points at the help; exits 2', async () => {
    const result = await runCli(['frobnicate']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'filehaven: unknown command "frobnicate"\nRun \'filehaven help\' for the list of commands.\n');
    assert.equal(result.stdout, '');
  });
});
