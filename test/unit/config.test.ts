import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, DEFAULTS, loadConfig, resolveUrls, SETTINGS } from '../../src/config/config.js';
import { redactUrl } from '../../src/configured-stores.js';

/** Asserts that loading throws a ConfigError whose message names `source` and the expectation. */
function assertConfigError(flags: Record<string, string | undefined>, env: NodeJS.ProcessEnv, source: string, expected: RegExp): void {
  assert.throws(
    () => loadConfig(flags, env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `not a ConfigError: ${String(error)}`);
      assert.ok(error.message.includes(source), `"${error.message}" does not name ${source}`);
      assert.match(error.message, expected);
      return true;
    },
  );
}

describe('loadConfig', () => {
  test('nothing given: the defaults', () => {
    assert.deepEqual(loadConfig({}, {}), DEFAULTS);
  });

  test('environment variables are read and parsed', () => {
    const config = loadConfig(
      {},
      {
        FILEHAVEN_PORT: '9000',
        FILEHAVEN_HOST: '0.0.0.0',
        FILEHAVEN_DATA: '/srv/filehaven',
        FILEHAVEN_PUBLIC_URL: 'https://files.example.com/',
        FILEHAVEN_WEB_URL: 'https://www.example.com',
        FILEHAVEN_SECRET: 's'.repeat(16),
        FILEHAVEN_MAX_FILE_SIZE: '2GiB',
        FILEHAVEN_DIRECT_LINK_TTL: '30m',
        FILEHAVEN_DIRECT_LINK_REQUIRES_KEY: 'false',
        FILEHAVEN_LOG_LEVEL: 'warn',
      },
    );
    assert.deepEqual(config, {
      ...DEFAULTS,
      port: 9000,
      host: '0.0.0.0',
      dataDir: '/srv/filehaven',
      // Trailing slashes go, so paths can be appended.
      publicUrl: 'https://files.example.com',
      webUrl: 'https://www.example.com',
      secret: 's'.repeat(16),
      maxFileSize: 2 * 1024 ** 3,
      directLinkTtlMs: 1_800_000,
      directLinkRequiresKey: false,
      logLevel: 'warn',
    });
  });

  test('flags beat the environment, setting by setting', () => {
    const config = loadConfig({ port: '7000', data: '/from/flag' }, { FILEHAVEN_PORT: '9000', FILEHAVEN_DATA: '/from/env', FILEHAVEN_HOST: '::1' });
    assert.equal(config.port, 7000);
    assert.equal(config.dataDir, '/from/flag');
    assert.equal(config.host, '::1');
  });

  test('a flag replaces an environment value, even an invalid one', () => {
    assert.equal(loadConfig({ port: '0' }, { FILEHAVEN_PORT: 'abc' }).port, 0);
  });

  test('an undefined flag falls back to the environment', () => {
    assert.equal(loadConfig({ port: undefined }, { FILEHAVEN_PORT: '1234' }).port, 1234);
  });

  test('does not touch the objects it is given', () => {
    const flags = { port: '1' };
    const env = { FILEHAVEN_HOST: 'h' };
    loadConfig(flags, env);
    assert.deepEqual(flags, { port: '1' });
    assert.deepEqual(env, { FILEHAVEN_HOST: 'h' });
    assert.equal(DEFAULTS.port, 8080);
  });

  test('a bad flag is a ConfigError naming the flag and what was expected', () => {
    assertConfigError({ port: '99999' }, {}, '--port', /99999.*port number 0-65535/);
    assertConfigError({ port: '-1' }, {}, '--port', /port number/);
    assertConfigError({ 'public-url': 'ftp://x' }, {}, '--public-url', /http\(s\) URL/);
    assertConfigError({ 'web-url': 'not a url' }, {}, '--web-url', /http\(s\) URL/);
    assertConfigError({ secret: 'short' }, {}, '--secret', /at least 16 characters/);
    assertConfigError({ 'max-file-size': '0' }, {}, '--max-file-size', /size/);
    assertConfigError({ 'max-file-size': 'lots' }, {}, '--max-file-size', /size/);
    assertConfigError({ 'direct-link-ttl': '0s' }, {}, '--direct-link-ttl', /duration/);
    assertConfigError({ 'direct-link-requires-key': 'maybe' }, {}, '--direct-link-requires-key', /true or false/);
    assertConfigError({ 'log-level': 'loud' }, {}, '--log-level', /silent/);
    assertConfigError({ data: '  ' }, {}, '--data', /folder/);
  });

  test('--upload-chunk-size: 64 MiB unless set, a size of at least 1 MiB', () => {
    assert.equal(DEFAULTS.uploadChunkSize, 64 * 1024 * 1024);
    assert.equal(loadConfig({ 'upload-chunk-size': '95MB' }, {}).uploadChunkSize, 95_000_000);
    assert.equal(loadConfig({}, { FILEHAVEN_UPLOAD_CHUNK_SIZE: '1MiB' }).uploadChunkSize, 1024 * 1024);
    assertConfigError({ 'upload-chunk-size': '1023KiB' }, {}, '--upload-chunk-size', /"1023KiB": expected a size of at least 1MiB/);
    assertConfigError({}, { FILEHAVEN_UPLOAD_CHUNK_SIZE: 'big' }, 'FILEHAVEN_UPLOAD_CHUNK_SIZE', /at least 1MiB/);
  });

  test('--temp-grace is at least a minute, so gc never takes the temp file of an upload in progress', () => {
    assertConfigError({ 'temp-grace': '0' }, {}, '--temp-grace', /at least 1m/);
    assertConfigError({ 'temp-grace': '59s' }, {}, '--temp-grace', /at least 1m/);
    assertConfigError({}, { FILEHAVEN_TEMP_GRACE: '0s' }, 'FILEHAVEN_TEMP_GRACE', /at least 1m/);
    assert.equal(loadConfig({ 'temp-grace': '1m' }, {}).tempGraceMs, 60_000);
  });

  test('a bad environment value is a ConfigError naming the variable', () => {
    assertConfigError({}, { FILEHAVEN_PORT: 'abc' }, 'FILEHAVEN_PORT', /"abc".*port number/);
    assertConfigError({}, { FILEHAVEN_PORT: '65536' }, 'FILEHAVEN_PORT', /port number/);
    assertConfigError({}, { FILEHAVEN_MAX_FILE_SIZE: '-5' }, 'FILEHAVEN_MAX_FILE_SIZE', /size/);
    assertConfigError({}, { FILEHAVEN_DIRECT_LINK_REQUIRES_KEY: '2' }, 'FILEHAVEN_DIRECT_LINK_REQUIRES_KEY', /true or false/);
  });

  test('booleans accept the usual spellings', () => {
    for (const yes of ['1', 'true', 'YES', 'on']) assert.equal(loadConfig({ 'direct-link-requires-key': yes }, {}).directLinkRequiresKey, true);
    for (const no of ['0', 'false', 'No', 'OFF']) assert.equal(loadConfig({ 'direct-link-requires-key': no }, {}).directLinkRequiresKey, false);
  });

  test('the docs/configuration.md table has a row for every setting', async () => {
    const doc = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    for (const s of SETTINGS) assert.ok(doc.includes(`| \`--${s.flag}\` | \`${s.env}\` |`), `docs/configuration.md row for --${s.flag}`);
  });

  test('every setting has a distinct flag and FILEHAVEN_ variable', () => {
    assert.equal(new Set(SETTINGS.map((s) => s.flag)).size, SETTINGS.length);
    assert.equal(new Set(SETTINGS.map((s) => s.env)).size, SETTINGS.length);
    for (const s of SETTINGS) assert.match(s.env, /^FILEHAVEN_[A-Z0-9_]+$/);
  });
});

