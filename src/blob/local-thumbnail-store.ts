import { randomBytes } from 'node:crypto';
import { type Dir, type Dirent, promises as fs } from 'node:fs';
import path from 'node:path';
import { BlobStorageError, SHA256_PATTERN } from './blob-store.js';
import type { StoredThumbnail, ThumbnailStore } from './thumbnail-store.js';

const BUCKET = /^[0-9a-f]{2}$/;

/**
 * Thumbnails as files under `<root>/thumbs/<2 hex>/<sha256>`, beside `<root>/blobs`.
 * Written to a temp file and renamed into place, so a reader sees a whole thumbnail or
 * none. The temp file is an upload's kind (`<root>/tmp/<32 hex>.part`, local-blob-store.ts),
 * on the same file system so the rename is atomic: one a crash leaves behind is removed
 * by gc's temp sweep after --temp-grace, like an upload's (nothing is ever left in thumbs/).
 */
export class LocalThumbnailStore implements ThumbnailStore {
  readonly dir: string;
  /** Where writes are staged: the blob store's temp folder. */
  readonly tempDir: string;

  constructor(root: string) {
    this.dir = path.join(root, 'thumbs');
    this.tempDir = path.join(root, 'tmp');
  }

  async put(sha256: string, bytes: Buffer): Promise<void> {
    const target = this.pathOf(sha256);
    const temp = path.join(this.tempDir, `${randomBytes(16).toString('hex')}.part`);
    try {
      await fs.mkdir(this.tempDir, { recursive: true });
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(temp, bytes, { flag: 'wx' });
      await fs.rename(temp, target);
    } catch (error) {
      await fs.rm(temp, { force: true }).catch(() => {});
      throw new BlobStorageError('thumbnail write', error);
    }
  }

  async get(sha256: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(this.pathOf(sha256));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new BlobStorageError('thumbnail read', error);
    }
  }

  async delete(sha256: string): Promise<void> {
    await fs.rm(this.pathOf(sha256), { force: true });
  }

  async *list(): AsyncIterable<StoredThumbnail> {
    for await (const bucket of entries(this.dir)) {
      if (!bucket.isDirectory() || !BUCKET.test(bucket.name)) continue;
      const bucketDir = path.join(this.dir, bucket.name);
      for await (const entry of entries(bucketDir)) {
        if (!entry.isFile() || !SHA256_PATTERN.test(entry.name) || !entry.name.startsWith(bucket.name)) continue;
        const info = await fs.lstat(path.join(bucketDir, entry.name)).catch(() => null);
        if (info?.isFile()) yield { sha256: entry.name, modifiedAt: info.mtimeMs };
      }
    }
  }

  /** A thumbnail's path by digest, validated so no path is ever built from raw input. */
  private pathOf(sha256: string): string {
    if (!SHA256_PATTERN.test(sha256)) throw new Error(`not a sha256 digest: ${sha256}`);
    return path.join(this.dir, sha256.slice(0, 2), sha256);
  }
}

/** The entries of a folder, streamed; a folder that does not exist has none. */
async function* entries(dir: string): AsyncIterable<Dirent> {
  let handle: Dir;
  try {
    handle = await fs.opendir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  yield* handle;
}
