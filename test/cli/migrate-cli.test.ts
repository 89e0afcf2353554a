import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { LocalBlobStore } from '../../src/blob/local-blob-store.js';
import { S3BlobStore } from '../../src/blob/s3-blob-store.js';
import { main } from '../../src/cli/main.js';
import { openServices } from '../../src/composition.js';
import { type Config, DEFAULTS } from '../../src/config/config.js';
import { openDatabase } from '../../src/configured-stores.js';
import { openSqlite } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { cryptoIds } from '../../src/domain/ids.js';
import { migrateSite } from '../../src/migrate/migrate-service.js';
import { TABLE_NAMES } from '../../src/migrate/table-copy.js';
import { startServer } from '../../src/server.js';
import { assertFails, type CliResult, runCli } from '../helpers/cli.js';
import { createTestSchema, POSTGRES_TEST_URL, postgresSkipReason } from '../helpers/postgres-test-schema.js';
import { bucketContents, createTestBucket, s3SkipReason, s3TestEnvironment, type TestBucket } from '../helpers/s3-test-bucket.js';
import { storeUpload } from '../helpers/store-upload.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const MiB = 1024 ** 2;

/** A site built for the tests: its accounts (with keys) and some of its files. */
interface Site {
  dataDir: string;
  accounts: Array<{ id: number; login: string; password: string; key: string }>;
  /** Files uploaded through the files service, one per distinct blob. */
  uploaded: Array<{ id: string; name: string; sha256: string; size: number }>;
}

const PASSWORD = 'correct horse battery';

/**
 * A site in a data folder with rows in every table: accounts with API keys, `blobs`
 * distinct blobs uploaded through the files service (the first `bigBlob` bytes long, so
 * S3 takes it as a multipart upload), `files - blobs` more file rows sharing them, nested
 * folders whose children sort before their parents, audit, upload log, sessions, sign-in
 * addresses and blacklists: written through SQL in one transaction, so thousands of rows
 * take a moment instead of thousands of HTTP uploads.
 */