describe('storage settings', () => {
  test('PostgreSQL and S3 are chosen by settings, with their defaults', () => {
    const config = loadConfig(
      { 'database-url': 'postgres://fh:pw@db:5432/site', 's3-bucket': 'fh-blobs', 's3-prefix': 'site-a/', 's3-part-size': '16MiB' },
      { FILEHAVEN_DATABASE_SCHEMA: 'site_a', FILEHAVEN_S3_FORCE_PATH_STYLE: 'true' },
    );
    assert.equal(config.databaseUrl, 'postgres://fh:pw@db:5432/site');
    assert.equal(config.databaseSchema, 'site_a');
    assert.equal(config.databasePoolSize, 20);
    assert.equal(config.databasePoolWaitMs, 10_000);
    assert.equal(config.s3Bucket, 'fh-blobs');
    assert.equal(config.s3Prefix, 'site-a/');
    assert.equal(config.s3PartSize, 16 * 1024 ** 2);
    assert.equal(config.s3QueueSize, 4);
    assert.equal(config.s3ForcePathStyle, true);
    assert.equal(config.s3Checksums, 'auto');
    assert.equal(loadConfig({}, {}).databaseUrl, null, 'SQLite by default');
    assert.equal(loadConfig({}, {}).s3Bucket, null, 'the data folder by default');
  });

  test('values that cannot be right are refused, naming the setting', () => {
    for (const [flag, value, expected] of [
      ['database-url', 'mysql://root@db/x', /invalid --database-url/],
      ['database-schema', 'Robert"); drop', /invalid --database-schema/],
      ['database-pool-size', '0', /invalid --database-pool-size/],
      ['s3-bucket', 'UPPER_case', /invalid --s3-bucket/],
      ['s3-prefix', '../up/', /invalid --s3-prefix/],
      ['s3-prefix', 'no-slash', /invalid --s3-prefix/],
      ['s3-part-size', '4MiB', /invalid --s3-part-size "4MiB": expected a size from 5MiB to 5GiB/],
      ['s3-queue-size', '17', /invalid --s3-queue-size/],
      ['s3-checksums', 'always', /invalid --s3-checksums/],
    ] as const) {
      assert.throws(
        () => loadConfig({ [flag]: value }, {}),
        (error: unknown) => error instanceof ConfigError && expected.test(error.message),
        `${flag} ${value}`,
      );
    }
  });
});

