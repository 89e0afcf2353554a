import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type BackupStep, createBackup } from '../../src/backup/backup-service.js';
import { restoreBackup } from '../../src/backup/restore-service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const blobFile = (dir: string, digest: string) => path.join(dir, 'blobs', digest.slice(0, 2), digest.slice(2, 4), digest);

/** Blob digests in a backup or data folder. */
async function blobsIn(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const a of await readdir(path.join(dir, 'blobs')).catch(() => [])) {
    for (const b of await readdir(path.join(dir, 'blobs', a))) found.push(...(await readdir(path.join(dir, 'blobs', a, b))));
  }
  return found.sort();
}

// The interleavings a running server can produce between the backup's steps, put exactly
// there with the onStep hook: real server, real files, real deletes.
describe('createBackup against deletes that race it', { concurrency: 1, timeout: 120_000 }, () => {
  let t: TestServer;
  let work: string;
  let key: string;
  let files: Array<{ id: string; sha256: string }>;
  let n = 0;

  before(async () => {
    t = await startTestServer({ gcIntervalMs: 0 });
    work = await mkdtemp(path.join(tmpdir(), 'filehaven-backup-race-'));
    ({ key } = await t.account());
  });
  beforeEach(async () => {
    files = [];
    for (let i = 0; i < 4; i++) {
      const content = randomBytes(5000 + i);
      const r = await t.upload(key, `f${i}.bin`, content);
      assert.equal(r.response.status, 201, r.body);
      files.push({ id: r.id, sha256: sha256(content) });
    }
  });
  after(async () => {
    await t?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** The owner's delete: marks the row deleted and unlinks its (unique) blob at once. */
  const ownerDelete = async (id: string) => {
    const response = await t.fetch(`/files/${id}`, { method: 'DELETE', headers: { Authorization: key } });
    assert.equal(response.status, 200, await response.text());
  };
  const backup = (onStep?: (step: BackupStep) => Promise<void>) => createBackup({ dataDir: t.dataDir, secret: null, to: path.join(work, `b${++n}`), onStep });

  test('a blob deleted between snapshot and copy: a new snapshot, without the file', async () => {
    const [a, b, c, d] = files as [(typeof files)[0], (typeof files)[0], (typeof files)[0], (typeof files)[0]];
    const steps: string[] = [];
    const report = await backup(async (step) => {
      steps.push(`${step.kind}${step.attempt}${step.missing === undefined ? '' : `:${step.missing}`}`);
      // After the first snapshot: b's bytes go before they are copied.
      if (step.kind === 'snapshot' && step.attempt === 1) await ownerDelete(b.id);
      // After the first pass: d's bytes were copied, then d goes before the next snapshot.
      if (step.kind === 'copied' && step.attempt === 1) await ownerDelete(d.id);
    });
    assert.deepEqual(steps, ['snapshot1', 'copied1:1', 'snapshot2', 'copied2:0']);
    assert.equal(report.manifest.snapshots, 2);
    // The second snapshot sees b and d deleted: d's copied bytes were dropped again.
    const expected = [a.sha256, c.sha256];
    const live = (await t.server.services.gc.stats()).files.active.count;
    assert.equal(report.manifest.files.live, live);
    const inBackup = await blobsIn(report.dir);
    for (const digest of expected) assert.ok(inBackup.includes(digest), `blob ${digest} backed up`);
    assert.ok(!inBackup.includes(b.sha256) && !inBackup.includes(d.sha256), 'blobs of deleted files are not in the backup');
    assert.equal(report.manifest.blobs.count, inBackup.length);

    // And it restores: every count and digest checks out.
    const restored = await restoreBackup({ from: report.dir, dataDir: path.join(work, `r${n}`), secret: null });
    assert.deepEqual(await blobsIn(restored.dataDir), inBackup);
  });

  test('a blob missing in every snapshot is damage: the backup fails naming it, leaving nothing', async () => {
    const victim = files[2]!;
    await rm(blobFile(t.dataDir, victim.sha256));
    const to = path.join(work, `b${n + 1}`);
    await assert.rejects(backup(), (error: Error) => {
      assert.match(
        error.message,
        new RegExp(
          `^a blob that live files use is missing from .*: ${victim.sha256} \\(files ${victim.id}\\)\\. 3 snapshots in a row showed it live without its bytes, so no delete is racing the backup: the data folder is damaged$`,
        ),
      );
      return true;
    });
    assert.equal(existsSync(to), false);
    // Put right for the next test: the operator deletes the damaged file.
    await ownerDelete(victim.id);
  });

  test('a damaged blob in the site fails the backup naming it', async () => {
    const victim = files[1]!;
    const file = blobFile(t.dataDir, victim.sha256);
    const bytes = await readFile(file);
    bytes[0]! ^= 1;
    await writeFile(file, bytes);
    const to = path.join(work, `b${n + 1}`);
    await assert.rejects(backup(), (error: Error) => {
      assert.match(error.message, new RegExp(`^blob ${victim.sha256} in .* is damaged: its 5001 bytes have SHA-256 ${sha256(bytes)}; nothing was backed up$`));
      return true;
    });
    assert.equal(existsSync(to), false);
    await ownerDelete(victim.id);
  });

  test('an aborted backup removes what it wrote and keeps the folder it was given', async () => {
    const to = path.join(work, `kept-${++n}`);
    await mkdir(to);
    const controller = new AbortController();
    await assert.rejects(
      createBackup({
        dataDir: t.dataDir,
        secret: null,
        to,
        signal: controller.signal,
        onStep: async (step) => {
          if (step.kind === 'snapshot') controller.abort(new Error('stop'));
        },
      }),
    );
    assert.deepEqual(await readdir(to), [], 'the empty folder is left empty');
  });
});
