import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { settingsEnv } from '../helpers/backend.js';
import { assertFails, assertOk, runCli } from '../helpers/cli.js';
import { createTestSchema, POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { createTestBucket, s3SkipReason, s3TestEnvironment } from '../helpers/s3-test-bucket.js';
import { ServerProcess } from '../helpers/server-process.js';

/*
 * `filehaven init` (issue 23): a site set up without serving it, so that configuration
 * management and container builds can create accounts before the first start. On either
 * setup: init on empty storage creates the operator `admin` and prints its password once;
 * the operator commands then work; a second init changes nothing and says so; serve then
 * starts without creating another operator or printing a password, and init's password
 * signs in. A refused init is one line and a non-zero exit code.
 */

let scratch: string;
before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'filehaven-init-'));
});
after(() => rm(scratch, { recursive: true, force: true }));

const FIRST_START = 'First start: created the operator account. This password is shown only once:';

/** The password init printed, after checking its lines are serve's first-start lines. */
function printedPassword(stdout: string): string {
  const lines = stdout.trimEnd().split('\n');
  assert.equal(lines[0], FIRST_START, stdout);
  assert.equal(lines[1], '  login: admin', stdout);
  const password = /^ {2}password: (\S+)$/.exec(lines[2] ?? '')?.[1];
  assert.ok(password, stdout);
  assert.match(lines[3] ?? '', /^initialised /, stdout);
  assert.equal(lines.length, 4, stdout);
  return password;
}

/** The accounts of the site, as `accounts list --json` prints them. */
async function accounts(data: string, env: Record<string, string>): Promise<Array<{ id: number; login: string; operator: boolean }>> {
  return JSON.parse(assertOk(await runCli(['accounts', 'list', '--json', '--data', data], env)));
}

/** Whether POST /apikeys takes this login and password. */
async function signsIn(url: string, login: string, password: string): Promise<boolean> {
  const response = await fetch(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login, password }) });
  await response.arrayBuffer();
  return response.status === 201;
}

/** The whole story on one storage setup: `env` names it (nothing for SQLite and the data folder). */
async function initThenServe(data: string, env: Record<string, string>, secretFile: boolean): Promise<void> {
  const init = ['init', '--data', data];
  const password = printedPassword(assertOk(await runCli(init, env)));
  const secretPath = path.join(data, 'secret');
  const secret = secretFile ? await readFile(secretPath, 'utf8') : null;
  if (secretFile) {
    // As serve makes them: the folder and the secret for the owner only.
    assert.equal((await stat(data)).mode & 0o777, 0o700);
    assert.equal((await stat(secretPath)).mode & 0o777, 0o600);
  } else {
    assert.deepEqual((await readdir(data)).includes('secret'), false, 'FILEHAVEN_SECRET is given: no secret file');
  }

  // The operator commands take the site at once, before any serve.
  assertOk(await runCli(['accounts', 'create', '--login', 'ada', '--password', 'correct horse', '--data', data], env));
  const listed = await accounts(data, env);
  assert.deepEqual(
    listed.map((a) => [a.login, a.operator]),
    [
      ['admin', true],
      ['ada', false],
    ],
  );

  // Again: nothing changes, and it says so.
  const again = assertOk(await runCli(init, env));
  assert.match(again, /^already initialised: .*; nothing changed\n$/);
  assert.doesNotMatch(again, /password/);
  assert.deepEqual(await accounts(data, env), listed);
  if (secret !== null) assert.equal(await readFile(secretPath, 'utf8'), secret);

  // serve finds the operator: no second one, no password printed; init's password signs in.
  const server = await ServerProcess.start(data, [], 30_000, env);
  try {
    assert.doesNotMatch(server.log, /First start|password/);
    assert.ok(await signsIn(server.url, 'admin', password), 'the password init printed signs admin in');
    assert.ok(await signsIn(server.url, 'ada', 'correct horse'));
  } finally {
    const { code } = await server.stop();
    assert.equal(code, 0, server.log);
  }
  assert.deepEqual(await accounts(data, env), listed);
}

