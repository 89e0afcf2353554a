import type { BlobStore, StagedBlob } from '../blob/blob-store.js';
import type { MetadataStore, Repositories } from '../db/repositories/repositories.js';

/*
 * The protocol that keeps blob rows, file rows and stored bytes consistent, on every
 * metadata engine and every blob store. Two names are locked (Repositories.locks.blob):
 *   - the digest, by every step that adds or drops a live reference to it: an upload, a
 *     copy, a file's delete, a blacklisting with --block-existing, gc of an unreferenced
 *     row. Under it, "does any live file point at this digest" cannot change;
 *   - the store key, by every step that makes bytes reachable (publish) or removes them.
 *     Under it, "does any blob row name this key" cannot change.
 * On a content-addressed store (local) the two names are the same string.
 *
 * Rules that follow, whatever the interleaving:
 *   - a committed file row always has a blob row, and the key it names has bytes: publish
 *     runs in the transaction that inserts the row, under the key's lock, and what makes
 *     it durable (the folder's fsync) is done before that COMMIT (a commit hook, shared by
 *     the transactions of one group commit); bytes are only removed under that lock once
 *     no durable row names the key (removeUnnamedBytes reads only durable rows);
 *   - bytes go in two steps: a transaction drops the row (when no live file points at the
 *     digest), then another removes the bytes if no row names the key again. A crash
 *     between the two leaves bytes no row names, which gc collects; the reverse order
 *     could leave a live row without bytes.
 * Publishing is cheap (a rename, an existence check; its fsync waits for the COMMIT)
 * because it runs with locks held; an S3 store keeps an upload under its own key rather
 * than copying it to a digest name.
 */

/**
 * In the caller's transaction: runs `insertRows` under the digest's lock, then, unless the
 * digest is already stored, publishes the staged bytes and records the blob row. Returns
 * the rows' result and whether the staged copy is a duplicate that the caller must
 * discard after COMMIT.
 */
export async function admitStagedBlob<T>(
  repos: Repositories,
  blobs: BlobStore,
  staged: StagedBlob,
  at: number,
  insertRows: () => Promise<T>,
): Promise<{ result: T; duplicate: boolean }> {
  await repos.locks.blob(staged.sha256);
  const existing = await repos.blobs.keyOf(staged.sha256);
  // Rows first: a refusal (a blacklisted digest) then publishes nothing.
  const result = await insertRows();
  if (existing !== null) return { result, duplicate: true };
  const key = blobs.keyFor(staged);
  await repos.locks.blob(key);
  await blobs.publish(staged, repos.commit);
  await repos.blobs.insert(staged.sha256, staged.size, key, at);
  return { result, duplicate: false };
}

/**
 * After a transaction of admitStagedBlob rolled back or failed to commit: removes the
 * staged copy, and the published bytes unless a row names their key (a COMMIT whose
 * answer was lost may have landed). Failures are left to gc, which finds the same bytes.
 */
export async function abandonStagedBlob(store: MetadataStore, blobs: BlobStore, staged: StagedBlob): Promise<void> {
  const key = blobs.keyFor(staged);
  // Where the staged handle is the key (S3 publishes an upload where it lies), the staged
  // bytes are the published ones: discarding them would delete what a transaction that
  // failed after its COMMIT landed names. removeUnnamedBytes alone decides, under the
  // key's lock. Elsewhere (a local temp file) the staged copy is not the published path.
  if (key !== staged.handle) await blobs.discard(staged).catch(() => {});
  await removeUnnamedBytes(store, blobs, key).catch(() => {});
}

/**
 * In the caller's transaction, which holds `locks.blob(sha256)` (taken first, before any
 * row lock, as a file's delete does): drops the digest's blob row if no live file points
 * at it any more, and leaves the bytes for removeUnnamedBytes after COMMIT. The key whose
 * bytes to remove, or null when the row stays.
 */
export async function dropUnreferencedBlobRow(repos: Repositories, sha256: string): Promise<string | null> {
  return repos.blobs.removeIfUnreferenced(sha256);
}

/**
 * In a transaction of its own: removes the bytes under `key` unless a blob row names it
 * (on a content-addressed store, the same digest uploaded again since its row was
 * dropped). True when the bytes went.
 */
export async function removeUnnamedBytes(store: MetadataStore, blobs: BlobStore, key: string): Promise<boolean> {
  // readsDurable: a row another transaction dropped counts as gone only once that drop
  // is durable (with group commit it may still be on its way to the disk).
  return store.transaction(
    async (repos) => {
      await repos.locks.blob(key);
      if (await repos.blobs.namesKey(key)) return false;
      await blobs.delete(key);
      return true;
    },
    { readsDurable: true },
  );
}

/** Drops the digest's row if unreferenced, then its bytes: the two steps of a removal, for gc. */
export async function removeUnreferencedBlob(store: MetadataStore, blobs: BlobStore, sha256: string): Promise<boolean> {
  const key = await store.transaction(async (repos) => {
    await repos.locks.blob(sha256);
    return dropUnreferencedBlobRow(repos, sha256);
  });
  if (key === null) return false;
  await removeUnnamedBytes(store, blobs, key);
  return true;
}
