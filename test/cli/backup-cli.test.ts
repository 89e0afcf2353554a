import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { assertFails, assertOk, cleanEnv, filehavenEntry, runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = filehavenEntry();

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** A file the test uploaded: where it downloads from and what its bytes hash to. */
interface Uploaded {
  id: string;
  /** `/<id>/<name>` of its download_link, valid on any server holding the file. */
  linkPath: string;
  sha256: string;
}

/** `filehaven serve` on a data folder, in its own process, as an operator starts it. */
async function serveFolder(dataDir: string): Promise<{ url: string; stdout: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', dataDir, '--log-level', 'silent'], {
    cwd: ROOT,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening:\n${stdout}\n${stderr}`)));
  });
  return {
    url,
    stdout,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Downloads `file` from `url` (free download, whole body); null when not answered 200. */
async function download(url: string, file: Uploaded): Promise<string | null> {
  const response = await fetch(`${url}${file.linkPath}?download=1`);
  const body = Buffer.from(await response.arrayBuffer());
  return response.status === 200 ? sha256(body) : null;
}

/** Live file rows of a data folder's database. */
function liveRows(dataDir: string): Array<{ id: string; sha256: string }> {
  const db = new SQLite(path.join(dataDir, 'filehaven.db'), { fileMustExist: true });
  try {
    return db.prepare("SELECT id, sha256 FROM files WHERE status != 'D' ORDER BY id").all() as Array<{ id: string; sha256: string }>;
  } finally {
    db.close();
  }
}

const blobFile = (dir: string, digest: string) => path.join(dir, 'blobs', digest.slice(0, 2), digest.slice(2, 4), digest);

/** Flips every bit of one byte in the middle of a file. */
async function flipByte(file: string): Promise<void> {
  const bytes = await readFile(file);
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  await writeFile(file, bytes);
}

/** The mode bits of a file. */
const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

describe('filehaven backup and restore', { concurrency: 1, timeout: 300_000 }, () => {
  let t: TestServer;
  let work: string;
  let key: string;
  /** Files live before any backup. */
  const kept: Uploaded[] = [];
  /** Deleted before any backup: must not come back. */
  let gone: Uploaded;
  /** A backup of the quiet site, for the restore tests. */
  let quiet: string;

  const upload = async (name: string, content: Buffer): Promise<Uploaded> => {
    const r = await t.upload(key, name, content);
    assert.equal(r.response.status, 201, r.body);
    return { id: r.id, linkPath: new URL(r.downloadLink).pathname, sha256: sha256(content) };
  };
  const remove = async (id: string) => {
    const response = await t.fetch(`/files/${id}`, { method: 'DELETE', headers: { Authorization: key } });
    assert.equal(response.status, 200, await response.text());
  };
  const cli = (...args: string[]) => runCli([...args, '--data', t.dataDir]);
  /** A fresh path under the test's folder (not created). */
  let counter = 0;
  const fresh = (name: string) => path.join(work, `${name}-${++counter}`);

  before(async () => {
    // No API rate limits: the concurrent workload below sends hundreds of requests a second.
    t = await startTestServer({ apiRatePerKey: 0, apiRatePerIp: 0, gcIntervalMs: 200 });
    work = await mkdtemp(path.join(tmpdir(), 'filehaven-backup-test-'));
    ({ key } = await t.account());
    const big = randomBytes(3 * 1024 * 1024 + 17);
    const small = Buffer.from('a small text file\n');
    kept.push(await upload('big.bin', big));
    kept.push(await upload('small.txt', small));
    // The same bytes under another name: one blob, two rows.
    kept.push(await upload('big again.bin', big));
    const copy = await t.fetch(`/files/copy/${kept[1]!.id}`, { method: 'POST', headers: { Authorization: key } });
    const copyBody = await copy.text();
    assert.equal(copy.status, 201, copyBody);
    const copyId = /<entry>\s*<id>([^<]+)<\/id>/.exec(copyBody)![1]!;
    kept.push({ ...kept[1]!, id: copyId, linkPath: new URL(/title="download_link" href="([^"]+)"/.exec(copyBody)![1]!).pathname });
    for (let i = 0; i < 5; i++) kept.push(await upload(`unique-${i}.bin`, randomBytes(10_000 + i)));
    gone = await upload('deleted.txt', Buffer.from('deleted before the backup'));
    await remove(gone.id);

    quiet = fresh('quiet');
    assertOk(await cli('backup', '--to', quiet));
  });
  after(async () => {
    await t?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('a backup folder holds the manifest, the database, the blobs and the secret (0600)', async () => {
    const manifest = JSON.parse(await readFile(path.join(quiet, 'filehaven-backup.json'), 'utf8'));
    assert.equal(manifest.format, 'filehaven-backup');
    assert.equal(manifest.version, 1);
    assert.equal(manifest.secret, 'file');
    assert.equal(manifest.snapshots, 1);
    assert.deepEqual(manifest.files, { live: kept.length });
    // big (twice), small (twice) and the five unique files: seven blobs.
    const blobs = new Set(kept.map((f) => f.sha256));
    assert.equal(manifest.blobs.count, blobs.size);
    const sizes = await Promise.all([...blobs].map(async (digest) => (await stat(blobFile(quiet, digest))).size));
    assert.equal(
      manifest.blobs.bytes,
      sizes.reduce((a, b) => a + b, 0),
    );
    const db = await readFile(path.join(quiet, 'filehaven.db'));
    assert.equal(manifest.database.sha256, sha256(db));
    assert.equal(manifest.database.bytes, db.length);
    assert.equal(existsSync(blobFile(quiet, gone.sha256)), false, 'a deleted file leaves no blob in the backup');
    assert.deepEqual((await readdir(quiet)).sort(), ['blobs', 'filehaven-backup.json', 'filehaven.db', 'secret']);
    assert.equal(await modeOf(path.join(quiet, 'secret')), 0o600);
    assert.equal(await readFile(path.join(quiet, 'secret'), 'utf8'), await readFile(path.join(t.dataDir, 'secret'), 'utf8'));
    // The backup is in the site's audit log.
    const audit = JSON.parse(assertOk(await cli('audit', '--action', 'backup.', '--json')));
    assert.equal(audit[0].action, 'backup.create');
    assert.equal(audit[0].object, `backup:${quiet}`);
  });

  test('restore into an empty folder; the restored site serves every file byte-identical', async () => {
    const target = fresh('restored');
    await mkdir(target);
    const out = assertOk(await runCli(['restore', '--from', quiet, '--data', target]));
    assert.match(out, /^restored into .*, every byte verified$/m);
    assert.deepEqual((await readdir(target)).sort(), ['blobs', 'filehaven.db', 'secret']);
    assert.equal(await modeOf(path.join(target, 'secret')), 0o600);
    const site = await serveFolder(target);
    try {
      assert.doesNotMatch(site.stdout, /First start/, 'the restored database already has its operator');
      for (const file of kept) assert.equal(await download(site.url, file), file.sha256, `file ${file.id}`);
      assert.equal(await download(site.url, gone), null, 'a file deleted before the backup stays deleted');
      // The secret came along: the account's API key still opens.
      const account = await fetch(`${site.url}/account`, { headers: { Authorization: key } });
      assert.equal(account.status, 200, await account.text());
    } finally {
      await site.stop();
    }
    const audit = JSON.parse(assertOk(await runCli(['audit', '--action', 'backup.restore', '--json', '--data', target])));
    assert.equal(audit.length, 1);
    assert.equal(audit[0].object, `backup:${quiet}`);
  });

  test('a backup taken while uploads, deletes and gc run is consistent and complete', async () => {
    const doomed: Uploaded[] = [];
    for (let i = 0; i < 60; i++) doomed.push(await upload(`doomed-${i}.bin`, randomBytes(2000 + i)));
    const before = [...kept, ...doomed];
    const during: Uploaded[] = [];
    const maybeDeleted = new Set<string>();
    let stop = false;
    const uploader = async (n: number) => {
      for (let i = 0; !stop; i++) during.push(await upload(`during-${n}-${i}.bin`, randomBytes(500 + ((i * 37) % 5000))));
    };
    const deleter = async () => {
      for (const file of doomed) {
        if (stop) return;
        // Counted before the request: the delete may commit before its answer arrives.
        maybeDeleted.add(file.id);
        await remove(file.id);
        await sleep(25);
      }
    };
    const workload = Promise.all([uploader(1), uploader(2), uploader(3), deleter()]);
    // Let the workload get going, so the snapshot lands in the middle of it.
    await sleep(100);
    const to = fresh('busy');
    const [backup, gc] = await Promise.all([cli('backup', '--to', to, '--json'), cli('gc')]);
    stop = true;
    await workload;
    const report = JSON.parse(assertOk(backup));
    // gc ran beside the backup, here or in the server (one at a time: issue 10).
    if (gc.code !== 0) assertFails(gc, 1, /^filehaven gc: gc is already running \(.+\); try again once it is done$/);
    assert.ok(during.length > 0 && maybeDeleted.size > 0, 'the workload ran during the backup');
    console.log(`# backup during ${during.length} uploads and ${maybeDeleted.size} deletes: ${report.manifest.snapshots} snapshot(s)`);

    const target = fresh('restored-busy');
    assertOk(await runCli(['restore', '--from', to, '--data', target]));
    const rows = liveRows(target);
    assert.equal(rows.length, report.manifest.files.live);
    const site = await serveFolder(target);
    try {
      // Every file acknowledged before the backup started is there, unless it was deleted
      // meanwhile; then it is there whole or not at all.
      for (const file of before) {
        const got = await download(site.url, file);
        if (maybeDeleted.has(file.id)) assert.ok(got === null || got === file.sha256, `file ${file.id} is whole or absent`);
        else assert.equal(got, file.sha256, `file ${file.id} acknowledged before the backup`);
      }
      // Every live row of the snapshot downloads, byte-identical to what was uploaded.
      const byId = new Map([...before, ...during].map((f) => [f.id, f]));
      for (const row of rows) {
        const file = byId.get(row.id);
        assert.ok(file, `row ${row.id} is a file the test uploaded`);
        assert.equal(row.sha256, file.sha256);
        assert.equal(await download(site.url, file), file.sha256, `file ${row.id} of the snapshot`);
      }
      assert.equal(await download(site.url, gone), null);
    } finally {
      await site.stop();
    }
  });

  test('backup refuses a folder that is not empty, a file, and leaves it as it was', async () => {
    const full = fresh('full');
    await mkdir(full);
    await writeFile(path.join(full, 'notes.txt'), 'mine');
    assertFails(await cli('backup', '--to', full), 1, /^filehaven backup: .*full-\d+ is not empty .*new or empty folder$/);
    assert.deepEqual(await readdir(full), ['notes.txt']);
    const file = path.join(full, 'notes.txt');
    assertFails(await cli('backup', '--to', file), 1, /is a file, not a folder/);
    assertFails(await cli('backup', '--to', quiet), 1, /is not empty/);
  });

  test('backup usage errors and a data folder without a database', async () => {
    assertFails(await cli('backup'), 2, /--to is required/);
    assertFails(await cli('backup', '--to', fresh('x'), 'extra'), 2, /backup takes no arguments/);
    const empty = fresh('empty-data');
    await mkdir(empty);
    const to = fresh('never');
    assertFails(await runCli(['backup', '--to', to, '--data', empty]), 1, /no filehaven database at .*filehaven\.db: is --data the site's data folder\?/);
    assert.deepEqual(await readdir(empty), [], 'nothing created in the data folder');
    assert.equal(existsSync(to), false, 'no backup folder left behind');
  });

  test("backup refuses a --secret that is not the site's, leaving nothing behind", async () => {
    const to = fresh('wrong-secret');
    assertFails(
      await cli('backup', '--to', to, '--secret', 'not the secret of this site'),
      1,
      /secret of --secret\/FILEHAVEN_SECRET is not the one this database was set up with/,
    );
    assert.equal(existsSync(to), false);
  });

  test('restore refuses a data folder that is not empty', async () => {
    const target = fresh('occupied');
    await mkdir(target);
    await writeFile(path.join(target, 'filehaven.db'), 'something else');
    assertFails(
      await runCli(['restore', '--from', quiet, '--data', target]),
      1,
      /^filehaven restore: .* is not empty .*restore only into a new or empty data folder$/,
    );
    assert.equal(await readFile(path.join(target, 'filehaven.db'), 'utf8'), 'something else');
    assertFails(await runCli(['restore', '--from', quiet, '--data', t.dataDir]), 1, /is not empty/);
  });

  test('restore refuses a missing backup and one without its manifest (unfinished)', async () => {
    const target = fresh('target');
    assertFails(await runCli(['restore', '--from', fresh('nowhere'), '--data', target]), 1, /no backup at .*: there is no such folder/);
    const unfinished = fresh('unfinished');
    await cp(quiet, unfinished, { recursive: true });
    await rm(path.join(unfinished, 'filehaven-backup.json'));
    assertFails(
      await runCli(['restore', '--from', unfinished, '--data', target]),
      1,
      /filehaven-backup\.json is missing \(a backup that did not finish has none\)/,
    );
    assert.equal(existsSync(target), false);
    assertFails(await runCli(['restore', '--data', target]), 2, /--from is required/);
  });

  /** Restores a damaged copy of the quiet backup; asserts the failure and that nothing is left. */
  async function restoreDamaged(damage: (copy: string) => Promise<void>, message: RegExp): Promise<void> {
    const copy = fresh('damaged');
    await cp(quiet, copy, { recursive: true });
    await damage(copy);
    const target = fresh('target');
    assertFails(await runCli(['restore', '--from', copy, '--data', target]), 1, message);
    assert.equal(existsSync(target), false, 'no data folder left behind');
    const leftovers = (await readdir(work)).filter((name) => name.startsWith(`.${path.basename(target)}.restore-`));
    assert.deepEqual(leftovers, [], 'no work folder left behind');
  }

  test('restore refuses a backup with a damaged blob, naming it', async () => {
    const victim = kept[0]!.sha256;
    await restoreDamaged(
      (copy) => flipByte(blobFile(copy, victim)),
      new RegExp(`blob ${victim} in the backup is damaged: its \\d+ bytes have SHA-256 [0-9a-f]{64}$`),
    );
  });

  test('restore refuses a backup missing a blob, naming it and a file that uses it', async () => {
    const victim = kept[4]!;
    await restoreDamaged(
      (copy) => rm(blobFile(copy, victim.sha256)),
      new RegExp(`blob ${victim.sha256} is not in the backup, though live files use it \\(${victim.id}\\)`),
    );
  });

  test('restore refuses a damaged database, a missing secret, a bad manifest', async () => {
    const manifestEdit = (edit: (text: string) => string) => async (copy: string) => {
      const file = path.join(copy, 'filehaven-backup.json');
      await writeFile(file, edit(await readFile(file, 'utf8')));
    };
    // Independent copies and targets: run side by side.
    await Promise.all([
      restoreDamaged((copy) => flipByte(path.join(copy, 'filehaven.db')), /the backup's database .* does not match its manifest/),
      restoreDamaged((copy) => rm(path.join(copy, 'secret')), /the backup's secret .* is missing/),
      restoreDamaged(
        (copy) => writeFile(path.join(copy, 'secret'), 'another secret of enough length\n'),
        /the secret of .*secret is not the one this database was set up with/,
      ),
      restoreDamaged(
        manifestEdit(() => '{"format":'),
        /filehaven-backup\.json is not valid JSON/,
      ),
      restoreDamaged(
        manifestEdit((text) => text.replace('"version": 1', '"version": 2')),
        /has backup format version 2; this filehaven reads version 1/,
      ),
      restoreDamaged(
        manifestEdit((text) => text.replace(/"count": \d+/, '"count": 99')),
        /the backup holds \d+ blobs \(\d+ bytes\), its manifest lists 99/,
      ),
      // An extra blob (named by its digest, so it verifies) is not in the manifest's count.
      restoreDamaged(async (copy) => {
        const extra = randomBytes(100);
        await mkdir(path.dirname(blobFile(copy, sha256(extra))), { recursive: true });
        await writeFile(blobFile(copy, sha256(extra)), extra);
      }, /the backup holds \d+ blobs .* its manifest lists/),
    ]);
  });
});
