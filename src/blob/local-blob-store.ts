import { createHash, randomBytes } from 'node:crypto';
import {
  close as closeCallback,
  type Dir,
  type Dirent,
  promises as fs,
  fsync as fsyncCallback,
  open as openCallback,
  rename as renameCallback,
  type Stats,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type CommitHooks, immediateHooks } from '../db/group-commit.js';
import {
  BlobNotFoundError,
  BlobStorageError,
  type BlobStore,
  BlobStoreUnavailableError,
  BlobTooLargeError,
  type ByteRange,
  SHA256_PATTERN,
  type StagedBlob,
  type StagedInfo,
  type StoredBlobInfo,
} from './blob-store.js';
import { FileRangeStream } from './file-range-stream.js';
import { FileSink } from './file-sink.js';

const STAGED_HANDLE = /^[0-9a-f]{32}\.part$/;

/**
 * Blobs as files under `<root>/blobs/<2 hex>/<2 hex>/<sha256>`: the key of a blob is its
 * digest (content addressing on disk, so a backup can check every file by its name).
 * Uploads stream to `<root>/tmp/<random>.part` and are renamed into place after fsync, so
 * a reader never sees half a blob and a crash leaves at most a temp file (removed by gc).
 */
export class LocalBlobStore implements BlobStore {
  readonly blobDir: string;
  readonly tempDir: string;
  /**
   * Fan-out folders whose entry in their parent is known durable (durableEntry), by
   * leafIndex and parentIndex: one byte each for the 65,536 + 256 of them.
   */
  private readonly durableFolders = new Uint8Array(LEAF_FOLDERS + PARENT_FOLDERS);
  /** Fan-out folders whose entries wait for their parent's fsync, by that parent. */
  private readonly pendingEntries = new Map<string, Set<number>>();

  constructor(root: string) {
    this.blobDir = path.join(root, 'blobs');
    this.tempDir = path.join(root, 'tmp');
  }

  /** Creates the folders; call once before use. */
  async init(): Promise<void> {
    try {
      await fs.mkdir(this.blobDir, { recursive: true });
      await fs.mkdir(this.tempDir, { recursive: true });
      await fs.access(this.tempDir, fs.constants.W_OK);
    } catch (error) {
      throw new BlobStoreUnavailableError(`the data folder cannot hold blobs (--data): ${(error as Error).message}`);
    }
  }

  async check(): Promise<void> {
    try {
      await fs.access(this.blobDir, fs.constants.W_OK);
      await fs.access(this.tempDir, fs.constants.W_OK);
    } catch (error) {
      throw new BlobStoreUnavailableError(`the data folder cannot hold blobs (--data): ${(error as Error).message}`);
    }
  }