describe('filehaven init', { concurrency: 2, timeout: 300_000 }, () => {
  test('on SQLite and the data folder: init, accounts create, init again, serve', async () => {
    // A folder that does not exist yet, below one that does not either.
    await initThenServe(path.join(scratch, 'sqlite', 'site'), {}, true);
  });

  test('on PostgreSQL and S3, with FILEHAVEN_SECRET: init, accounts create, init again, serve', async (t) => {
    const skip = (await postgresSkipReason()) || s3SkipReason();
    if (skip) return t.skip(skip);
    const s3 = s3TestEnvironment()!;
    const schema = await createTestSchema();
    const bucket = await createTestBucket();
    try {
      const env = {
        ...settingsEnv({
          databaseUrl: POSTGRES_TEST_URL,
          databaseSchema: schema.schema,
          s3Bucket: bucket.bucket,
          s3Endpoint: s3.endpoint,
          s3ForcePathStyle: true,
          s3Checksums: 'when_required',
          secret: randomBytes(24).toString('base64url'),
        }),
        AWS_ACCESS_KEY_ID: s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
        AWS_REGION: 'us-east-1',
      };
      await initThenServe(path.join(scratch, 'postgres-s3'), env, false);
    } finally {
      await Promise.all([schema.drop(), bucket.remove()]);
    }
  });

  test('a refused init is one line and a non-zero exit code', async () => {
    const file = path.join(scratch, 'a-file');
    await writeFile(file, 'not a folder');
    // No folder can be made below a file.
    assertFails(
      await runCli(['init', '--data', path.join(file, 'data')]),
      1,
      /^filehaven init: cannot create the data folder .*a-file\/data \(--data, FILEHAVEN_DATA\): a file is in the way$/,
    );
    // A PostgreSQL nobody answers for: named, its password hidden.
    const unreachable = await runCli([
      'init',
      '--data',
      path.join(scratch, 'unreachable'),
      '--database-url',
      'postgres://filehaven:hunter2secret@127.0.0.1:1/site',
    ]);
    assertFails(
      unreachable,
      1,
      /^filehaven init: cannot use PostgreSQL at postgres:\/\/filehaven:\*\*\*@127\.0\.0\.1:1\/site \(--database-url, FILEHAVEN_DATABASE_URL\)/,
    );
    assert.doesNotMatch(unreachable.stderr, /hunter2/);
    // Not a PostgreSQL URL at all: a usage error, as for serve.
    assertFails(await runCli(['init', '--database-url', 'mysql://root@127.0.0.1/x']), 2, /^filehaven init: invalid --database-url/);
    assertFails(await runCli(['init', 'extra']), 2, /^filehaven init: init takes no arguments besides flags, got "extra"$/);
  });

  test('a bucket that does not exist refuses the init, naming --s3-bucket', async (t) => {
    const skip = s3SkipReason();
    if (skip) return t.skip(skip);
    const s3 = s3TestEnvironment()!;
    const env = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, AWS_REGION: 'us-east-1' };
    const args = [
      'init',
      '--data',
      path.join(scratch, 'no-bucket'),
      '--s3-bucket',
      'fh-no-such-bucket-init',
      '--s3-endpoint',
      s3.endpoint,
      '--s3-force-path-style',
      'true',
    ];
    assertFails(await runCli(args, env), 1, /fh-no-such-bucket-init.*--s3-bucket|--s3-bucket.*fh-no-such-bucket-init/);
  });

  test('help lists init with its usage line', async () => {
    assert.match(assertOk(await runCli(['help'])), /^ {2}filehaven init \[--data \.\/data\] /m);
    const help = assertOk(await runCli(['help', 'init']));
    assert.match(help, /^usage: filehaven init /);
    assert.match(help, /init takes the settings: filehaven help settings\./);
  });
});
