import assert from 'node:assert/strict';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { LocalBlobStore } from '../../src/blob/local-blob-store.js';
import { openSqlite } from '../../src/db/dialect.js';
import { openMetadataStore } from '../../src/db/metadata-store.js';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { FileStatus } from '../../src/domain/types.js';
import { dropUnreferencedBlobRow, publishBlob, removeUnreferencedBytes } from '../../src/services/blob-lifecycle.js';

/**
 * The two steps of deleting a file's last reference (services/blob-lifecycle.ts), each
 * interleaving placed by hand on a real SQLite store and a real blob folder: no timing.
 */
describe('deleting the last reference: row first, bytes after', () => {
  let dir: string;
  let store: MetadataStore;
  let blobs: LocalBlobStore;
  let owner: number;
  let counter = 0;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'filehaven-lifecycle-'));
    store = await openMetadataStore(openSqlite(dir));
    blobs = new LocalBlobStore(dir);
    await blobs.init();
    owner = (await store.accounts.create({ login: 'ada', passwordHash: 'x', name: '', email: '', premiumStart: null, premiumEnd: null, trafficLeft: 0, isOperator: false, createdAt: 0 })).id;
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Uploads `content` as a new file through the publish step; returns its id and digest. */
  async function upload(content: string): Promise<{ id: string; sha256: string }> {
    const staged = await blobs.stage(Readable.from([Buffer.from(content)]), { maxBytes: 1 << 20 });
    const id = `FILE${String(++counter).padStart(6, '0')}`;
    await store.transaction((repos) =>
      publishBlob(repos, blobs, staged, 1, () => repos.files.create({ id, ownerId: owner, folderId: null, name: 'a.txt', size: staged.size, sha256: staged.sha256, deleteHash: 'h', createdAt: 1 })),
    );
    return { id, sha256: staged.sha256 };
  }

  /** The first step, as FilesService.markDeleted runs it; true when the digest's row went. */
  const markDeleted = (id: string, sha256: string) =>
    store.transaction(async (repos) => {
      assert.ok(await repos.files.setStatus(id, [FileStatus.Active], FileStatus.Deleted, 2));
      return dropUnreferencedBlobRow(repos, sha256);
    });

  const onDisk = (sha256: string) => access(blobs.blobPath(sha256)).then(() => true, () => false);

  it('the first step leaves the bytes; the second removes them', async () => {
    const file = await upload('only copy');
    assert.equal(await markDeleted(file.id, file.sha256), true);
    assert.equal(await onDisk(file.sha256), true, 'bytes stay until the second step');
    assert.equal(await removeUnreferencedBytes(store, blobs, file.sha256, 9, 3), true);
    assert.equal(await onDisk(file.sha256), false);
    assert.equal(await store.housekeeping.blobRecorded(file.sha256), false);
  });

  it('an upload of the same bytes between the two steps keeps them', async () => {
    const first = await upload('same bytes');
    assert.equal(await markDeleted(first.id, first.sha256), true);
    const second = await upload('same bytes');
    assert.equal(second.sha256, first.sha256);
    assert.equal(await removeUnreferencedBytes(store, blobs, first.sha256, 10, 3), false, 'a live file points at the digest again');
    assert.equal(await onDisk(second.sha256), true);
    assert.equal((await store.files.byId(second.id))?.status, FileStatus.Active);
  });

  it('a crash between unlink and COMMIT of the second step leaves the file deleted, never live without bytes', async () => {
    const file = await upload('crash in step two');
    assert.equal(await markDeleted(file.id, file.sha256), true);
    // A store whose delete unlinks, then fails as a crash before COMMIT would: the second
    // transaction rolls back.
    const crashing = Object.create(blobs) as LocalBlobStore;
    crashing.delete = async (sha256: string) => {
      await blobs.delete(sha256);
      throw new Error('killed before COMMIT');
    };
    await assert.rejects(removeUnreferencedBytes(store, crashing, file.sha256, 17, 3), /killed before COMMIT/);
    assert.equal((await store.files.byId(file.id))?.status, FileStatus.Deleted, 'the delete stays done');
    assert.equal(await store.housekeeping.blobRecorded(file.sha256), false, 'no row for bytes that are gone');
    assert.equal(await onDisk(file.sha256), false);
    // Uploaded again later, the bytes come back with their row.
    const again = await upload('crash in step two');
    assert.equal(await onDisk(again.sha256), true);
  });

  it('a crash between the two steps leaves unreferenced bytes, which the second step (gc) removes later', async () => {
    const file = await upload('crash between steps');
    assert.equal(await markDeleted(file.id, file.sha256), true);
    // No second step ran: the file is deleted, the bytes are orphans.
    assert.equal((await store.files.byId(file.id))?.status, FileStatus.Deleted);
    assert.equal(await onDisk(file.sha256), true);
    assert.equal(await removeUnreferencedBytes(store, blobs, file.sha256, 19, 3), true);
    assert.equal(await onDisk(file.sha256), false);
  });
});
