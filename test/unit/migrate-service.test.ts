import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { LocalBlobStore } from '../../src/blob/local-blob-store.js';
import { progressPrinter } from '../../src/cli/operator/migrate.js';
import { humanBytes } from '../../src/config/units.js';
import { type OpenedDatabase, openSqlite } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { type MigrateProgress, migrateSite } from '../../src/migrate/migrate-service.js';
import { COPIED_TABLE_NAMES, TABLE_NAMES } from '../../src/migrate/table-copy.js';

/*
 * The migration between two SQLite databases and two data folders: the same service the
 * CLI runs against PostgreSQL and S3 (test/cli/migrate-cli.test.ts), here without servers,
 * so the table list, the copy order, resuming and verification are checked everywhere.
 */

async function tablesOf(opened: OpenedDatabase): Promise<string[]> {
  const { rows } = await sql<{
    name: string;
  }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'filehaven_migrations%'`.execute(opened.db);
  return rows.map((r) => r.name).sort();
}

/** A source with rows in every table; blobs through the store, the rest through SQL. */
async function fillSource(dir: string, blobCount: number): Promise<OpenedDatabase> {
  const opened = openSqlite(dir);
  await migrateToLatest(opened.db);
  const store = new LocalBlobStore(dir);
  await store.init();
  const { db } = opened;
  await db.insertInto('server_settings').values({ name: 'secret_fingerprint', value: 'fp-of-the-source' }).execute();
  for (let i = 1; i <= 3; i++) {
    await db
      .insertInto('accounts')
      .values({
        id: i * 10,
        login: `user${i}`,
        password_hash: 'x',
        name: '',
        email: '',
        balance_cents: i,
        premium_start: null,
        premium_end: null,
        traffic_left: 0,
        api_key_hash: null,
        api_key_sealed: null,
        is_operator: 0,
        disabled: 0,
        created_at: i,
      })
      .execute();
  }
  // A chain of folders whose children sort before their parents.
  const folderIds = ['ZZZZZZZZZ1', 'MMMMMMMMM1', 'AAAAAAAAA1'];
  for (const [i, id] of folderIds.entries()) {
    await db
      .insertInto('folders')
      .values({ id, owner_id: 10, parent_id: i === 0 ? null : folderIds[i - 1]!, name: `f${i}`, created_at: i })
      .execute();
  }
  for (let i = 0; i < blobCount; i++) {
    const bytes = randomBytes(100 + i * 37);
    const staged = await store.stage(Readable.from([bytes]), { maxBytes: 1e9 });
    const key = await store.publish(staged);
    await db.insertInto('blobs').values({ sha256: staged.sha256, size: staged.size, created_at: i, object_key: key }).execute();
    for (let copy = 0; copy < 3; copy++) {
      await db
        .insertInto('files')
        .values({
          id: `F${String(i * 3 + copy).padStart(9, '0')}`,
          owner_id: 10 * (1 + (copy % 3)),
          folder_id: copy === 0 ? 'AAAAAAAAA1' : null,
          name: `file ${i}.${copy}`,
          size: staged.size,
          sha256: staged.sha256,
          status: 'A',
          delete_hash: 'd'.repeat(64),
          created_at: i,
          deleted_at: null,
          downloads: copy,
          last_download_at: null,
        })
        .execute();
    }
  }
  await db
    .insertInto('sessions')
    .values({ id: 's'.repeat(64), account_id: 10, csrf_secret: 'c', created_at: 1, expires_at: 2, last_seen_at: 1 })
    .execute();
  await db.insertInto('upload_log').values({ account_id: 20, bytes: 5, at: 1 }).execute();
  await db
    .insertInto('reservations')
    .values({ account_id: 20, kind: 'traffic', planned: 9, settled: 4, server: 'web-1', instance: 'i-1', lease_until: 2, created_at: 1 })
    .execute();
  await db.insertInto('run_leases').values({ name: 'gc', holder: 'web-1 i-1', lease_until: 2 }).execute();
  await db
    .insertInto('resumable_uploads')
    .values({
      id: 'a'.repeat(32),
      account_id: 20,
      filename: 'half.bin',
      folder_id: null,
      length: 100,
      reservation_id: null,
      digest_checkpoints: '[]',
      file_id: null,
      created_at: 1,
      expires_at: 3,
    })
    .execute();
  await db
    .insertInto('upload_locks')
    .values({ upload_id: 'a'.repeat(32), holder: 'web-1 i-1 x', lease_until: 2, release_requested: 0 })
    .execute();
  await db
    .insertInto('served_days')
    .values([
      { day: 20_000, bytes: 5_000_000_000 },
      { day: 20_001, bytes: 7 },
    ])
    .execute();
  await db
    .insertInto('shares')
    .values([
      {
        id: 'S'.repeat(22),
        owner_id: 20,
        file_id: 'F'.repeat(10),
        folder_id: null,
        password_hash: 'scrypt$x',
        expires_at: 9,
        max_downloads: 5,
        downloads: 2,
        fast: 1,
        created_at: 1,
        revoked_at: null,
      },
      {
        id: 'T'.repeat(22),
        owner_id: 20,
        file_id: null,
        folder_id: 'D'.repeat(10),
        password_hash: null,
        expires_at: null,
        max_downloads: null,
        downloads: 0,
        fast: 0,
        created_at: 2,
        revoked_at: 3,
      },
    ])
    .execute();
  await db
    .insertInto('upload_requests')
    .values({
      id: 'R'.repeat(22),
      owner_id: 20,
      folder_id: 'AAAAAAAAA1',
      title: 'Inbox',
      message: '',
      password_hash: null,
      expires_at: null,
      max_files: 3,
      max_bytes: null,
      max_file_size: null,
      files: 1,
      bytes: 5,
      created_at: 1,
      closed: 0,
    })
    .execute();
  await db
    .insertInto('upload_request_slots')
    .values({ request_id: 'R'.repeat(22), bytes: 9, lease_until: 2, created_at: 1, upload_id: 'a'.repeat(32) })
    .execute();
  await db
    .insertInto('upload_request_uploads')
    .values({ upload_id: 'a'.repeat(32), request_id: 'R'.repeat(22), created_at: 1 })
    .execute();
  await db.insertInto('audit_log').values({ at: 1, actor: 'cli:root', action: 'a', object: 'o', details: '' }).execute();
  await db
    .insertInto('blacklist')
    .values({ sha256: 'e'.repeat(64), reason: '', created_at: 1 })
    .execute();
  await db.insertInto('blacklist_names').values({ pattern: '*.exe', reason: '', created_at: 1 }).execute();
  await db
    .insertInto('sign_in_addresses')
    .values({ id: 'a'.repeat(64), last_success_at: 1 })
    .execute();
  // Sign-in methods (issue 26).
  await db
    .insertInto('account_identities')
    .values({ account_id: 20, issuer: 'https://sso.example.org', subject: 's', email: '', created_at: 1, last_used_at: null })
    .execute();
  await db.insertInto('totp_factors').values({ account_id: 20, sealed_secret: 'x', confirmed_at: 1, last_step: 3, created_at: 1 }).execute();
  await db
    .insertInto('recovery_codes')
    .values({ code_hash: 'c'.repeat(64), account_id: 20, used_at: null, created_at: 1 })
    .execute();
  await db
    .insertInto('passkeys')
    .values({ id: 'cGs', account_id: 20, name: 'Phone', public_key: 'pQE', counter: 1, transports: '', backed_up: 0, created_at: 1, last_used_at: null })
    .execute();
  await db
    .insertInto('sign_in_challenges')
    .values({ id: 'd'.repeat(64), kind: 'oidc', account_id: null, payload: '{}', created_at: 1, expires_at: 2 })
    .execute();
  // WebDAV (issue 27).
  await db
    .insertInto('dav_locks')
    .values({ token: 't-1', account_id: 20, path: '/a', exclusive: 1, deep: 0, owner_xml: '', timeout_seconds: 60, created_at: 1, expires_at: 2 })
    .execute();
  await db
    .insertInto('dav_properties')
    .values({ key: 'e'.repeat(64), account_id: 20, resource: 'top', namespace: 'urn:x', name: 'n', value_xml: 'v' })
    .execute();
  await db
    .insertInto('site_days')
    .values({ day: 20_000, uploads: 3, uploaded_bytes: 6_000_000_000, file_bytes: 9_000_000_000, stored_bytes: 5_000_000_000 })
    .execute();
  return opened;
}

describe('migrateSite between two SQLite sites', { concurrency: 1 }, () => {
  let work: string;
  let source: OpenedDatabase;
  const opened: OpenedDatabase[] = [];
  let counter = 0;
  /** A fresh target: an empty data folder with a migrated database. */
  const freshTarget = async () => {
    const dir = path.join(work, `target-${++counter}`);
    const target = openSqlite(dir);
    opened.push(target);
    await migrateToLatest(target.db);
    const blobs = new LocalBlobStore(dir);
    await blobs.init();
    return { dir, database: target, blobs };
  };

  before(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'filehaven-migrate-unit-'));
    source = await fillSource(path.join(work, 'source'), 40);
    opened.push(source);
  });
  after(async () => {
    for (const o of opened) await o.db.destroy().catch(() => {});
    await rm(work, { recursive: true, force: true });
  });

  test('the table list is every table the migrations create: a new table cannot be forgotten', async () => {
    assert.deepEqual(await tablesOf(source), [...TABLE_NAMES].sort());
    for (const table of TABLE_NAMES) {
      const row = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(source.db);
      assert.ok(Number(row.rows[0]!.n) > 0, `the test source has rows in ${table}`);
    }
  });

  test('copies every table row for row and every blob byte for byte', async () => {
    const target = await freshTarget();
    const events: MigrateProgress[] = [];
    const report = await migrateSite({
      source: { database: source, blobs: new LocalBlobStore(path.join(work, 'source')) },
      targetDatabase: target.database,
      targetBlobs: target.blobs,
      onProgress: (p) => events.push(p),
    });
    assert.equal(report.resumed, false);
    assert.deepEqual(report.blobs && { count: report.blobs.count, copied: report.blobs.copied, earlier: report.blobs.earlier }, {
      count: 40,
      copied: 40,
      earlier: 0,
    });
    assert.deepEqual(
      report.tables.map((t) => t.name),
      COPIED_TABLE_NAMES,
    );
    for (const table of COPIED_TABLE_NAMES) {
      const a = await sql`select * from ${sql.table(table)} order by 1`.execute(source.db);
      const b = await sql`select * from ${sql.table(table)} order by 1`.execute(target.database.db);
      assert.deepEqual(b.rows, a.rows, table);
    }
    // The site's totals are not copied: the target's database counted the rows copied in.
    assert.deepEqual(COPIED_TABLE_NAMES.length, TABLE_NAMES.length - 1);
    const totals = (db: typeof source.db) =>
      sql`select kind, sum(items) as items, sum(bytes) as bytes, sum(downloads) as downloads, sum(served) as served from site_totals group by kind order by kind`.execute(
        db,
      );
    assert.deepEqual((await totals(target.database.db)).rows, (await totals(source.db)).rows, 'site_totals');
    assert.ok((await totals(source.db)).rows.length >= 2, 'the source has files and blobs to total');
    const blobs = await target.database.db.selectFrom('blobs').selectAll().execute();
    for (const blob of blobs) {
      const stream = await target.blobs.read(blob.object_key!);
      const hash = createHash('sha256');
      for await (const chunk of stream) hash.update(chunk as Buffer);
      assert.equal(hash.digest('hex'), blob.sha256);
    }
    // The blob rows land before any file row (files follow their blobs).
    const phases = events.map((e) => (e.phase === 'tables' ? e.table : e.phase));
    assert.ok(phases.lastIndexOf('blobs') < phases.indexOf('files'));
    assert.equal(phases[0], 'start');
    assert.equal(phases[1], 'server_settings');
  });

  test('an aborted run leaves a target the rerun resumes; a source changed meanwhile fails verification', async () => {
    const target = await freshTarget();
    const controller = new AbortController();
    const options = {
      source: { database: source, blobs: new LocalBlobStore(path.join(work, 'source')) },
      targetDatabase: target.database,
      targetBlobs: target.blobs,
      concurrency: 2,
      batchRows: 7,
    };
    await assert.rejects(
      migrateSite({ ...options, signal: controller.signal, onProgress: (p) => p.phase === 'blobs' && p.done === 10 && controller.abort(new Error('stop')) }),
      /^Error: stop$/,
    );
    const copied = (await target.database.db.selectFrom('blobs').select('sha256').execute()).length;
    assert.ok(copied >= 10 && copied < 40, `copied ${copied}`);
    const report = await migrateSite(options);
    assert.equal(report.resumed, true);
    assert.equal(report.blobs!.earlier, copied);
    assert.equal(report.blobs!.copied, 40 - copied);

    // A file renamed in the source after the copy: insert-if-absent keeps the old row, and verification says so.
    await source.db.updateTable('files').set({ name: 'renamed' }).where('id', '=', 'F000000004').execute();
    try {
      await assert.rejects(migrateSite(options), /verification failed: files row id=F000000004 differs in name/);
    } finally {
      await source.db.updateTable('files').set({ name: 'file 1.1' }).where('id', '=', 'F000000004').execute();
    }
  });

  test('a blob whose bytes differ from its row is refused by digest and nothing of it is kept', async () => {
    const dir = path.join(work, 'damaged-source');
    const damaged = await fillSource(dir, 3);
    opened.push(damaged);
    const row = await damaged.db.selectFrom('blobs').selectAll().orderBy('sha256').executeTakeFirstOrThrow();
    await damaged.db
      .updateTable('blobs')
      .set({ size: row.size + 1 })
      .where('sha256', '=', row.sha256)
      .execute();
    const target = await freshTarget();
    await assert.rejects(
      migrateSite({
        source: { database: damaged, blobs: new LocalBlobStore(dir) },
        targetDatabase: target.database,
        targetBlobs: target.blobs,
        concurrency: 1,
      }),
      new RegExp(`^MigrateError: blob ${row.sha256} is damaged in the source store .* says ${row.size + 1} bytes .* holds ${row.size} bytes`),
    );
    assert.equal(await target.blobs.has(row.sha256), false);
  });
});

describe('migrate progress lines', () => {
  test("at most one line per interval, but every table's last line", () => {
    let now = 0;
    const lines: string[] = [];
    const print = progressPrinter(
      (line) => lines.push(line),
      () => now,
    );
    print({ phase: 'tables', table: 'server_settings', copied: 1, total: 1 });
    print({ phase: 'blobs', done: 0, total: 3, bytes: 0, totalBytes: 3 * 1024 ** 3 });
    now += 100;
    print({ phase: 'blobs', done: 1, total: 3, bytes: 1024 ** 3, totalBytes: 3 * 1024 ** 3 });
    now += 500;
    print({ phase: 'blobs', done: 2, total: 3, bytes: 2 * 1024 ** 3, totalBytes: 3 * 1024 ** 3 });
    now += 1;
    print({ phase: 'blobs', done: 3, total: 3, bytes: 3 * 1024 ** 3, totalBytes: 3 * 1024 ** 3 });
    print({ phase: 'tables', table: 'accounts', copied: 0, total: 12 });
    print({ phase: 'tables', table: 'accounts', copied: 12, total: 12 });
    print({ phase: 'tables', table: 'accounts', copied: 12, total: 12 });
    assert.deepEqual(lines, [
      'tables: server_settings 1/1',
      'blobs: 0/3 (0 B/3.0 GiB)',
      'blobs: 2/3 (2.0 GiB/3.0 GiB)',
      'blobs: 3/3 (3.0 GiB/3.0 GiB)',
      'tables: accounts 12/12',
    ]);
    assert.equal(humanBytes(1536), '1.5 KiB');
    assert.equal(humanBytes(1536, true), '1.50 KiB');
    assert.equal(humanBytes(1023), '1023 B');
    assert.equal(humanBytes(5 * 2 ** 50), '5.0 PiB');
  });
});