async function buildSite(options: { accounts: number; blobs: number; files: number; bigBlob?: number }): Promise<Site> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-migrate-site-'));
  const services = await openServices({ ...DEFAULTS, dataDir, logLevel: 'silent' }, { log: () => {} });
  const site: Site = { dataDir, accounts: [], uploaded: [] };
  try {
    for (let i = 0; i < options.accounts; i++) {
      const login = `user${i}`;
      const account = await services.accounts.create({ login, password: PASSWORD, premiumDays: i % 2 });
      site.accounts.push({ id: account.id, login, password: PASSWORD, key: await services.accounts.apiKeyFor(account) });
    }
    const upload = async (i: number) => {
      const size = i === 0 && options.bigBlob ? options.bigBlob : 500 + ((i * 7919) % 40_000);
      const bytes = randomBytes(size);
      const owner = site.accounts[i % site.accounts.length]!;
      const account = (await services.store.accounts.byId(owner.id))!;
      const { file } = await storeUpload(services, account, `file-${i}.bin`, bytes);
      site.uploaded[i] = { id: file.id, name: file.name, sha256: sha256(bytes), size };
    };
    for (let i = 0; i < options.blobs; i += 8) await Promise.all(Array.from({ length: Math.min(8, options.blobs - i) }, (_, j) => upload(i + j)));
    await services.sessions.start(site.accounts[0]!.id);
    await services.sessions.start(site.accounts[1 % site.accounts.length]!.id);
    await services.files.blacklistAdd('f'.repeat(64), 'test');
    await services.moderation.addNamePattern('*.exe', 'no programs');
    for (let i = 0; i < 3; i++) await services.store.signInAddresses.recordSuccess(randomBytes(32).toString('hex'), Date.now());
  } finally {
    await services.close();
  }

  const { db } = openSqlite(dataDir);
  try {
    await db.transaction().execute(async (trx) => {
      const owners = site.accounts.map((a) => a.id);
      // Children get ids that sort before their parents': a copy in id order must still work.
      const folders: Array<{ id: string; owner_id: number }> = [];
      for (let i = 0; i < 40; i++) {
        const parent = i % 4 === 0 ? null : (folders[folders.length - 1 - (i % 3)] ?? null);
        const id = `${String.fromCharCode(90 - (i % 26))}${cryptoIds.folderId().slice(1)}`;
        const owner = parent?.owner_id ?? owners[i % owners.length]!;
        await trx
          .insertInto('folders')
          .values({ id, owner_id: owner, parent_id: parent?.id ?? null, name: `folder ${i}`, created_at: 1_700_000_000_000 + i })
          .execute();
        folders.push({ id, owner_id: owner });
      }
      const extra = options.files - options.blobs;
      const rows = Array.from({ length: extra }, (_, i) => {
        const blob = site.uploaded[i % site.uploaded.length]!;
        const folder = i % 3 === 0 ? folders[i % folders.length]! : null;
        const status = i % 15 === 0 ? 'D' : i % 10 === 0 ? 'B' : 'A';
        return {
          id: cryptoIds.fileId(),
          owner_id: folder?.owner_id ?? owners[i % owners.length]!,
          folder_id: folder?.id ?? null,
          name: `copy ${i} of ${blob.name}`,
          size: blob.size,
          sha256: blob.sha256,
          status,
          delete_hash: randomBytes(32).toString('hex'),
          created_at: 1_700_000_000_000 + i,
          deleted_at: status === 'D' ? 1_700_100_000_000 + i : null,
          downloads: i % 7,
          last_download_at: i % 7 === 0 ? null : 1_700_200_000_000 + i,
          bytes_served: (i % 7) * blob.size,
        };
      });
      for (let i = 0; i < rows.length; i += 500)
        await trx
          .insertInto('files')
          .values(rows.slice(i, i + 500))
          .execute();
      for (let i = 0; i < 200; i++) {
        await trx
          .insertInto('audit_log')
          .values({ at: 1_700_000_000_000 + i, actor: 'cli:root', action: 'files.block', object: `file:${cryptoIds.fileId()}`, details: `entry ${i}` })
          .execute();
      }
      for (let i = 0; i < 100; i++)
        await trx
          .insertInto('upload_log')
          .values({ account_id: owners[i % owners.length]!, bytes: 1000 + i, at: Date.now() - i * 1000 })
          .execute();
      // Transfers a crash left in flight: copied as they are, for the new site's first start to settle.
      for (let i = 0; i < 3; i++) {
        await trx
          .insertInto('reservations')
          .values({
            account_id: owners[i % owners.length]!,
            kind: i === 0 ? 'upload' : 'traffic',
            planned: 5000 + i,
            settled: 1000 * i,
            server: 'old-host',
            instance: `instance-${i}`,
            lease_until: Date.now() - 1000,
            created_at: Date.now() - 5000,
          })
          .execute();
      }
      // A gc lease a crash left (run out): copied as it is, taken over by the first gc.
      await trx
        .insertInto('run_leases')
        .values({ name: 'gc', holder: 'old-host instance-0', lease_until: Date.now() - 1000 })
        .execute();
      // Resumable uploads in progress and a lock a crash left: rows only (their bytes stay behind, docs/scaling.md).
      for (let i = 0; i < 2; i++) {
        await trx
          .insertInto('resumable_uploads')
          .values({
            id: `${i}`.repeat(32),
            account_id: owners[i % owners.length]!,
            filename: `part ${i}.bin`,
            folder_id: null,
            length: 1000 + i,
            reservation_id: null,
            digest_checkpoints: '[]',
            file_id: null,
            created_at: Date.now() - 5000,
            expires_at: Date.now() + 86_400_000,
          })
          .execute();
      }
      await trx
        .insertInto('upload_locks')
        .values({ upload_id: '0'.repeat(32), holder: 'old-host instance-0 a1', lease_until: Date.now() - 1000, release_requested: 0 })
        .execute();
      // Shares and upload requests (issue 25), a revoked share and a slot a crash left among them.
      const sharedFile = site.uploaded[0]!;
      for (let i = 0; i < 3; i++) {
        await trx
          .insertInto('shares')
          .values({
            id: cryptoIds.linkId(),
            owner_id: i === 0 ? owners[0]! : folders[i]!.owner_id,
            file_id: i === 0 ? sharedFile.id : null,
            folder_id: i === 0 ? null : folders[i]!.id,
            password_hash: i === 1 ? 'scrypt$32768$8$1$c2FsdA==$aGFzaA==' : null,
            expires_at: i === 2 ? 1_800_000_000_000 : null,
            max_downloads: i === 0 ? 5 : null,
            downloads: i,
            fast: i === 0 ? 1 : 0,
            created_at: 1_700_000_000_000 + i,
            revoked_at: i === 2 ? 1_700_000_100_000 : null,
          })
          .execute();
      }
      const requestId = cryptoIds.linkId();
      await trx
        .insertInto('upload_requests')
        .values({
          id: requestId,
          owner_id: folders[0]!.owner_id,
          folder_id: folders[0]!.id,
          title: 'Scans',
          message: 'Up to 3, please',
          password_hash: null,
          expires_at: null,
          max_files: 3,
          max_bytes: 6_000_000_000,
          max_file_size: null,
          files: 1,
          bytes: 1234,
          created_at: 1_700_000_000_000,
          closed: 0,
        })
        .execute();
      await trx
        .insertInto('upload_request_slots')
        .values({ request_id: requestId, bytes: 99, lease_until: Date.now() - 1000, created_at: Date.now() - 5000, upload_id: '1'.repeat(32) })
        .execute();
      await trx
        .insertInto('upload_request_uploads')
        .values({ upload_id: '1'.repeat(32), request_id: requestId, created_at: Date.now() - 5000 })
        .execute();
      // Sign-in methods (issue 26): an identity, a TOTP factor with its recovery codes, a
      // passkey, and a sign-in in progress (minutes long, copied as it is).
      await trx
        .insertInto('account_identities')
        .values({
          account_id: owners[owners.length - 1]!,
          issuer: 'https://sso.example.org',
          subject: 'ada-42',
          email: 'ada@example.org',
          created_at: 1_700_000_000_000,
          last_used_at: null,
        })
        .execute();
      await trx
        .insertInto('totp_factors')
        .values({
          account_id: owners[owners.length - 1]!,
          sealed_secret: 'c2VhbGVk',
          confirmed_at: 1_700_000_000_000,
          last_step: 56_666_666,
          created_at: 1_700_000_000_000,
        })
        .execute();
      await trx
        .insertInto('recovery_codes')
        .values([
          { code_hash: 'a'.repeat(64), account_id: owners[owners.length - 1]!, used_at: null, created_at: 1_700_000_000_000 },
          { code_hash: 'b'.repeat(64), account_id: owners[owners.length - 1]!, used_at: 1_700_000_500_000, created_at: 1_700_000_000_000 },
        ])
        .execute();
      await trx
        .insertInto('passkeys')
        .values({
          id: 'Y3JlZGVudGlhbA',
          account_id: owners[owners.length - 1]!,
          name: 'Phone',
          public_key: 'pQECAyYgASFYIA',
          counter: 7,
          transports: 'internal,hybrid',
          backed_up: 1,
          created_at: 1_700_000_000_000,
          last_used_at: null,
        })
        .execute();
      await trx
        .insertInto('sign_in_challenges')
        .values({ id: 'c'.repeat(64), kind: 'oidc', account_id: null, payload: '{"next":null}', created_at: Date.now(), expires_at: Date.now() + 600_000 })
        .execute();
      // WebDAV (issue 27): a lock and a dead property, copied as they are.
      await trx
        .insertInto('dav_locks')
        .values({
          token: '0b7c3d4e-1f20-4a3b-9c8d-7e6f5a4b3c2d',
          account_id: owners[0]!,
          path: '/Fotos/été.jpg',
          exclusive: 1,
          deep: 0,
          owner_xml: '<D:href xmlns:D="DAV:">mailto:a@example.org</D:href>',
          timeout_seconds: 3600,
          created_at: Date.now(),
          expires_at: Date.now() + 3_600_000,
        })
        .execute();
      await trx
        .insertInto('dav_properties')
        .values({ key: 'd'.repeat(64), account_id: owners[0]!, resource: 'top', namespace: 'urn:x', name: 'colour', value_xml: 'blue' })
        .execute();
      // Bytes served per day (past 2^32, a bigint on both engines), copied as they are.
      await trx
        .insertInto('served_days')
        .values([
          { day: 19_700, bytes: 6_000_000_000 },
          { day: 19_701, bytes: 12_345 },
        ])
        .execute();
      // The console's kept days (migration 0017), copied as they are.
      await trx
        .insertInto('site_days')
        .values({ day: 19_700, uploads: 2, uploaded_bytes: 6_000_000_000, file_bytes: 7_000_000_000, stored_bytes: 6_500_000_000 })
        .execute();
    });
  } finally {
    await db.destroy();
  }
  return site;
}