  async stage(source: Readable, options: { maxBytes: number; signal?: AbortSignal }): Promise<StagedBlob> {
    const handle = `${randomBytes(16).toString('hex')}.part`;
    const tempPath = path.join(this.tempDir, handle);
    const hash = createHash('sha256');
    let size = 0;
    // Hashed as each socket chunk arrives: hashing each 1 MiB batch in the sink, as the
    // disk wrote it, measured about a fifth more CPU per upload (issue 28).
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > options.maxBytes) return done(new BlobTooLargeError(options.maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    // Opened with O_EXCL ('wx': a fresh file, never someone else's), fsynced before the
    // stream finishes so the bytes are durable before commit publishes them.
    const target = new FileSink({
      open: () => fs.open(tempPath, 'wx', 0o600),
      position: 0,
      sync: true,
      failure: (step, cause) => new BlobStorageError(step, cause),
    });
    try {
      await pipeline(source, meter, target, { signal: options.signal });
    } catch (error) {
      target.destroy();
      // A destroy while the file is still opening closes it later: wait, or the rm can run
      // first and the file appear after it.
      if (!target.closed) await new Promise<void>((resolve) => target.once('close', () => resolve()));
      // A temp file that cannot be removed now is collected by gc later; the cause of the
      // failure is what the caller needs.
      await fs.rm(tempPath, { force: true }).catch(() => {});
      throw error;
    }
    return { sha256: hash.digest('hex'), size, handle };
  }

  keyFor(staged: StagedBlob): string {
    return staged.sha256;
  }

  /**
   * A finished resumable upload's file (local-resumable-storage.ts) as a staged
   * blob: made durable, then hard-linked into staging, so publishing renames it into place
   * as it would an upload staged here, and the upload's own file stays until its row says
   * the file is stored (a crash in between loses nothing). A copy only where the
   * filesystem refuses links.
   */
  async adoptFile(source: string, digest: { sha256: string; size: number }): Promise<StagedBlob> {
    const handle = `${randomBytes(16).toString('hex')}.part`;
    const target = path.join(this.tempDir, handle);
    const file = await fs.open(source, 'r');
    try {
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await fs.link(source, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EMLINK') throw error;
      await fs.copyFile(source, target);
      const copy = await fs.open(target, 'r');
      try {
        await copy.sync();
      } finally {
        await copy.close();
      }
    }
    return { sha256: digest.sha256, size: digest.size, handle };
  }

  async publish(staged: StagedBlob, commit: CommitHooks = immediateHooks): Promise<string> {
    const tempPath = this.stagedPath(staged);
    const target = this.blobPath(staged.sha256);
    const leaf = leafIndex(staged.sha256);
    // Renamed over a copy already there (its row gone, or renamed in by a transaction that
    // then failed): same digest, same bytes, and either entry is whole. No check first: it
    // cost every upload a trip to the thread pool (issue 28).
    try {
      // A folder known durable exists: no mkdir (a folder removed behind the server's back
      // is made again below).
      if (!this.durableFolders[leaf]) await fs.mkdir(path.dirname(target), { recursive: true });
      await renameInto(tempPath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (this.durableFolders[leaf]) {
        this.durableFolders[leaf] = 0;
        this.durableFolders[parentIndex(leaf)] = 0;
        return this.publish(staged, commit);
      }
      throw new BlobNotFoundError(staged.handle);
    }
    await this.durableEntry(target, leaf, commit);
    return staged.sha256;
  }

  /**
   * Hands the transaction that will name `target` the fsync of its folder, and of each
   * folder up to blobs/ whose own entry is not known durable yet (a folder made for it is
   * an entry of its parent), to run before that COMMIT, once per folder for all the blobs
   * of the COMMIT. A folder's entry is known durable once an fsync of its parent that
   * started after the folder existed has succeeded; until then every publish into it asks
   * for that fsync again (the publish that made it may have failed before its fsync, or be
   * in a transaction running beside this one: PostgreSQL). Fan-out folders are never
   * removed while the server runs, so what is known stays true; it saves every upload
   * one or two folder fsyncs of three (issue 28).
   */
  private async durableEntry(target: string, leaf: number, commit: CommitHooks): Promise<void> {
    const leafDir = path.dirname(target);
    await commit.beforeCommit(leafDir, () => fsyncDir(leafDir));
    if (!this.durableFolders[leaf]) await this.entryToSync(path.dirname(leafDir), leaf, commit);
    const parent = parentIndex(leaf);
    if (!this.durableFolders[parent]) await this.entryToSync(this.blobDir, parent, commit);
  }

  /** Asks for the fsync of `folder`, which makes the entry of the fan-out folder `index` durable. */
  private entryToSync(folder: string, index: number, commit: CommitHooks): Promise<void> {
    let pending = this.pendingEntries.get(folder);
    if (!pending) {
      pending = new Set();
      this.pendingEntries.set(folder, pending);
    }
    pending.add(index);
    return commit.beforeCommit(folder, async () => {
      // Every entry asked for so far exists already: the fsync that starts now covers them.
      const covered = this.pendingEntries.get(folder);
      this.pendingEntries.delete(folder);
      await fsyncDir(folder);
      for (const entry of covered ?? []) this.durableFolders[entry] = 1;
    });
  }

  async discard(staged: StagedBlob): Promise<void> {
    await fs.rm(this.stagedPath(staged), { force: true });
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    let file: FileHandle;
    try {
      file = await fs.open(this.blobPath(key), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(key);
      throw error;
    }
    // Reads sized to the reader, 64 KiB to 1 MiB, in three buffers reused from start to
    // end when the caller recycles them (file-range-stream.ts, read-sizing.ts).
    return new FileRangeStream(file, range);
  }

  async has(key: string): Promise<boolean> {
    try {
      await fs.access(this.blobPath(key));
      return true;
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.blobPath(key), { force: true });
  }

  async *listBlobs(): AsyncIterable<StoredBlobInfo> {
    // blobs/<aa>/<bb>/<sha256>, each level read with opendir so no folder is ever held
    // in memory whole; anything not shaped like a blob is left alone.
    for await (const first of entries(this.blobDir)) {
      if (!first.isDirectory() || !BUCKET.test(first.name)) continue;
      const firstDir = path.join(this.blobDir, first.name);
      for await (const second of entries(firstDir)) {
        if (!second.isDirectory() || !BUCKET.test(second.name)) continue;
        const secondDir = path.join(firstDir, second.name);
        const prefix = first.name + second.name;
        for await (const entry of entries(secondDir)) {
          if (!entry.isFile() || !SHA256_PATTERN.test(entry.name) || !entry.name.startsWith(prefix)) continue;
          const info = await statIfPresent(path.join(secondDir, entry.name));
          if (info) yield { key: entry.name, size: info.size, modifiedAt: info.mtimeMs };
        }
      }
    }
  }

  async *listStaged(): AsyncIterable<StagedInfo> {
    for await (const entry of entries(this.tempDir)) {
      if (!entry.isFile() || !STAGED_HANDLE.test(entry.name)) continue;
      const info = await statIfPresent(path.join(this.tempDir, entry.name));
      if (info) yield { handle: entry.name, modifiedAt: info.mtimeMs };
    }
  }

  async deleteStaged(handle: string): Promise<void> {
    await fs.rm(this.stagedPath({ handle }), { force: true });
  }

  /** Path of a blob by its key (its digest), validated so no path is ever built from raw input. */
  blobPath(sha256: string): string {
    if (!SHA256_PATTERN.test(sha256)) throw new Error(`not a sha256 digest: ${sha256}`);
    return path.join(this.blobDir, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  private stagedPath(staged: Pick<StagedBlob, 'handle'>): string {
    if (!STAGED_HANDLE.test(staged.handle)) throw new Error(`not a staged handle: ${staged.handle}`);
    return path.join(this.tempDir, staged.handle);
  }
}

const BUCKET = /^[0-9a-f]{2}$/;

const LEAF_FOLDERS = 65_536;
const PARENT_FOLDERS = 256;

/** blobs/<aa>/<bb> of a digest as a number below LEAF_FOLDERS. */
function leafIndex(sha256: string): number {
  return Number.parseInt(sha256.slice(0, 4), 16);
}

/** blobs/<aa> of a leaf folder, numbered after the leaves. */
function parentIndex(leaf: number): number {
  return LEAF_FOLDERS + (leaf >> 8);
}

/** rename(2), by the callback API: a promise of fs/promises costs more on the main thread. */
function renameInto(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => renameCallback(from, to, (error) => (error ? reject(error) : resolve())));
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
  // Iterating a Dir closes it at the end, on break and on error.
  yield* handle;
}

/** lstat, or null when the file went away between the listing and now. */
async function statIfPresent(file: string): Promise<Stats | null> {
  try {
    const info = await fs.lstat(file);
    return info.isFile() ? info : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/*
 * Why not smaller (issue 9): a fast download reads 1 MiB at a time into the same three
 * buffers from start to end (FileRangeStream, recycled by sendFile), so its reads cost no
 * garbage; 512 KiB reads only doubled the trips through libuv's thread pool (a slow one
 * reads less: read-sizing.ts). Uploads: file-sink.ts.
 */

/**
 * fsync of a folder makes a rename inside it durable. By descriptor and callbacks rather
 * than a FileHandle: three of these may follow each upload (issue 28).
 */
function fsyncDir(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    openCallback(dir, 'r', (openError, fd) => {
      if (openError) return reject(openError);
      fsyncCallback(fd, (syncError) => {
        closeCallback(fd, (closeError) => {
          const error = syncError ?? closeError;
          if (error) reject(error);
          else resolve();
        });
      });
    });
  });
}
