import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type { Database as Tables } from '../../src/db/database.js';
import { openSqlite, SQLITE_FILE, sqliteWalFile } from '../../src/db/dialect.js';
import { GroupCommit, isIoFailure } from '../../src/db/group-commit.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';

/**
 * Group commit's durability, on a real SQLite file, with the WAL's fsync held by the test:
 * each fsync waits until the test lets it go (or fails it), so what happens before and
 * after it can be seen.
 */
class HeldFsyncs {
  readonly waiting: { release: () => void; fail: (error: Error) => void }[] = [];
  calls = 0;
  /** Runs inside each fsync, before it waits (to look at the database then). */
  onCall: () => void = () => {};

  readonly sync = (): Promise<void> => {
    this.calls += 1;
    this.onCall();
    return new Promise<void>((release, fail) => this.waiting.push({ release, fail }));
  };

  async next(): Promise<{ release: () => void; fail: (error: Error) => void }> {
    for (let i = 0; i < 1000 && this.waiting.length === 0; i++) await tick();
    const held = this.waiting.shift();
    assert.ok(held, 'an fsync was started');
    return held;
  }
}

async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 20; i++) await tick();
  return done;
}

describe('SQLite group commit: the fsync of the WAL', () => {
  let dir: string;
  let db: Kysely<Tables>;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'filehaven-group-commit-'));
    db = openSqlite(dir).db;
    await sql`create table t (n integer)`.execute(db);
  });
  after(async () => {
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  });
  const insert = (n: number) => (trx: Kysely<Tables>) => sql`insert into t (n) values (${n})`.execute(trx).then(() => n);

  test('a caller hears only once the fsync after its COMMIT resolved', async () => {
    const fsyncs = new HeldFsyncs();
    const group = new GroupCommit(db, fsyncs.sync);
    const result = group.run(insert(1));
    const held = await fsyncs.next();
    assert.equal(await settled(result), false, 'no answer while the fsync runs');
    held.release();
    assert.equal(await result, 1);
  });

  test('a work that reads durable starts after the fsync of every earlier batch, and that fsync runs under the write lock', async () => {
    const fsyncs = new HeldFsyncs();
    const group = new GroupCommit(db, fsyncs.sync);
    const earlier = group.run(insert(2));
    const earlierSync = await fsyncs.next();
    let started = false;
    const reader = group.run(
      async () => {
        started = true;
      },
      { first: true },
    );
    // Another process (the operator's CLI) on the same file, which must not commit between
    // the barrier's fsync and the work's reads.
    const other = new Database(path.join(dir, SQLITE_FILE), { timeout: 0 });
    const writes: string[] = [];
    fsyncs.onCall = () => {
      try {
        other.prepare('insert into t (n) values (99)').run();
        writes.push('committed');
      } catch (error) {
        writes.push((error as { code: string }).code);
      }
    };
    try {
      assert.equal(await settled(reader), false);
      assert.equal(started, false, 'not before the earlier batch is durable');
      earlierSync.release();
      await earlier;
      const barrier = await fsyncs.next();
      assert.equal(started, false, 'not before its own barrier fsync resolved');
      assert.deepEqual(writes, ['SQLITE_BUSY'], 'the barrier fsync runs with the write lock held: no commit can slip in after it');
      barrier.release();
      (await fsyncs.next()).release();
      await reader;
      assert.equal(started, true);
    } finally {
      fsyncs.onCall = () => {};
      other.close();
    }
  });

  test('a failed fsync fails its batch and every later one, and breaks the store once', async () => {
    const fsyncs = new HeldFsyncs();
    const broken: unknown[] = [];
    const group = new GroupCommit(db, fsyncs.sync, (error) => broken.push(error));
    const failure = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    const first = group.run(insert(3));
    (await fsyncs.next()).fail(failure);
    await assert.rejects(first, failure);
    assert.equal(group.failure, failure);
    let ran = false;
    await assert.rejects(
      group.run(async () => {
        ran = true;
      }),
      failure,
    );
    await assert.rejects(group.run(insert(4), { first: true }), failure);
    assert.equal(ran, false, 'a broken store runs no work');
    assert.equal(fsyncs.calls, 1, 'and tries no fsync again');
    assert.deepEqual(broken, [failure], 'told once');
  });
});

describe('SQLite metadata store: the WAL it fsyncs', () => {
  test('a database reached through a symlink: the WAL beside the target is the one fsynced', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-group-commit-'));
    try {
      const data = path.join(dir, 'data');
      const real = path.join(dir, 'real');
      await mkdir(data);
      await mkdir(real);
      await writeFile(path.join(real, 'db.sqlite'), '');
      await symlink(path.join(real, 'db.sqlite'), path.join(data, SQLITE_FILE));
      const opened = openSqlite(data);
      const store = await openMetadataStore(opened);
      try {
        assert.equal(await sqliteWalFile(opened.db), path.join(real, 'db.sqlite-wal'));
        await store.transaction((repos) => repos.blacklist.add('a'.repeat(64), '', 1));
        assert.equal(await store.blacklist.has('a'.repeat(64)), true);
        assert.equal(store.durabilityLost(), null);
        await assert.rejects(stat(path.join(data, `${SQLITE_FILE}-wal`)), { code: 'ENOENT' });
      } finally {
        await store.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a failed fsync of the WAL: logged once with its cause, reported by durabilityLost, every later transaction fails', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-group-commit-'));
    const failure = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    const logged: { error: unknown; message: string }[] = [];
    let fail = false;
    const store = await openMetadataStore(openSqlite(dir), {
      report: (error, message) => logged.push({ error, message }),
      syncWal: (wal) => (fail ? Promise.reject(failure) : wal.sync()),
    });
    try {
      await store.transaction((repos) => repos.blacklist.add('b'.repeat(64), '', 1));
      fail = true;
      await assert.rejects(
        store.transaction((repos) => repos.blacklist.add('c'.repeat(64), '', 1)),
        failure,
      );
      fail = false;
      await assert.rejects(
        store.transaction((repos) => repos.blacklist.add('d'.repeat(64), '', 1)),
        failure,
        'a fsync that would work again changes nothing: the pages it lost are lost',
      );
      assert.equal(store.durabilityLost(), failure);
      assert.equal(logged.length, 1);
      assert.equal(logged[0]!.error, failure);
      assert.match(logged[0]!.message, /restart/);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

test('a COMMIT that fails on I/O breaks the store; other failures of a COMMIT do not', () => {
  for (const code of ['SQLITE_IOERR', 'SQLITE_IOERR_FSYNC', 'SQLITE_IOERR_WRITE', 'SQLITE_FULL']) assert.equal(isIoFailure({ code }), true, code);
  for (const code of ['SQLITE_BUSY', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'EIO']) assert.equal(isIoFailure({ code }), false, code);
  assert.equal(isIoFailure(new Error('no code')), false);
  assert.equal(isIoFailure(null), false);
});