/** The tables of a SQLite file, read from the file itself (not from the code under test). */
function sqliteTables(file: string): string[] {
  const db = new SQLite(file, { readonly: true });
  try {
    const rows = db
      .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'filehaven_migrations%' order by name")
      .all() as Array<{ name: string }>;
    return rows.map((r) => r.name);
  } finally {
    db.close();
  }
}

/** Every row of a table as sorted text lines, the blob key left out (each store names its own). */
function normalized(rows: Array<Record<string, unknown>>): string[] {
  return rows
    .map((row) =>
      JSON.stringify(
        Object.keys(row)
          .sort()
          .filter((k) => k !== 'object_key')
          .map((k) => [k, row[k] === null ? null : String(row[k])]),
      ),
    )
    .sort();
}

async function sqliteRows(dataDir: string, table: string): Promise<string[]> {
  const db = new SQLite(path.join(dataDir, 'filehaven.db'), { readonly: true });
  try {
    return normalized(db.prepare(`select * from "${table}"`).all() as Array<Record<string, unknown>>);
  } finally {
    db.close();
  }
}

async function postgresRows(schema: string, table: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await client.connect();
  try {
    return normalized((await client.query(`select * from "${schema}"."${table}"`)).rows);
  } finally {
    await client.end();
  }
}