describe('secrets in messages', () => {
  test('an invalid setting that holds a secret is named, its value never repeated; URLs are shown without their password', () => {
    for (const [flag, value, shown] of [
      ['secret', 'short-s3cret', '(value not shown: it may hold a secret)'],
      ['metrics-token', 'has spaces s3cret', '(value not shown: it may hold a secret)'],
      ['redis-url', 'valkey://:hunter2pass@redis.internal:6379', '"valkey://:***@redis.internal:6379"'],
      ['database-url', 'mysql://root:hunter2pass@db/x?password=hunter2', '"mysql://root:***@db/x?password=***"'],
      ['database-url', 'not a url hunter2', '(value not shown: it may hold a secret)'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [flag]: value }, {}),
        (error: unknown) =>
          error instanceof ConfigError && error.message.startsWith(`invalid --${flag} ${shown}: expected`) && !/s3cret|hunter2/.test(error.message),
        flag,
      );
    }
  });

  test('URLs in messages lose their password, in the user part or the query', () => {
    assert.equal(redactUrl('redis://:hunter2@redis.internal:6379/0'), 'redis://:***@redis.internal:6379/0');
    assert.equal(redactUrl('redis://redis.internal:6379/0?password=hunter2&db=1'), 'redis://redis.internal:6379/0?password=***&db=***');
    assert.equal(redactUrl('postgres://fh:hunter2@db:5432/fh'), 'postgres://fh:***@db:5432/fh');
  });
});

describe('resolveUrls', () => {
  test('derives the URLs from the listening address; a wildcard host shows as loopback', () => {
    assert.deepEqual(resolveUrls(DEFAULTS, { host: '127.0.0.1', port: 8080 }), { baseUrl: 'http://127.0.0.1:8080', webUrl: 'http://127.0.0.1:8080' });
    assert.equal(resolveUrls(DEFAULTS, { host: '0.0.0.0', port: 1 }).baseUrl, 'http://127.0.0.1:1');
    assert.equal(resolveUrls(DEFAULTS, { host: '::1', port: 2 }).baseUrl, 'http://[::1]:2');
  });

  test('configured URLs win', () => {
    const config = { ...DEFAULTS, publicUrl: 'https://api.example.com', webUrl: 'https://example.com' };
    assert.deepEqual(resolveUrls(config, { host: '127.0.0.1', port: 8080 }), { baseUrl: 'https://api.example.com', webUrl: 'https://example.com' });
    assert.equal(resolveUrls({ ...DEFAULTS, publicUrl: 'https://api.example.com' }, { host: 'h', port: 1 }).webUrl, 'https://api.example.com');
  });
});

describe('config file', () => {
  const write = (content: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'filehaven-config-'));
    const file = path.join(dir, 'filehaven.json');
    writeFileSync(file, content);
    return file;
  };

  test('a JSON file of flag names sets values; env and flags win over it', () => {
    const file = write(JSON.stringify({ port: 7000, 'max-file-size': '1GiB', 'upload-volume-free': 'unlimited', 'trust-proxy': true, host: '10.0.0.1' }));
    const config = loadConfig({ config: file, port: '7001' }, { FILEHAVEN_HOST: '0.0.0.0' });
    assert.equal(config.port, 7001);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.maxFileSize, 1024 ** 3);
    assert.equal(config.uploadVolumeFree, null);
    assert.equal(config.trustProxy, true);
    assert.equal(loadConfig({}, { FILEHAVEN_CONFIG: file }).port, 7000);
  });

  test('unknown keys, bad values, bad JSON and a missing file are clear errors', () => {
    assert.throws(() => loadConfig({ config: write('{"prot": 1}') }, {}), /unknown setting "prot"/);
    assert.throws(() => loadConfig({ config: write('{"port": "x"}') }, {}), /invalid "port" in .*filehaven.json "x": expected a port number/);
    assert.throws(() => loadConfig({ config: write('{port: 1') }, {}), /cannot read config file/);
    assert.throws(() => loadConfig({ config: write('[1]') }, {}), /must hold a JSON object/);
    assert.throws(() => loadConfig({ config: write('{"port": [1]}') }, {}), /must be a string, number or boolean/);
    assert.throws(() => loadConfig({ config: '/nonexistent/filehaven.json' }, {}), /no such file/);
  });
});
