import { PassThrough, type Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { MetadataStore } from '../db/repositories/repositories.js';
import { ArchivePaths, safeSegment } from '../domain/archive-paths.js';
import { errors } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import { type FileRecord, FileStatus, type Folder, isExpired } from '../domain/types.js';
import type { FileBytes } from './file-bytes.js';

export interface FolderArchiveServiceDeps {
  store: MetadataStore;
  /** Opens a file's bytes (errorFileNotFound when its blob is gone). */
  downloads: FileBytes;
  /** Expired files are left out of a plan, and not sent once they expire (they behave as deleted). */
  clock: Clock;
  /** What one archive may hold; FOLDER_ARCHIVE_LIMITS unless a test makes them small. */
  limits?: Partial<FolderArchiveLimits>;
}

/** What planning one archive may cost (docs/web.md "A folder as one ZIP"); past any of them, a 400. */
export interface FolderArchiveLimits {
  /** Most files: the plan (one row each) and the central directory are held until the end. */
  maxFiles: number;
  /** Most folders below the top one walked (each costs a query). */
  maxFolders: number;
  /** Deepest folder level below the top one (folders cannot form cycles: this bounds the walk, it is no cycle guard). */
  maxDepth: number;
}

export const FOLDER_ARCHIVE_LIMITS: FolderArchiveLimits = { maxFiles: 20_000, maxFolders: 5_000, maxDepth: 32 };
/** Rows read at a time while listing a folder. */
const PAGE = 500;

/** One file of the archive and the path it is extracted to. */
export interface ArchiveEntry {
  path: string;
  file: FileRecord;
  /** Where the entry's bytes start in the ZIP (after its local header): what a cut download sent of it. */
  dataOffset: number;
}

/** What a folder's ZIP will hold, decided before the first byte is sent. */
export interface ArchivePlan {
  folder: Folder;
  /** The attachment's name: the folder's name with ".zip". */
  fileName: string;
  /** Every folder below the top one, as an entry of its own, so empty folders are kept too. */
  directories: Array<{ path: string; createdAt: number }>;
  /** The active files, folder by folder. */
  entries: ArchiveEntry[];
  /** The exact length of the ZIP in bytes (STORE entries of known sizes). */
  size: number;
}

/** What happens as an archive streams, for counting (download starts, bytes served). */
export interface ArchiveEvents {
  /** An entry's bytes are about to be read. */
  entryStarted?: (file: FileRecord) => void;
}

/**
 * A folder downloaded as one ZIP (docs/web.md "A folder as one ZIP"): the folder and every
 * folder below it, their active files only (blocked and deleted files are never
 * included), streamed through yazl with STORE entries (no compression: most shared files
 * are already compressed, and known sizes make the length exact, so the response has a
 * Content-Length). yazl switches to ZIP64 by itself when an entry, an offset or the entry
 * count passes the classic limits. Files are opened one at a time, when their turn comes,
 * so a folder of any size holds one blob stream open.
 */
export class FolderArchiveService {
  private readonly limits: FolderArchiveLimits;

  constructor(private readonly deps: FolderArchiveServiceDeps) {
    this.limits = { ...FOLDER_ARCHIVE_LIMITS, ...deps.limits };
  }

  /**
   * Lists what the ZIP of `folder` holds and its length. errorBadRequest when the folder
   * tree holds more files or folders, or deeper folders, than one archive takes: the walk
   * stops there (no query reads past a cap), so a refused plan costs no more than an
   * accepted one. Never a partial archive.
   */
  async plan(folder: Folder): Promise<ArchivePlan> {
    const { maxFiles, maxFolders, maxDepth } = this.limits;
    const tooMany = (what: string) => errors.badRequest(`This folder holds ${what}, too many for one ZIP; download its folders one by one.`);
    const paths = new ArchivePaths();
    const directories: ArchivePlan['directories'] = [];
    const entries: Array<Omit<ArchiveEntry, 'dataOffset'>> = [];
    // Breadth first: a folder's sub-folders are claimed before its files (ArchivePaths).
    const queue: Array<{ folder: Folder; path: string; depth: number }> = [{ folder, path: '', depth: 0 }];
    for (let next = queue.shift(); next; next = queue.shift()) {
      // One more than may still come: enough to know the cap is passed, never all of them.
      const children = await this.deps.store.folders.children(next.folder.id, maxFolders - directories.length + 1);
      if (children.length > 0 && next.depth >= maxDepth) throw tooMany(`folders more than ${maxDepth} levels deep`);
      for (const child of children) {
        if (directories.length >= maxFolders) throw tooMany(`more than ${maxFolders} folders`);
        const path = paths.claim(next.path, child.name, 'folder');
        directories.push({ path, createdAt: child.createdAt });
        queue.push({ folder: child, path, depth: next.depth + 1 });
      }
      for await (const file of this.activeFiles(next.folder.id, maxFiles - entries.length + 1)) {
        if (entries.length >= maxFiles) throw tooMany(`more than ${maxFiles} files`);
        entries.push({ path: paths.claim(next.path, file.name, 'file'), file });
      }
    }
    // The length yazl will produce, computed the way it does (by a dry run with no bytes);
    // the run also places every entry, so a cut download knows what it sent of each file.
    const { size, offsets } = await new Promise<{ size: number; offsets: number[] }>((resolve) => {
      // Its first entry asks for its bytes at once: that request is left unanswered.
      const dry = this.zipOf(directories, entries, () => {});
      dry.end(undefined, ((total: number) => {
        // yazl's own bookkeeping (3.3.1, pinned in package.json for this): each entry's
        // local header offset; its header is the fixed 30 bytes and the name (yazl writes
        // no extra field there). test/http/folder-zip.test.ts checks what a cut ZIP counts.
        const placed = (dry as unknown as { entries: Array<{ relativeOffsetOfLocalHeader: number; utf8FileName: Buffer }> }).entries;
        resolve({ size: total, offsets: placed.slice(directories.length).map((entry) => entry.relativeOffsetOfLocalHeader + 30 + entry.utf8FileName.length) });
      }) as unknown as () => void);
      (dry.outputStream as Readable).destroy();
    });
    const placed = entries.map((entry, i) => ({ ...entry, dataOffset: offsets[i]! }));
    return { folder, fileName: `${safeSegment(folder.name, 'folder')}.zip`, directories, entries: placed, size };
  }

  /**
   * The bytes of each file a client received when `sent` bytes of the ZIP reached it
   * (headers and the central directory are no file's); files with none are left out.
   */
  sentPerFile(plan: ArchivePlan, sent: number): Array<{ file: FileRecord; bytes: number }> {
    const out: Array<{ file: FileRecord; bytes: number }> = [];
    for (const entry of plan.entries) {
      if (entry.dataOffset >= sent) break;
      const bytes = Math.min(entry.file.size, sent - entry.dataOffset);
      if (bytes > 0) out.push({ file: entry.file, bytes });
    }
    return out;
  }

  /**
   * The ZIP's bytes. Each file is checked again when its turn comes: one blocked or
   * deleted since the plan, moved out of the folder's tree, or whose bytes are gone, fails
   * the stream (a client sees a cut
   * download, never a blocked file's bytes). Destroying the returned stream, or aborting
   * `signal`, stops the archive and closes the file being read.
   */
  stream(plan: ArchivePlan, options: { signal?: AbortSignal; events?: ArchiveEvents } = {}): Readable {
    const output = new PassThrough({ highWaterMark: 64 * 1024 });
    let current: Readable | undefined;
    let stopped = false;
    const stop = (error?: Error) => {
      if (stopped) return;
      stopped = true;
      options.signal?.removeEventListener('abort', onAbort);
      current?.destroy();
      (zip.outputStream as Readable).destroy();
      output.destroy(error);
    };
    const onAbort = () => stop();
    const zip = this.zipOf(plan.directories, plan.entries, (entry, done) => {
      this.openEntry(plan.folder, entry.file).then(
        (source) => {
          if (stopped) {
            source.destroy();
            return;
          }
          current = source;
          options.events?.entryStarted?.(entry.file);
          // yazl pipes the source without listening for its errors: a read failure
          // (an object store that fails mid-file) ends the archive, not the process.
          source.once('error', (error) => stop(error));
          done(null, source);
        },
        (error: Error) => stop(error),
      );
    });
    zip.once('error', (error: Error) => stop(error));
    output.once('close', () => stop());
    if (options.signal?.aborted) stop();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    zip.end();
    (zip.outputStream as Readable).pipe(output);
    return output;
  }

  /** A yazl archive of these entries (STORE, sizes and dates given), not yet ended. */
  private zipOf(
    directories: ArchivePlan['directories'],
    entries: Array<Omit<ArchiveEntry, 'dataOffset'>>,
    open: (entry: Omit<ArchiveEntry, 'dataOffset'>, done: (error: Error | null, source?: Readable) => void) => void,
  ): ZipFile {
    const zip = new ZipFile();
    for (const directory of directories) zip.addEmptyDirectory(directory.path, { mtime: new Date(directory.createdAt) });
    for (const entry of entries) {
      zip.addReadStreamLazy(entry.path, { size: entry.file.size, compress: false, mtime: new Date(entry.file.createdAt) }, (done) =>
        open(entry, done as (error: Error | null, source?: Readable) => void),
      );
    }
    return zip;
  }

  /**
   * A file's bytes, if it is still active and still where the plan found it: a block, a
   * delete or a move since the plan is honoured. A file stays in its folder, and that
   * folder below the top one, or it is not sent (its folder's chain is read again for each
   * file: a folder moved out mid-ZIP takes its files with it; at most maxDepth reads).
   */
  private async openEntry(top: Folder, planned: FileRecord): Promise<Readable> {
    const file = await this.deps.store.files.byId(planned.id);
    if (
      !file ||
      file.status !== FileStatus.Active ||
      isExpired(file, this.deps.clock()) ||
      file.sha256 !== planned.sha256 ||
      file.folderId !== planned.folderId
    ) {
      throw errors.fileNotFound();
    }
    if (!(await this.isBelow(file.folderId, top.id))) throw errors.fileNotFound();
    return this.deps.downloads.open(file);
  }

  /** Whether folder `id` is `top` or below it now. */
  private async isBelow(id: string | null, top: string): Promise<boolean> {
    for (let depth = 0; id !== null && depth <= this.limits.maxDepth; depth++) {
      if (id === top) return true;
      id = (await this.deps.store.folders.byId(id))?.parentId ?? null;
    }
    return false;
  }

  /** A folder's active files, a page at a time (newest first, as the folder page lists them), at most `most`. */
  private async *activeFiles(folderId: string, most: number): AsyncIterable<FileRecord> {
    let before: { createdAt: number; id: string } | undefined;
    for (let left = most; left > 0; ) {
      const limit = Math.min(PAGE, left);
      const page = await this.deps.store.files.list({ folderId, states: [FileStatus.Active], before, liveAt: this.deps.clock(), limit });
      yield* page;
      left -= page.length;
      if (page.length < limit) return;
      const last = page.at(-1)!;
      before = { createdAt: last.createdAt, id: last.id };
    }
  }
}
