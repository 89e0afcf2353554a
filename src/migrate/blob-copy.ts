import type { Readable } from 'node:stream';
import { BlobNotFoundError, type BlobStore, BlobTooLargeError, type StagedBlob } from '../blob/blob-store.js';

/** A blob row as the copy needs it. */
export interface BlobRow {
  sha256: string;
  size: number;
  /** The key in the source store. */
  key: string;
}

/** A migration that cannot go on: one line saying why and what to do. */
export class MigrateError extends Error {
  override name = 'MigrateError';
}

/**
 * Streams one blob from the source store into the target store and publishes it there;
 * returns the target key. stage() hashes and counts while the bytes pass (never a file in
 * memory), and the result must be the row's digest and size: anything else (a bit flipped
 * on disk, a truncated object) is refused and the staged copy dropped, so the target never
 * names bytes that are not what the row promises. maxBytes is the row's size, so a longer
 * source fails at its first extra byte instead of streaming on.
 */
export async function copyBlob(source: BlobStore, target: BlobStore, row: BlobRow, signal?: AbortSignal): Promise<string> {
  let stream: Readable;
  try {
    stream = await source.read(row.key);
  } catch (error) {
    if (error instanceof BlobNotFoundError) {
      throw new MigrateError(
        `blob ${row.sha256} is missing from the source store (key ${row.key}): its files cannot be migrated; run \`filehaven gc\` or restore the blob, then migrate again`,
      );
    }
    throw error;
  }
  let staged: StagedBlob;
  try {
    staged = await target.stage(stream, { maxBytes: row.size, signal });
  } catch (error) {
    stream.destroy();
    if (error instanceof BlobTooLargeError) throw mismatch(row, `more than its ${row.size} bytes`);
    throw error;
  }
  if (staged.sha256 !== row.sha256 || staged.size !== row.size) {
    await target.discard(staged);
    throw mismatch(row, `${staged.size} bytes with SHA-256 ${staged.sha256}`);
  }
  return target.publish(staged);
}

function mismatch(row: BlobRow, found: string): MigrateError {
  return new MigrateError(
    `blob ${row.sha256} is damaged in the source store (key ${row.key}): its row says ${row.size} bytes with that SHA-256, the store holds ${found}; nothing of it was copied (restore it from a backup, or block its files, then migrate again)`,
  );
}
