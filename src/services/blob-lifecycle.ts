import type { BlobStore, StagedBlob } from '../blob/blob-store.js';
import type { Repositories } from '../db/repositories/repositories.js';

/*
 * The protocol that keeps blobs and file rows consistent. Both functions run inside a
 * metadata transaction whose first statement writes the blob row, so an upload and a
 * removal of the same digest are serialised by the database: on SQLite by its single
 * writer, on PostgreSQL by the row lock. The file-system step happens inside the
 * transaction, after the row work, so:
 *   - a committed upload always has its bytes in place (commit renames before COMMIT);
 *   - a removal deletes bytes only when no live row pointed at the digest at that moment,
 *     and no new row can appear until its transaction ends.
 * A crash between the rename and COMMIT leaves an unreferenced blob, which gc removes.
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

/** Removes a digest's bytes if no live file points at it any more; true when removed. */
export async function releaseBlob(repos: Repositories, blobs: BlobStore, sha256: string): Promise<boolean> {
  if (!(await repos.blobs.removeIfUnreferenced(sha256))) return false;
  await blobs.delete(sha256);
  return true;
}