async function postgresQuery<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Flips every bit of one byte in the middle of a file. */
async function flipByte(file: string): Promise<void> {
  const bytes = await readFile(file);
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  await writeFile(file, bytes);
}

const blobFile = (dataDir: string, digest: string) => path.join(dataDir, 'blobs', digest.slice(0, 2), digest.slice(2, 4), digest);

/** Asserts exit 0 and no stderr; returns stdout. */
function assertMigrated(result: CliResult): string {
  assert.equal(result.code, 0, `exit code; stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  assert.equal(result.stderr, '', 'nothing on stderr');
  assert.match(result.stdout, /^migration complete and verified in /m);
  return result.stdout;
}

/**
 * The CLI's main() in this process, its console captured: for runs that are refused before
 * any blob moves, where starting a process per case (seconds on a busy machine) buys
 * nothing. The copies themselves run the real `filehaven` process (runCli).
 */
async function cliInProcess(args: string[]): Promise<CliResult> {
  const output = { stdout: '', stderr: '' };
  const saved = { log: console.log, error: console.error };
  console.log = (...parts: unknown[]) => {
    output.stdout += `${parts.join(' ')}\n`;
  };
  console.error = (...parts: unknown[]) => {
    output.stderr += `${parts.join(' ')}\n`;
  };
  try {
    const code = await main(args);
    return { code, ...output };
  } finally {
    Object.assign(console, saved);
  }
}

const pgSkip = await postgresSkipReason();
const s3Skip = s3SkipReason();

describe('filehaven migrate', { concurrency: 1, timeout: 120_000, skip: pgSkip }, () => {
  // Only the tests that move blobs to S3 need the S3 server; the others run on PostgreSQL alone.
  const needsS3 = { skip: s3Skip };
  const s3 = s3TestEnvironment() ?? { endpoint: 'http://s3.invalid', accessKeyId: '', secretAccessKey: '' };
  /** What the CLI needs to reach the test S3 server (the SDK's credential chain). */
  const s3Env = () => ({
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    // The SDK's multi-line notice about Node 22 would be the only thing on stderr.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  const toS3 = (bucket: string) => ['--to-s3-bucket', bucket, '--to-s3-endpoint', s3.endpoint, '--to-s3-force-path-style'];
  const toPostgres = (schema: string) => ['--to-database-url', POSTGRES_TEST_URL, '--to-database-schema', schema];
  const cleanups: Array<() => Promise<void>> = [];
  const schema = async () => {
    const created = await createTestSchema();
    cleanups.push(created.drop);
    return created.schema;
  };
  const bucket = async (): Promise<TestBucket> => {
    const created = await createTestBucket();
    cleanups.push(created.remove);
    return created;
  };
  /** The config a server on the migrated backend starts with. */
  const targetConfig = (dataDir: string, target: { schema?: string; bucket?: string }): Config => ({
    ...DEFAULTS,
    port: 0,
    dataDir,
    logLevel: 'silent',
    ...(target.schema ? { databaseUrl: POSTGRES_TEST_URL, databaseSchema: target.schema } : {}),
    ...(target.bucket ? { s3Bucket: target.bucket, s3Endpoint: s3.endpoint, s3ForcePathStyle: true, s3Checksums: 'when_required' as const } : {}),
  });
  /** Runs `work` with the S3 credentials in this process's environment (an in-process server reads them there). */
  const withS3Credentials = async <T>(work: () => Promise<T>): Promise<T> => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    try {
      return await work();
    } finally {
      for (const [name, value] of [
        ['AWS_ACCESS_KEY_ID', saved.id],
        ['AWS_SECRET_ACCESS_KEY', saved.secret],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  };

  let big: Site;
  let small: Site;

  before(async () => {
    const started = performance.now();
    // The large site is for the S3 tests only.
    if (!s3Skip) big = await buildSite({ accounts: 5, blobs: 300, files: 3000, bigBlob: 12 * MiB + 5 });
    small = await buildSite({ accounts: 2, blobs: 6, files: 20 });
    console.log(`# sites built in ${Math.round(performance.now() - started)} ms`);
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error('cleanup failed', error));
    for (const site of [big, small]) if (site) await rm(site.dataDir, { recursive: true, force: true });
  });

  test('3,000 files over 300 blobs move to PostgreSQL + S3; a server on the new backend serves them and the keys still work', needsS3, async () => {
    const testBucket = await bucket();
    const target = { schema: await schema(), bucket: testBucket.bucket };
    const started = performance.now();
    const out = assertMigrated(await runCli(['migrate', '--data', big.dataDir, ...toPostgres(target.schema), ...toS3(target.bucket)], s3Env()));
    const ms = performance.now() - started;
    const blobLine = /blobs +300 \(([\d.]+ \w+)\): 300 copied now \([^)]*\), 0 by an earlier run/.exec(out);
    assert.ok(blobLine, out);
    assert.match(out, /every blob's bytes were hashed while copied and matched its row's SHA-256 and size/);
    assert.match(out, /^blobs: \d+\/300 \(/m, 'blob progress lines');
    assert.match(out, /^tables: files 3000\/3000$/m);
    assert.match(
      out,
      new RegExp(
        `filehaven serve --data \\S+ --database-url \\S+ --database-schema ${target.schema} --s3-bucket ${target.bucket} --s3-endpoint \\S+ --s3-force-path-style true`,
      ),
    );
    const progress = out.split('\n').filter((line) => /^(tables|blobs|verify):/.test(line));
    // At most one line per 500 ms, plus each phase's and each table's last line: the count
    // follows the time taken (a loaded machine prints more), never the rows.
    const allowed = Math.ceil(ms / 500) + TABLE_NAMES.length + 4;
    assert.ok(
      progress.length <= allowed && progress.length < 300,
      `${progress.length} progress lines in ${Math.round(ms)} ms, over ${allowed}:\n${progress.join('\n')}`,
    );
    console.log(
      `# migrated 3000 files / 300 blobs (${blobLine[1]}) in ${Math.round(ms)} ms with CLI start; ${/^migration complete.*$/m.exec(out)?.[0]}; ${/^ +blobs +300.*$/m.exec(out)?.[0]?.trim()}`,
    );

    // Every table of the source, found in the SQLite file itself, holds rows and arrives
    // row for row: a table the migration forgot fails here.
    const tables = sqliteTables(path.join(big.dataDir, 'filehaven.db'));
    assert.ok(tables.length >= 11, tables.join());
    for (const table of tables) {
      const rows = await sqliteRows(big.dataDir, table);
      assert.ok(rows.length > 0, `the source's ${table} holds rows`);
      // The site's totals are the database's own: the target's triggers counted what was
      // copied in, and migrate folded them; their sums agree, not their rows.
      if (table === 'site_totals') continue;
      assert.deepEqual(await postgresRows(target.schema, table), rows, `table ${table}`);
    }
    const sums = `select kind, sum(items) as items, sum(bytes) as bytes, sum(downloads) as downloads, sum(served) as served from site_totals group by kind order by kind`;
    const sourceSums = (() => {
      const db = new SQLite(path.join(big.dataDir, 'filehaven.db'), { readonly: true });
      try {
        return normalized(db.prepare(sums).all() as Array<Record<string, unknown>>);
      } finally {
        db.close();
      }
    })();
    assert.deepEqual(normalized(await postgresQuery(sums.replace('from site_totals', `from "${target.schema}".site_totals`))), sourceSums, 'the site totals');
    assert.equal((await postgresQuery(`select 1 from "${target.schema}".site_totals`)).length, 4, 'folded at the end: one row per kind');
    const keys = await postgresQuery<{ object_key: string }>(`select object_key from "${target.schema}".blobs`);
    const { objects } = await bucketContents(testBucket.client, target.bucket);
    assert.deepEqual(objects, keys.map((k) => `blobs/${k.object_key}`).sort(), 'one object per blob row, nothing else');

    await withS3Credentials(async () => {
      const server = await startServer(targetConfig(big.dataDir, target), { log: () => {} });
      try {
        const url = server.baseUrl;
        for (const file of [big.uploaded[0]!, big.uploaded[123]!, big.uploaded[299]!]) {
          const response = await fetch(`${url}/${file.id}/${encodeURIComponent(file.name)}?download=1`);
          assert.equal(response.status, 200, `download of ${file.id}`);
          assert.equal(sha256(Buffer.from(await response.arrayBuffer())), file.sha256, `bytes of ${file.id}`);
        }
        const alice = big.accounts[0]!;
        const account = await fetch(`${url}/account`, { headers: { Authorization: alice.key } });
        assert.equal(account.status, 200, await account.text());
        // The password still signs in and gives back the same key (sealed with the same secret).
        const keyResponse = await fetch(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: alice.login, password: alice.password }) });
        const keyBody = await keyResponse.text();
        assert.ok(keyBody.includes(alice.key), `POST /apikeys answers the same key: ${keyResponse.status} ${keyBody}`);
        // The sequences moved past the copied ids: new accounts, audit and upload rows insert.
        const fresh = await server.services.accounts.create({ login: 'after-migration', password: PASSWORD });
        assert.equal(fresh.id, Math.max(...big.accounts.map((a) => a.id)) + 1);
        await server.services.audit.record({ actor: 'test', action: 'test.after', object: 'x', details: '' });
        const form = new FormData();
        form.append('upload', new Blob([new Uint8Array(randomBytes(5000))]), 'new.bin');
        const uploaded = await fetch(`${url}/files`, { method: 'POST', headers: { Authorization: alice.key }, body: form });
        assert.equal(uploaded.status, 201, await uploaded.text());
      } finally {
        await server.close();
      }
    });
  });

  test('an interrupted migration is resumed to completion by a rerun, with nothing copied twice or left over', needsS3, async () => {
    // A site of its own, smaller than the big one: what matters is stopping halfway.
    const site = await buildSite({ accounts: 2, blobs: 80, files: 400 });
    cleanups.push(() => rm(site.dataDir, { recursive: true, force: true }));
    const target = { schema: await schema(), bucket: await bucket() };
    const source: Config = { ...DEFAULTS, dataDir: site.dataDir };
    const sourceDb = openDatabase(source);
    const targetDb = openDatabase({ ...source, databaseUrl: POSTGRES_TEST_URL, databaseSchema: target.schema });
    const controller = new AbortController();
    let seen = 0;
    try {
      await migrateToLatest(targetDb.db, targetDb.schema);
      const run = migrateSite({
        source: { database: sourceDb, blobs: new LocalBlobStore(site.dataDir) },
        targetDatabase: targetDb,
        targetBlobs: new S3BlobStore({ bucket: target.bucket.bucket, prefix: '', client: target.bucket.client, partSize: 8 * MiB, queueSize: 4 }),
        signal: controller.signal,
        onProgress: (progress) => {
          if (progress.phase === 'blobs' && progress.done >= 20 && !controller.signal.aborted) {
            seen = progress.done;
            controller.abort(new Error('stopped by the test'));
          }
        },
      });
      await assert.rejects(run, /stopped by the test/);
    } finally {
      await sourceDb.db.destroy();
      await targetDb.db.destroy();
    }
    const copiedRows = (await postgresQuery<{ n: string }>(`select count(*) as n from "${target.schema}".blobs`))[0]!.n;
    assert.ok(Number(copiedRows) >= seen && Number(copiedRows) < 80, `some blobs copied before the abort: ${copiedRows}`);
    const fileRows = (await postgresQuery<{ n: string }>(`select count(*) as n from "${target.schema}".files`))[0]!.n;
    assert.equal(Number(fileRows), 0, 'no file row before its blob');
    const halfway = await bucketContents(target.bucket.client, target.bucket.bucket);
    assert.deepEqual(halfway.uploads, [], 'the aborted uploads left no multipart upload');

    const out = assertMigrated(await runCli(['migrate', '--data', site.dataDir, ...toPostgres(target.schema), ...toS3(target.bucket.bucket)], s3Env()));
    assert.match(out, /\(resumed an earlier run\)/);
    const resumed = /blobs +80 \([^)]*\): (\d+) copied now \([^)]*\), (\d+) by an earlier run/.exec(out);
    assert.ok(resumed, out);
    assert.equal(Number(resumed[2]), Number(copiedRows));
    assert.equal(Number(resumed[1]) + Number(resumed[2]), 80);
    const keys = await postgresQuery<{ object_key: string }>(`select object_key from "${target.schema}".blobs`);
    const done = await bucketContents(target.bucket.client, target.bucket.bucket);
    assert.deepEqual(done.objects, keys.map((k) => `blobs/${k.object_key}`).sort(), 'one object per blob row: nothing copied twice');
    assert.deepEqual(await postgresRows(target.schema, 'files'), await sqliteRows(site.dataDir, 'files'));
  });

  test('a source blob whose bytes changed on disk stops the migration, naming its digest', needsS3, async () => {
    const site = await buildSite({ accounts: 1, blobs: 5, files: 10 });
    cleanups.push(() => rm(site.dataDir, { recursive: true, force: true }));
    const damaged = site.uploaded[2]!;
    await flipByte(blobFile(site.dataDir, damaged.sha256));
    const target = { schema: await schema(), bucket: await bucket() };
    const result = await runCli(['migrate', '--data', site.dataDir, ...toPostgres(target.schema), ...toS3(target.bucket.bucket)], s3Env());
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`^filehaven migrate: blob ${damaged.sha256} is damaged in the source store`));
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
    const rows = await postgresQuery<{ sha256: string }>(`select sha256 from "${target.schema}".blobs where sha256 = '${damaged.sha256}'`);
    assert.deepEqual(rows, [], 'no row for the damaged blob');
    const left = await bucketContents(target.bucket.client, target.bucket.bucket);
    const named = await postgresQuery<{ object_key: string }>(`select object_key from "${target.schema}".blobs`);
    assert.deepEqual(left.objects, named.map((k) => `blobs/${k.object_key}`).sort(), 'the damaged copy was dropped');
    assert.deepEqual(left.uploads, []);
  });

  test('a target holding another installation, or any data, is refused in one line', async () => {
    // Another site, set up on the schema with its own secret.
    const foreign = await schema();
    const otherDir = await mkdtemp(path.join(tmpdir(), 'filehaven-migrate-other-'));
    cleanups.push(() => rm(otherDir, { recursive: true, force: true }));
    const other = await openServices(
      { ...DEFAULTS, dataDir: otherDir, databaseUrl: POSTGRES_TEST_URL, databaseSchema: foreign, logLevel: 'silent' },
      { log: () => {} },
    );
    await other.close();

    // Rows without any fingerprint: no earlier copy of this site either.
    const littered = await schema();
    const { db } = openDatabase({ ...DEFAULTS, databaseUrl: POSTGRES_TEST_URL, databaseSchema: littered });
    try {
      await migrateToLatest(db, littered);
      await db.insertInto('blacklist_names').values({ pattern: '*.zip', reason: '', created_at: 1 }).execute();
    } finally {
      await db.destroy();
    }

    const elsewhere = await schema();
    const another = await cliInProcess(['migrate', '--data', small.dataDir, ...toPostgres(foreign)]);
    const notEmpty = await cliInProcess(['migrate', '--data', small.dataDir, ...toPostgres(littered)]);
    // The same database under another spelling of its address.
    const itself = await cliInProcess([
      'migrate',
      '--data',
      small.dataDir,
      '--database-url',
      POSTGRES_TEST_URL,
      '--database-schema',
      elsewhere,
      '--to-database-url',
      POSTGRES_TEST_URL.replace('127.0.0.1', 'localhost'),
      '--to-database-schema',
      elsewhere,
    ]);
    assertFails(
      another,
      1,
      /^filehaven migrate: the target database already holds another filehaven installation \(a different secret fingerprint in server_settings\)/,
    );
    assertFails(notEmpty, 1, /^filehaven migrate: the target database is not empty \(its blacklist_names table holds rows\)/);
    assertFails(itself, 1, /^filehaven migrate: the target database is the source database/);
  });

  test('source and target the same, or no target, are refused before anything opens', async () => {
    const nowhere = path.join(small.dataDir, 'no-such-site');
    const cases: Array<[string[], 1 | 2, RegExp]> = [
      [['--database-url', POSTGRES_TEST_URL, '--to-database-url', POSTGRES_TEST_URL], 1, /^filehaven migrate: source and target are the same/],
      [['--s3-bucket', 'some-bucket', '--to-s3-bucket', 'some-bucket', '--to-s3-region', 'eu-west-1'], 1, /^filehaven migrate: source and target are the same/],
      [[], 2, /^filehaven migrate: say where the site moves: --to-database-url and\/or --to-s3-bucket/],
      [['--to-s3-prefix', 'x/'], 2, /^filehaven migrate: --to-s3-prefix needs --to-s3-bucket/],
      [['--to-database-url', 'mysql://x'], 2, /^filehaven migrate: invalid --to-database-url "mysql:\/\/x"/],
      [['--data', nowhere, ...toPostgres('unused')], 1, /^filehaven migrate: no data folder at /],
    ];
    for (const [args, code, message] of cases) assertFails(await cliInProcess(['migrate', '--data', small.dataDir, ...args]), code, message);
  });

  test('metadata alone moves to PostgreSQL, the blobs stay in the data folder', async () => {
    const target = { schema: await schema() };
    const out = assertMigrated(await runCli(['migrate', '--data', small.dataDir, ...toPostgres(target.schema)]));
    assert.doesNotMatch(out, /^blobs:/m, 'no blob is copied');
    const server = await startServer(targetConfig(small.dataDir, target), { log: () => {} });
    try {
      const file = small.uploaded[1]!;
      const response = await fetch(`${server.baseUrl}/${file.id}/${file.name}?download=1`);
      assert.equal(sha256(Buffer.from(await response.arrayBuffer())), file.sha256);
    } finally {
      await server.close();
    }
  });

  test('blobs alone move to S3: the database stays and names the new objects; a rerun copies nothing', needsS3, async () => {
    const site = await buildSite({ accounts: 1, blobs: 4, files: 8 });
    cleanups.push(() => rm(site.dataDir, { recursive: true, force: true }));
    const target = { bucket: (await bucket()).bucket };
    const out = assertMigrated(await runCli(['migrate', '--data', site.dataDir, ...toS3(target.bucket)], s3Env()));
    assert.match(out, /blobs +4 \([^)]*\): 4 copied now/);
    assert.match(out, /the database now names the blobs in the new store/);
    const again = assertMigrated(await runCli(['migrate', '--data', site.dataDir, ...toS3(target.bucket)], s3Env()));
    assert.match(again, /: 0 copied now \([^)]*\), 4 by an earlier run/);
    await withS3Credentials(async () => {
      const server = await startServer(targetConfig(site.dataDir, target), { log: () => {} });
      try {
        for (const file of site.uploaded) {
          const response = await fetch(`${server.baseUrl}/${file.id}/${file.name}?download=1`);
          assert.equal(sha256(Buffer.from(await response.arrayBuffer())), file.sha256, file.id);
        }
      } finally {
        await server.close();
      }
    });
  });
});
