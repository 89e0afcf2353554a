import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, BlobTooLargeError, SHA256_PATTERN, type BlobStore, type ByteRange, type StagedBlob } from './blob-store.js';

const STAGED_HANDLE = /^[0-9a-f]{32}\.part$/;

/**
 * Blobs as files under `<root>/blobs/<2 hex>/<2 hex>/<sha256>`; uploads stream to
 * `<root>/tmp/<random>.part` and are renamed into place after fsync, so a reader never
 * sees half a blob and a crash leaves at most a temp file (removed by gc).
 */
export class LocalBlobStore implements BlobStore {
  readonly blobDir: string;
  readonly tempDir: string;

  constructor(root: string) {
    this.blobDir = path.join(root, 'blobs');
    this.tempDir = path.join(root, 'tmp');
  }

  /** Creates the folders; call once before use. */
  async init(): Promise<void> {
    await fs.mkdir(this.blobDir, { recursive: true });
    await fs.mkdir(this.tempDir, { recursive: true });
  }

  async stage(source: Readable, options: { maxBytes: number; signal?: AbortSignal }): Promise<StagedBlob> {
    const handle = `${randomBytes(16).toString('hex')}.part`;
    const tempPath = path.join(this.tempDir, handle);
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > options.maxBytes) return done(new BlobTooLargeError(options.maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    // O_EXCL ('wx'): a fresh file, never someone else's; flush: fsync before close, so
    // the bytes are durable before the blob is published.
    const target = createWriteStream(tempPath, { flags: 'wx', mode: 0o600, flush: true });
    try {
      await pipeline(source, meter, target, { signal: options.signal });
    } catch (error) {
      target.destroy();
      // A destroy while the file is still opening closes it later: wait, or the rm can run
      // first and the file appear after it.
      if (!target.closed) await new Promise<void>((resolve) => target.once('close', () => resolve()));
      await fs.rm(tempPath, { force: true });
      throw error;
    }
    return { sha256: hash.digest('hex'), size, handle };
  }

  async commit(staged: StagedBlob): Promise<void> {
    const tempPath = this.stagedPath(staged);
    const target = this.blobPath(staged.sha256);
    if (await this.has(staged.sha256)) {
      // Same digest, same bytes: the stored copy serves the new row.
      await fs.rm(tempPath, { force: true });
      return;
    }
    const dir = path.dirname(target);
    await fs.mkdir(dir, { recursive: true });
    await fs.rename(tempPath, target);
    await fsyncDir(dir);
  }

  async discard(staged: StagedBlob): Promise<void> {
    await fs.rm(this.stagedPath(staged), { force: true });
  }

  async read(sha256: string, range?: ByteRange): Promise<Readable> {
    let file;
    try {
      file = await fs.open(this.blobPath(sha256), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(sha256);
      throw error;
    }
    return file.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async has(sha256: string): Promise<boolean> {
    try {
      await fs.access(this.blobPath(sha256));
      return true;
    } catch {
      return false;
    }
  }

  async delete(sha256: string): Promise<void> {
    await fs.rm(this.blobPath(sha256), { force: true });
  }

  /** Path of a blob; the digest is validated so no path is ever built from raw input. */
  blobPath(sha256: string): string {
    if (!SHA256_PATTERN.test(sha256)) throw new Error(`not a sha256 digest: ${sha256}`);
    return path.join(this.blobDir, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  private stagedPath(staged: StagedBlob): string {
    if (!STAGED_HANDLE.test(staged.handle)) throw new Error(`not a staged handle: ${staged.handle}`);
    return path.join(this.tempDir, staged.handle);
  }
}

/** fsync of a folder makes a rename inside it durable. */
async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
