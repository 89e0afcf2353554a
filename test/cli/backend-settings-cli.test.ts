import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertFails, runCli } from '../helpers/cli.js';
import { POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { s3SkipReason, s3TestEnvironment } from '../helpers/s3-test-bucket.js';

/**
 * A backend that cannot be used refuses the start in one line naming the setting to fix
 * (issue 8: a wrong URL, an unreachable PostgreSQL, a missing bucket, wrong credentials),
 * never a stack trace, and never the password of the URL.
 */
let data: string;
before(async () => {
  data = await mkdtemp(path.join(tmpdir(), 'filehaven-backend-cli-'));
});
after(() => rm(data, { recursive: true, force: true }));

const serve = (args: string[], env: Record<string, string> = {}) => runCli(['serve', '--data', data, '--port', '0', ...args], env);

test('a database URL that is not PostgreSQL is refused as a setting', async () => {
  assertFails(
    await serve(['--database-url', 'mysql://root@127.0.0.1/test']),
    2,
    /invalid --database-url "mysql:\/\/root@127\.0\.0\.1\/test": expected a URL such as postgres:\/\//,
  );
});

test('an unreachable PostgreSQL is named, with its password hidden', async () => {
  const result = await serve(['--database-url', 'postgres://filehaven:hunter2secret@127.0.0.1:1/site']);
  assertFails(
    result,
    1,
    /^filehaven serve: cannot use PostgreSQL at postgres:\/\/filehaven:\*\*\*@127\.0\.0\.1:1\/site \(--database-url, FILEHAVEN_DATABASE_URL\): .*(ECONNREFUSED|refused)/,
  );
  assert.doesNotMatch(result.stderr, /hunter2/);
});

describe('with PostgreSQL', async () => {
  const skip = await postgresSkipReason();
  test('a database that does not exist is named', { skip }, async () => {
    const url = new URL(POSTGRES_TEST_URL);
    url.pathname = '/no_such_database_fh';
    assertFails(
      await serve(['--database-url', url.toString()]),
      1,
      /cannot use PostgreSQL at .*no_such_database_fh.*: database "no_such_database_fh" does not exist/,
    );
  });
});

describe('with S3', () => {
  const skip = s3SkipReason();
  const s3 = s3TestEnvironment();
  const credentials = { AWS_ACCESS_KEY_ID: s3?.accessKeyId ?? '', AWS_SECRET_ACCESS_KEY: s3?.secretAccessKey ?? '', AWS_REGION: 'us-east-1' };
  const s3Args = (bucket: string, endpoint = s3?.endpoint ?? '') => ['--s3-bucket', bucket, '--s3-endpoint', endpoint, '--s3-force-path-style', 'true'];

  test('a bucket that does not exist is named', { skip }, async () => {
    assertFails(await serve(s3Args('fh-no-such-bucket-here'), credentials), 1, /fh-no-such-bucket-here.*--s3-bucket|--s3-bucket.*fh-no-such-bucket-here/);
  });

  test('credentials the server refuses point at the credential settings, without the secret', { skip }, async () => {
    const result = await serve(s3Args('fh-any-bucket'), { ...credentials, AWS_SECRET_ACCESS_KEY: 'wrong-secret-value' });
    assertFails(result, 1, /AWS_ACCESS_KEY_ID|credentials/i);
    assert.doesNotMatch(result.stderr, /wrong-secret-value/);
  });

  test('an endpoint nobody answers on is named', { skip }, async () => {
    assertFails(await serve(s3Args('fh-any-bucket', 'http://127.0.0.1:1'), credentials), 1, /--s3-endpoint/);
  });
});

test('backup and restore refuse a site on PostgreSQL or S3, pointing at their own tools', async () => {
  const target = path.join(data, 'backup-target');
  assertFails(
    await runCli(['backup', '--to', target, '--data', data, '--database-url', 'postgres://postgres@127.0.0.1:1/x']),
    1,
    /backup works on the data folder's SQLite and blobs, and this site uses PostgreSQL \(--database-url\): use pg_dump/,
  );
  assertFails(
    await runCli(['restore', '--from', target, '--data', path.join(data, 'new'), '--s3-bucket', 'fh-bucket']),
    1,
    /restore works on .* this site uses S3 \(--s3-bucket\)/,
  );
});
