import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BlobNotFoundError } from '../../src/blob/blob-store.js';
import type { Clock } from '../../src/domain/ids.js';
import { type FileRecord, FileStatus } from '../../src/domain/types.js';
import { type GcReport, GcService } from '../../src/services/gc-service.js';
import { RunningElsewhereError } from '../../src/services/run-alone.js';
import { TEST_BACKEND } from '../helpers/backend.js';
import { atomError, startTestServer, TestClock, type TestServer } from '../helpers/server.js';
import type { HeldUpload } from '../helpers/storage-view.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const sha256Of = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * The server's gc, but reading the stores' modification times against `fileClock`. Stored
 * objects are stamped by the store's own clock (S3's LastModified cannot be set), so a test
 * makes bytes look old by moving gc's wall clock forward, not the bytes' times back.
 */
function gcWithFileClock(t: TestServer, fileClock: Clock, holder = 'test gc', batchSize?: number): GcService {
  const { store, blobs, files, reservations, clock, config, metrics, resumable } = t.server.services;
  return new GcService({
    store,
    blobs,
    files,
    reservations,
    clock,
    fileClock,
    tempGraceMs: config.tempGraceMs,
    expireAfterDays: config.expireAfterDays,
    holder,
    metrics,
    resumable: resumable.service,
    batchSize,
  });
}

/** When the blob under `key` was last modified, as the store lists it. */
async function blobModifiedAt(t: TestServer, key: string): Promise<number> {
  const blob = (await t.storage.blobs()).find((b) => b.key === key);
  assert.ok(blob, `no stored blob ${key}`);
  return blob.modifiedAt;
}

/** When the staged upload `handle` last moved, as the store lists it. */
async function stagedModifiedAt(t: TestServer, handle: string): Promise<number> {
  const staged = (await t.storage.staged()).find((s) => s.handle === handle);
  assert.ok(staged, `no staged upload ${handle}`);
  return staged.modifiedAt;
}

/**
 * Waits until what is written now gets a later modification time than `modifiedAt`, even
 * on a store that keeps whole seconds (S3's LastModified): at most about a second.
 */
async function laterThan(modifiedAt: number): Promise<void> {
  const next = Math.floor(modifiedAt / 1000) * 1000 + 1000;
  while (Date.now() <= next) await sleep(Math.max(1, next - Date.now() + 1));
}

/** Every live (A or B) file, from the database. */
async function liveFiles(t: TestServer): Promise<FileRecord[]> {
  return t.server.services.store.files.list({ states: [FileStatus.Active, FileStatus.Blocked], limit: 1_000_000 });
}

/** Downloads a file through its public raw link and returns the body's sha256. */
async function downloadDigest(t: TestServer, file: FileRecord): Promise<{ status: number; sha256: string }> {
  const response = await t.fetch(`/${file.id}/${encodeURIComponent(file.name)}?download=1`);
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, sha256: sha256Of(body) };
}

/** Asserts both directions: every live file has its blob row and bytes, and nothing else is stored. */
async function assertConsistent(t: TestServer, why: string): Promise<void> {
  const live = await liveFiles(t);
  const liveDigests = new Set(live.map((f) => f.sha256));
  const liveKeys = new Set<string>();
  for (const file of live) {
    const got = await downloadDigest(t, file);
    assert.equal(got.status, 200, `${why}: live file ${file.id} does not download`);
    assert.equal(got.sha256, file.sha256, `${why}: live file ${file.id} has the wrong bytes`);
    const key = await t.storage.keyOf(file.sha256);
    assert.ok(key, `${why}: live file ${file.id} has no blob row`);
    liveKeys.add(key);
  }
  assert.deepEqual(await t.storage.blobKeys(), [...liveKeys].sort(), `${why}: stored blobs vs the keys of live digests`);
  const stats = await t.server.services.store.housekeeping.stats();
  assert.equal(stats.blobs.count, liveDigests.size, `${why}: blob rows vs live digests`);
}

const emptyReport = (overrides: Partial<GcReport> = {}): GcReport => ({
  dryRun: false,
  filesExpired: 0,
  blobsRemoved: 0,
  orphanFilesRemoved: 0,
  bytesFreed: 0,
  tempFilesRemoved: 0,
  uploadLogPruned: 0,
  reservationsSettled: 0,
  trafficRefunded: 0,
  resumableUploadsExpired: 0,
  thumbnailsRemoved: 0,
  ...overrides,
});

