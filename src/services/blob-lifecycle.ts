import type { BlobStore, StagedBlob } from '../blob/blob-store.js';
import type { MetadataStore, Repositories } from '../db/repositories/repositories.js';

/*
 * The protocol that keeps blobs and file rows consistent. Every step runs inside a
 * metadata transaction whose first statement writes the blob row, so an upload and a
 * removal of the same digest are serialised by the database: on SQLite by its write
 * lock, on PostgreSQL by the row lock. The file-system step happens inside the
 * transaction, after the row work, so:
 *   - a committed upload always has its bytes in place (commit renames before COMMIT);
 *   - bytes are removed only when no live row points at the digest at that moment, and no
 *     new row can appear until the transaction ends.
 * A crash between a file-system step and COMMIT must leave a state that needs no repair
 * but gc's: bytes nobody points at (an upload's rename), never a live row without bytes.
 * That is why deleting a file is two transactions: the first marks the file deleted and
 * drops the digest's row when it was the last reference, leaving the bytes; the second
 * removes bytes that no row accounts for. Were the unlink in the first, a crash before its
 * COMMIT would bring the file back, live, with its bytes gone.
 */
/** Locks the digest, runs `insertRows`, then publishes the staged bytes under the digest. */
export async function publishBlob<T>(
  repos: Repositories,
  blobs: BlobStore,
  staged: StagedBlob,
  at: number,
  insertRows: () => Promise<T>,
): Promise<T> {
  await repos.blobs.ensure(staged.sha256, staged.size, at);
  const result = await insertRows();
  await blobs.commit(staged);
  return result;
}

/**
 * Inside the caller's transaction: drops the digest's blob row if no live file points at
 * it any more, and leaves the bytes for removeUnreferencedBytes after COMMIT. True when
 * the row went.
 */
export async function dropUnreferencedBlobRow(repos: Repositories, sha256: string): Promise<boolean> {
  return repos.blobs.removeIfUnreferenced(sha256);
}

/**
 * In a transaction of its own: removes a digest's bytes (and row) if no live file points
 * at it. The row is written first, taking the lock an upload takes; after that a
 * committed upload's file row is visible and keeps the bytes. A crash between the unlink
 * and COMMIT rolls back only a row that no file needed. True when the bytes went.
 */
export async function removeUnreferencedBytes(store: MetadataStore, blobs: BlobStore, sha256: string, size: number, at: number): Promise<boolean> {
  return store.transaction(async (repos) => {
    await repos.blobs.ensure(sha256, size, at);
    if (!(await repos.blobs.removeIfUnreferenced(sha256))) return false;
    await blobs.delete(sha256);
    return true;
  });
}
