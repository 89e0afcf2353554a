import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertFails, assertOk, runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const HOUR_MS = 3_600_000;

/** Sets a file's modification time `ms` into the past. */
async function age(file: string, ms: number): Promise<void> {
  const then = new Date(Date.now() - ms);
  await utimes(file, then, then);
}

// The CLI works on the data folder while the server runs (SQLite in WAL mode), as an
// operator would use it.
describe('filehaven gc and stats', { concurrency: 1, timeout: 120_000 }, () => {
  let t: TestServer;
  const first = Buffer.from('first file, 1000 bytes'.padEnd(1000, '.'));
  const second = Buffer.from('second file'.padEnd(500, '!'));

  before(async () => {
    t = await startTestServer({ gcIntervalMs: 0 });
    const { key } = await t.account();
    const a = await t.upload(key, 'first.txt', first);
    assert.equal(a.response.status, 201, a.body);
    const copy = await t.fetch(`/files/copy/${a.id}`, { method: 'POST', headers: { Authorization: key } });
    assert.equal(copy.status, 201, await copy.text());
    const b = await t.upload(key, 'second.txt', second);
    assert.equal(b.response.status, 201, b.body);
    const deleted = await t.upload(key, 'deleted.txt', 'soon gone');
    assert.equal((await t.fetch(`/files/${deleted.id}`, { method: 'DELETE', headers: { Authorization: key } })).status, 200);

    const download = await fetch(`${a.downloadLink}?download=1`);
    assert.equal(Buffer.compare(Buffer.from(await download.arrayBuffer()), first), 0);
    // Bytes served are counted when the response ends, just after the client has them.
    const deadline = Date.now() + 5000;
    while ((await t.server.services.gc.stats()).bytesServed < first.length && Date.now() < deadline) await sleep(10);
  });
  after(() => t?.close());

  const cli = (...args: string[]) => runCli([...args, '--data', t.dataDir]);

  test('stats --json: accounts, files by state, storage, de-dup savings, downloads and traffic', async () => {
    const stats = JSON.parse(assertOk(await cli('stats', '--json')));
    assert.deepEqual(stats, {
      // The operator made on first start, and the test's account.
      accounts: 2,
      files: {
        active: { count: 3, bytes: 2 * first.length + second.length },
        blocked: { count: 0, bytes: 0 },
        deleted: { count: 1, bytes: 'soon gone'.length },
      },
      // The file and its copy share one blob; the deleted file's blob went with it.
      stored: { blobs: 2, bytes: first.length + second.length },
      dedupSavedBytes: first.length,
      downloads: 1,
      bytesServed: first.length,
      expiry: null,
    });
  });

  test('stats with expiry on says how many files would expire now', async () => {
    const stats = JSON.parse(assertOk(await cli('stats', '--json', '--expire-after-days', '30')));
    assert.deepEqual(stats.expiry, { afterDays: 30, wouldExpire: 0 });
  });

  test('stats without --json is one line per figure', async () => {
    const out = assertOk(await cli('stats'));
    assert.match(out, /^accounts\s+2$/m);
    assert.match(out, /^files active\s+3, 2500 bytes \(2\.4 KiB\)$/m);
    assert.match(out, /^stored\s+2 blobs, 1500 bytes \(1\.5 KiB\)$/m);
    assert.match(out, /^saved by de-dup\s+1000 bytes$/m);
    assert.match(out, /^traffic served\s+1000 bytes$/m);
    assert.match(out, /^expiry\s+off$/m);
  });

  test('gc --dry-run --json counts without removing; gc --json removes and reports', async () => {
    const tmp = path.join(t.dataDir, 'tmp', `${randomBytes(16).toString('hex')}.part`);
    await writeFile(tmp, 'an upload that never finished');
    await age(tmp, 2 * HOUR_MS);
    const orphan = randomBytes(777);
    const sha256 = createHash('sha256').update(orphan).digest('hex');
    const orphanPath = path.join(t.dataDir, 'blobs', sha256.slice(0, 2), sha256.slice(2, 4), sha256);
    await mkdir(path.dirname(orphanPath), { recursive: true });
    await writeFile(orphanPath, orphan);
    await age(orphanPath, 2 * HOUR_MS);

    const expected = {
      filesExpired: 0,
      blobsRemoved: 0,
      orphanFilesRemoved: 1,
      bytesFreed: 777,
      tempFilesRemoved: 1,
      uploadLogPruned: 0,
      reservationsSettled: 0,
      trafficRefunded: 0,
      resumableUploadsExpired: 0,
      thumbnailsRemoved: 0,
    };
    const dry = JSON.parse(assertOk(await cli('gc', '--dry-run', '--json')));
    assert.deepEqual(dry, { dryRun: true, ...expected });
    assert.ok(existsSync(tmp) && existsSync(orphanPath), 'a dry run removes nothing');

    const report = JSON.parse(assertOk(await cli('gc', '--json')));
    assert.deepEqual(report, { dryRun: false, ...expected });
    assert.equal(existsSync(tmp), false);
    assert.equal(existsSync(orphanPath), false);

    // Live files are untouched, and a second run finds nothing.
    const again = JSON.parse(assertOk(await cli('gc', '--json')));
    assert.deepEqual(again, { dryRun: false, ...expected, orphanFilesRemoved: 0, bytesFreed: 0, tempFilesRemoved: 0 });
    const stats = JSON.parse(assertOk(await cli('stats', '--json')));
    assert.equal(stats.files.active.count, 3);
    assert.equal(stats.stored.blobs, 2);
  });

  test('gc without --json prints what it removed', async () => {
    const out = assertOk(await cli('gc'));
    assert.match(out, /^gc done, removed:$/m);
    assert.match(out, /^orphan blob files\s+0$/m);
    assert.match(out, /^temp files\s+0$/m);
    assert.match(out, /^thumbnails\s+0$/m);
    assert.match(assertOk(await cli('gc', '--dry-run')), /^gc dry run, nothing changed/m);
  });

  test('gc while the server (another holder) runs gc: one line naming the job, exit 1, nothing removed', async () => {
    const { store, clock } = t.server.services;
    assert.equal(await store.runLeases.take('gc', 'the-server 42', clock() + 60_000, clock()), true);
    try {
      assertFails(await cli('gc'), 1, /^filehaven gc: gc is already running \(the-server 42\); try again once it is done$/);
      assert.match(assertOk(await cli('gc', '--dry-run')), /^gc dry run, nothing changed/m, 'a dry run needs no lease');
      // --wait: runs once the other holder is done.
      const waiting = cli('gc', '--wait');
      await sleep(500);
      await store.runLeases.release('gc', 'the-server 42');
      assert.match(assertOk(await waiting), /^gc done, removed:$/m);
    } finally {
      await store.runLeases.release('gc', 'the-server 42');
    }
  });

  test('stray arguments and unknown flags are usage errors', async () => {
    assertFails(await cli('gc', 'now'), 2, /gc takes no arguments/);
    assertFails(await cli('stats', '--verbose'), 2, /verbose/);
  });
});