// A guard against a hang, not a timing.
describe('gc', { timeout: 600_000 }, () => {
  test('THE RACE: gc runs again and again while uploads, copies and deletes of the same contents race it', async (context) => {
    // tempGraceMs 0: all stored bytes without a committed row are candidates at once, so
    // only the blob protocol's locks keep an upload that is finishing from losing its bytes.
    const t = await startTestServer({ tempGraceMs: 0, gcIntervalMs: 0 });
    try {
      const { key } = await t.account();
      const contents = Array.from({ length: 4 }, (_, i) => Buffer.from(`content ${i}\n`.repeat(2000 + i * 300)));
      const byDigest = new Map(contents.map((c) => [sha256Of(c), c]));
      let live: string[] = [];
      const inGc = new AsyncLocalStorage<boolean>();
      let gcRuns = 0;
      let uploaded = 0;
      let reaped = 0;
      let collected = 0;

      const upload = async (name: string, content: Buffer) => {
        const result = await t.upload(key, name, content);
        if (result.response.status === 201) {
          uploaded += 1;
          live.push(result.id);
          return;
        }
        // With no grace at all, gc may take the staged bytes of an upload (a temp file, a
        // complete S3 object) before its commit: that upload fails cleanly (nothing
        // stored), never half.
        assert.equal(result.response.status, 500, result.body);
        assert.equal(atomError(result.body)?.code, 'errorUploadFaild');
        reaped += 1;
      };
      const copy = async (id: string) => {
        const response = await t.fetch(`/files/copy/${id}`, { method: 'POST', headers: { Authorization: key } });
        const body = await response.text();
        if (response.status === 201) live.push(/<entry>\s*<id>([^<]+)</.exec(body)![1]!);
        // The source was deleted first.
        else assert.equal(atomError(body)?.code, 'errorFileNotFound', body);
      };
      const remove = async (id: string) => {
        const response = await t.fetch(`/files/${id}`, { method: 'DELETE', headers: { Authorization: key } });
        assert.equal(response.status, 200, await response.text());
      };
      const gcLoop = async (runs: number) => {
        for (let i = 0; i < runs; i++) {
          const report = await inGc.run(true, () => t.server.services.gc.run());
          collected += report.blobsRemoved + report.orphanFilesRemoved;
          gcRuns += 1;
        }
      };
      // What a crash leaves behind, for digests that are being uploaded and deleted right
      // now: bytes without a row, or bytes with a row but no file. An upload that finds
      // a row keeps it (and its bytes), and gc must not take them from under its new file
      // row. gc itself may take a plant's staged bytes before they are published (no grace):
      // then that leftover never existed.
      const plant = async (withRow: boolean) => {
        for (const content of contents) {
          await t.storage.putBlob(content, withRow ? { recordedAt: Date.now() - HOUR_MS } : {}).catch((error: unknown) => {
            if (!(error instanceof BlobNotFoundError)) throw error;
          });
        }
      };
      // The adversary: whenever bytes are about to be removed (by gc, or by a delete's
      // release), an upload of exactly that digest is sent into the gap, and the removal
      // waits a while for it. The protocol holds the digest's lock across the removal, so
      // that upload waits its turn; an ordering that decided outside the lock, or unlinked
      // after COMMIT, would let it commit onto the bytes and then take them away.
      // A removal by gc always gets a racer and waits long enough for a whole upload; one
      // by a file delete sometimes, briefly (there are many, and each wait holds the lock).
      // Keys are digests on a content-addressed store and random ids on S3: the digest of
      // each key is noted when it is published.
      const { blobs } = t.server.services;
      const publish = blobs.publish.bind(blobs);
      const deleteKey = blobs.delete.bind(blobs);
      const digestOf = new Map<string, string>();
      blobs.publish = async (staged) => {
        const published = await publish(staged);
        digestOf.set(published, staged.sha256);
        return published;
      };
      const gapUploads: Promise<void>[] = [];
      blobs.delete = async (key) => {
        const digest = digestOf.get(key);
        const content = digest === undefined ? undefined : byDigest.get(digest);
        const byGc = inGc.getStore() === true;
        if (content && (byGc || Math.random() < 0.3)) {
          const racer = upload(`gap-${randomBytes(4).toString('hex')}.txt`, content);
          gapUploads.push(racer);
          await Promise.race([racer, sleep(byGc ? 150 : 20)]);
        }
        return deleteKey(key);
      };
      // Readers all through the round: a live file whose bytes are gone even for a moment
      // fails here, before a later upload of the same content could put them back.
      const lost: string[] = [];
      const read = async (until: { done: boolean }) => {
        while (!until.done) {
          const id = live[Math.floor(Math.random() * live.length)];
          const file = id ? await t.server.services.store.files.byId(id) : null;
          if (!file) {
            await sleep(1);
            continue;
          }
          const got = await downloadDigest(t, file);
          if (got.status === 200 && got.sha256 === file.sha256) continue;
          // A failure is fine only if the file was deleted meanwhile.
          const now = await t.server.services.store.files.byId(file.id);
          if (now?.status !== FileStatus.Deleted) lost.push(`${file.id}: ${got.status}`);
        }
      };

      for (let round = 0; round < 10; round++) {
        // Each round deletes every file of the last one while new uploads and copies of the
        // same digests arrive, so digests keep dropping to no live file and coming back.
        const previous = live;
        live = [];
        const until = { done: false };
        const readers = [read(until), read(until)];
        const work: Promise<unknown>[] = [
          gcLoop(3),
          plant(round % 2 === 0),
          sleep(5).then(() => plant(round % 2 === 1)),
          sleep(15).then(() => plant(true)),
          sleep(10).then(() => gcLoop(1)),
        ];
        for (let i = 0; i < 8; i++) work.push(sleep(i * 2).then(() => upload(`r${round}-${i}.txt`, contents[(round + (i % 2)) % contents.length]!)));
        for (const id of previous.slice(0, 3)) work.push(copy(id));
        for (const id of previous) work.push(remove(id));
        await Promise.all(work);
        await Promise.all(gapUploads.splice(0));
        until.done = true;
        await Promise.all(readers);
        assert.deepEqual(lost, [], `round ${round}: live files lost their bytes during the race`);
        // Every live file downloads with its own bytes, after every round.
        for (const file of await liveFiles(t)) {
          const got = await downloadDigest(t, file);
          assert.equal(got.status, 200, `round ${round}: live file ${file.id} lost its bytes`);
          assert.equal(got.sha256, file.sha256, `round ${round}: live file ${file.id} has other bytes`);
          assert.ok(byDigest.has(got.sha256));
        }
      }
      blobs.delete = deleteKey;
      blobs.publish = publish;
      context.diagnostic(`gc runs ${gcRuns}, uploads ${uploaded} (${reaped} reaped), blobs collected ${collected}`);
      assert.ok(gcRuns >= 30, `gc ran ${gcRuns} times`);
      assert.ok(uploaded >= 60, `only ${uploaded} uploads succeeded (${reaped} reaped)`);
      assert.ok(collected > 0, 'gc removed something during the race (the planted orphans at least)');

      // A final gc leaves no blob without a live file and no live file without a blob.
      await t.server.services.gc.run();
      await assertConsistent(t, 'after the race');
      assert.deepEqual(await t.storage.leftovers(), [], 'no staged upload and no unnamed bytes are left');

      // And once everything is deleted, nothing at all is stored.
      for (const id of live.splice(0)) await remove(id);
      await t.server.services.gc.run();
      await assertConsistent(t, 'after deleting everything');
      assert.deepEqual(await t.storage.blobKeys(), []);
    } finally {
      await t.close();
    }
  });

  test('stored bytes without a row are removed once past the grace; fresh ones and live blobs are kept', async () => {
    const t = await startTestServer({ tempGraceMs: 10 * 60_000, gcIntervalMs: 0 });
    try {
      const { key } = await t.account();
      const kept = await t.upload(key, 'kept.txt', 'a live file whose blob is old');
      assert.equal(kept.response.status, 201);
      const keptKey = (await t.storage.keyOf(sha256Of('a live file whose blob is old')))!;

      const old = await t.storage.putBlob(randomBytes(1234));
      await laterThan(await blobModifiedAt(t, old.key));
      const fresh = await t.storage.putBlob(randomBytes(99));
      const freshAt = await blobModifiedAt(t, fresh.key);
      assert.ok(freshAt > (await blobModifiedAt(t, old.key)));
      // The grace ends between the two: the old orphan (and the live blob) are past it, the
      // fresh orphan, which may be an upload finishing, is not.
      const gc = gcWithFileClock(t, () => freshAt + 10 * 60_000);

      const dry = await gc.run({ dryRun: true });
      assert.deepEqual(dry, emptyReport({ dryRun: true, orphanFilesRemoved: 1, bytesFreed: 1234 }));
      assert.ok(await t.storage.hasBytes(old.key), 'a dry run removes nothing');

      const report = await gc.run();
      assert.deepEqual(report, emptyReport({ orphanFilesRemoved: 1, bytesFreed: 1234 }));
      assert.equal(await t.storage.hasBytes(old.key), false, 'the old orphan is gone');
      assert.ok(await t.storage.hasBytes(fresh.key), 'a fresh orphan may be an upload finishing: kept');
      assert.ok(await t.storage.hasBytes(keptKey), 'a blob with a live file is kept, however old');
      const download = await fetch(`${kept.downloadLink}?download=1`);
      assert.equal(await download.text(), 'a live file whose blob is old');
      assert.equal(await t.storage.keyOf(old.sha256), null, 'no row is left behind');
    } finally {
      await t.close();
    }
  });

  test('blob rows with no live file are removed with their bytes once past the grace', async () => {
    const clock = new TestClock();
    const t = await startTestServer({ tempGraceMs: 10 * 60_000, gcIntervalMs: 0 }, clock);
    try {
      // A row and its bytes with no file (a crash after the blob's transaction, or an
      // older version's leftovers), and a young one.
      const old = await t.storage.putBlob(randomBytes(700), { recordedAt: clock.now - HOUR_MS });
      const young = await t.storage.putBlob(randomBytes(300), { recordedAt: clock.now });

      const report = await t.server.services.gc.run();
      assert.deepEqual(report, emptyReport({ blobsRemoved: 1, bytesFreed: 700 }));
      assert.equal(await t.storage.hasBytes(old.key), false);
      assert.equal(await t.storage.keyOf(old.sha256), null);
      assert.ok(await t.storage.hasBytes(young.key), 'younger than the grace: kept');

      clock.advance(HOUR_MS);
      assert.deepEqual(await t.server.services.gc.run(), emptyReport({ blobsRemoved: 1, bytesFreed: 300 }));
      assert.equal(await t.storage.hasBytes(young.key), false);
      assert.deepEqual(await t.storage.blobKeys(), []);
    } finally {
      await t.close();
    }
  });

  // The server reads 500 rows at a time; a batch of 50 checks the same loop with 123 rows
  // instead of 1,203 (each a delete request to radosgw on S3: a minute of the CI run).
  test('unreferenced blob rows are read in batches, and every batch is collected', async () => {
    const clock = new TestClock();
    const t = await startTestServer({ tempGraceMs: 10 * 60_000, gcIntervalMs: 0 }, clock);
    try {
      const { store } = t.server.services;
      const { key } = await t.account();
      const kept = await t.upload(key, 'kept.txt', 'a live file among the leftovers');
      const keptSha = (await store.files.byId(kept.id))!.sha256;
      // 123 leftover rows (no bytes: a crash, or an older version's leftovers), written
      // as an upload writes them: under the digest's lock.
      const leftovers = Array.from({ length: 123 }, (_, i) => sha256Of(`leftover ${i}`));
      for (let i = 0; i < leftovers.length; i += 50) {
        await store.transaction(async (repos) => {
          for (const sha of leftovers.slice(i, i + 50)) {
            await repos.locks.blob(sha);
            await repos.blobs.insert(sha, 10, t.storage.newKey(sha), clock.now - HOUR_MS);
          }
        });
      }
      clock.advance(HOUR_MS);
      const housekeeping = store.housekeeping;
      const original = housekeeping.unreferencedBlobs;
      const batches: number[] = [];
      housekeeping.unreferencedBlobs = async (...args) => {
        const rows = await original.apply(housekeeping, args);
        batches.push(rows.length);
        return rows;
      };
      const gc = gcWithFileClock(t, Date.now, 'test gc', 50);
      try {
        assert.deepEqual(await gc.run({ dryRun: true }), emptyReport({ dryRun: true, blobsRemoved: 123, bytesFreed: 1_230 }));
        assert.deepEqual(batches, [50, 50, 23]);
        batches.length = 0;
        assert.deepEqual(await gc.run(), emptyReport({ blobsRemoved: 123, bytesFreed: 1_230 }));
        assert.deepEqual(batches, [50, 50, 23]);
      } finally {
        housekeeping.unreferencedBlobs = original;
      }
      assert.equal((await store.housekeeping.stats()).blobs.count, 1);
      assert.ok(await t.storage.keyOf(keptSha));
      assert.equal((await fetch(`${kept.downloadLink}?download=1`)).status, 200);
    } finally {
      await t.close();
    }
  });

  test('staged uploads untouched for the grace are removed; fresh ones (uploads in progress) are kept', async () => {
    const t = await startTestServer({ tempGraceMs: 10 * 60_000, gcIntervalMs: 0 });
    const held: HeldUpload[] = [];
    try {
      const stale = await t.storage.holdStagedUpload();
      held.push(stale);
      await laterThan(await stagedModifiedAt(t, stale.handle));
      const fresh = await t.storage.holdStagedUpload();
      held.push(fresh);
      const freshAt = await stagedModifiedAt(t, fresh.handle);
      assert.ok(freshAt > (await stagedModifiedAt(t, stale.handle)));
      // The grace ends between the two.
      const gc = gcWithFileClock(t, () => freshAt + 10 * 60_000);

      assert.deepEqual(await gc.run({ dryRun: true }), emptyReport({ dryRun: true, tempFilesRemoved: 1 }));
      assert.deepEqual(await t.storage.stagedUploads(), [stale.handle, fresh.handle].sort());
      assert.deepEqual(await gc.run(), emptyReport({ tempFilesRemoved: 1 }));
      assert.deepEqual(await t.storage.stagedUploads(), [fresh.handle]);
    } finally {
      for (const upload of held) await upload.release();
      await t.close();
    }
  });

  test('files in <data>/tmp that are not temp files of the store are left alone', {
    skip: TEST_BACKEND !== 'sqlite-local' && 'local blob store only',
  }, async () => {
    const t = await startTestServer({ tempGraceMs: 10 * 60_000, gcIntervalMs: 0 });
    try {
      const other = path.join(t.dataDir, 'tmp', 'not-a-part-file');
      await writeFile(other, 'x');
      const then = new Date(Date.now() - DAY_MS);
      await utimes(other, then, then);
      assert.deepEqual(await t.server.services.gc.run(), emptyReport());
      assert.ok(existsSync(other), 'what is not a temp file of the store is left alone');
    } finally {
      await t.close();
    }
  });

  test('expiry is off by default: nothing expires however old', async () => {
    const clock = new TestClock();
    const t = await startTestServer({ gcIntervalMs: 0 }, clock);
    try {
      const { key } = await t.account();
      const file = await t.upload(key, 'old.txt', 'never downloaded');
      clock.advance(10_000 * DAY_MS);
      const report = await t.server.services.gc.run();
      assert.equal(report.filesExpired, 0);
      assert.equal((await fetch(`${file.downloadLink}?download=1`)).status, 200);
      assert.equal((await t.server.services.gc.stats()).expiry, null);
    } finally {
      await t.close();
    }
  });

  test('expiry on: files not downloaded for N days are deleted (never downloaded: since upload), the rest kept', async () => {
    const clock = new TestClock();
    const t = await startTestServer({ gcIntervalMs: 0, expireAfterDays: 30 }, clock);
    try {
      const { key } = await t.account();
      const idle = await t.upload(key, 'idle.txt', 'nobody wants me');
      const idleKey = (await t.storage.keyOf(sha256Of('nobody wants me')))!;
      const popular = await t.upload(key, 'popular.txt', 'shared bytes');
      const twin = await t.upload(key, 'twin.txt', 'shared bytes');
      clock.advance(20 * DAY_MS);
      const downloaded = await fetch(`${popular.downloadLink}?download=1`);
      assert.equal(await downloaded.text(), 'shared bytes');
      // Download times are written in batches (within a second); expiry reads the written ones.
      await t.server.services.downloads.countsWritten();
      const late = await t.upload(key, 'late.txt', 'uploaded later');
      clock.advance(15 * DAY_MS);

      // 35 days after the first uploads: idle and twin were never downloaded.
      assert.deepEqual((await t.server.services.gc.stats()).expiry, { afterDays: 30, wouldExpire: 2 });
      assert.equal((await t.server.services.gc.run({ dryRun: true })).filesExpired, 2);
      const report = await t.server.services.gc.run();
      assert.equal(report.filesExpired, 2);

      const status = async (id: string) => (await t.server.services.store.files.byId(id))!.status;
      assert.equal(await status(idle.id), FileStatus.Deleted);
      assert.equal(await status(twin.id), FileStatus.Deleted);
      assert.equal(await status(popular.id), FileStatus.Active, 'downloaded 15 days ago');
      assert.equal(await status(late.id), FileStatus.Active, 'uploaded 15 days ago');
      assert.equal((await fetch(`${idle.downloadLink}?download=1`)).status, 404);
      // Deleted like an operator deletes: the idle file's bytes are released, the shared ones kept.
      assert.equal(await t.storage.hasBytes(idleKey), false);
      assert.equal(await t.storage.keyOf(sha256Of('nobody wants me')), null);
      assert.equal(await (await fetch(`${popular.downloadLink}?download=1`)).text(), 'shared bytes');
      assert.equal((await t.server.services.gc.run()).filesExpired, 0, 'nothing left to expire');
      await assertConsistent(t, 'after expiry');
    } finally {
      await t.close();
    }
  });

  test('the server runs gc every gcIntervalMs, never two at once, survives a failing run, and stops on close', async () => {
    const t = await startTestServer({ gcIntervalMs: 25, tempGraceMs: 60_000 });
    const held: HeldUpload[] = [];
    try {
      // Held before the runs below look an hour ahead: the server's own runs leave it be.
      const stale = await t.storage.holdStagedUpload();
      held.push(stale);
      const gc = t.server.services.gc;
      // The server's runs, with the wall clock an hour ahead: the held upload is abandoned to them.
      const ahead = gcWithFileClock(t, () => Date.now() + HOUR_MS);
      let runs = 0;
      let active = 0;
      let overlapped = false;
      gc.run = async (options) => {
        runs += 1;
        active += 1;
        overlapped ||= active > 1;
        try {
          // Longer than the interval: a fixed-rate timer would start the next run meanwhile.
          await sleep(60);
          if (runs === 2) throw new Error('disk on fire');
          return await ahead.run(options);
        } finally {
          active -= 1;
        }
      };
      const isStaged = async (upload: HeldUpload) => (await t.storage.stagedUploads()).includes(upload.handle);

      const deadline = Date.now() + 10_000;
      while ((runs < 4 || (await isStaged(stale))) && Date.now() < deadline) await sleep(20);
      assert.ok(runs >= 4, `only ${runs} runs`);
      assert.equal(await isStaged(stale), false, 'the periodic run removed the stale upload');
      assert.equal(overlapped, false, 'two runs overlapped');

      await t.server.close();
      assert.equal(active, 0, 'close waits for the run in progress');
      const after = runs;
      const stale2 = await t.storage.holdStagedUpload();
      held.push(stale2);
      await sleep(200);
      assert.equal(runs, after, 'no run after close');
      assert.ok(await isStaged(stale2));
    } finally {
      for (const upload of held) await upload.release();
      await t.close();
    }
  });

  test('gcIntervalMs 0 never runs gc', async () => {
    const t = await startTestServer({ gcIntervalMs: 0, tempGraceMs: 0 });
    let stale: HeldUpload | undefined;
    try {
      stale = await t.storage.holdStagedUpload();
      await sleep(200);
      assert.ok((await t.storage.stagedUploads()).includes(stale.handle));
    } finally {
      await stale?.release();
      await t.close();
    }
  });

  test('gc runs on one server at a time: a second holder is told who runs it; a dry run needs no lease', async () => {
    const t = await startTestServer({ gcIntervalMs: 0 });
    try {
      const { store, clock } = t.server.services;
      // Another server (another holder) is in the middle of its gc.
      assert.equal(await store.runLeases.take('gc', 'other-server 1234', clock() + 60_000, clock()), true);
      const here = gcWithFileClock(t, () => Date.now(), 'this-server 5678');
      await assert.rejects(here.run(), (error: unknown) => {
        assert.ok(error instanceof RunningElsewhereError, String(error));
        assert.equal(error.holder, 'other-server 1234');
        return true;
      });
      assert.equal((await here.run({ dryRun: true })).dryRun, true, 'a dry run goes ahead');
      await store.runLeases.release('gc', 'other-server 1234');
      assert.equal((await here.run()).dryRun, false, 'once it is done, this server runs gc');
      assert.equal(await store.runLeases.holderOf('gc', clock()), null, 'and gives the lease back');
      // Two runs at once on this server's two gc services: one runs, one is turned away.
      const both = await Promise.allSettled([here.run(), gcWithFileClock(t, () => Date.now(), 'third 9').run()]);
      assert.deepEqual(both.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected']);
    } finally {
      await t.close();
    }
  });
});
