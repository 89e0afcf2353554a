import { PassThrough, type Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import type { MetadataStore } from '../db/repositories/repositories.js';
import { ArchivePaths, safeSegment } from '../domain/archive-paths.js';
import { errors } from '../domain/errors.js';
import { FileStatus, type FileRecord, type Folder } from '../domain/types.js';
import type { DownloadsService } from './downloads-service.js';

export interface FolderArchiveServiceDeps {
  store: MetadataStore;
  /** Opens a file's bytes (errorFileNotFound when its blob is gone). */
  downloads: Pick<DownloadsService, 'open'>;
  /** Most files one archive may hold; FOLDER_ARCHIVE_MAX_FILES unless a test makes it small. */
  maxFiles?: number;
}

/** Most files in one ZIP: the plan (one row each) and the central directory are held until the end. */
export const FOLDER_ARCHIVE_MAX_FILES = 20_000;
/** Most folders one ZIP walks (each costs a query). */
const MAX_FOLDERS = 5_000;
/** Deepest folder level walked (folders cannot form cycles; this is a guard). */
const MAX_DEPTH = 32;
/** Rows read at a time while listing a folder. */
const PAGE = 500;

/** One file of the archive and the path it is extracted to. */
export interface ArchiveEntry {
  path: string;
  file: FileRecord;
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
  /** An entry's bytes were all read into the archive. */
  entryDone?: (file: FileRecord) => void;
}

/**
 * A folder downloaded as one ZIP (README "A folder as one ZIP"): the folder and every
 * folder below it, their active files only (blocked and deleted files are never
 * included), streamed through yazl with STORE entries (no compression: most shared files
 * are already compressed, and known sizes make the length exact, so the response has a
 * Content-Length). yazl switches to ZIP64 by itself when an entry, an offset or the entry
 * count passes the classic limits. Files are opened one at a time, when their turn comes,
 * so a folder of any size holds one blob stream open.
 */
export class FolderArchiveService {
  private readonly maxFiles: number;

  constructor(private readonly deps: FolderArchiveServiceDeps) {
    this.maxFiles = deps.maxFiles ?? FOLDER_ARCHIVE_MAX_FILES;
  }

  /**
   * Lists what the ZIP of `folder` holds and its length. errorBadRequest when the folder
   * tree holds more than the most files (or folders) one archive takes.
   */
  async plan(folder: Folder): Promise<ArchivePlan> {
    const paths = new ArchivePaths();
    const directories: ArchivePlan['directories'] = [];
    const entries: ArchiveEntry[] = [];
    const seen = new Set([folder.id]);
    // Breadth first: a folder's sub-folders are claimed before its files (ArchivePaths).
    const queue: Array<{ folder: Folder; path: string; depth: number }> = [{ folder, path: '', depth: 0 }];
    for (let next = queue.shift(); next; next = queue.shift()) {
      if (next.depth < MAX_DEPTH) {
        for (const child of await this.deps.store.folders.children(next.folder.id)) {
          if (seen.has(child.id)) continue;
          seen.add(child.id);
          if (seen.size > MAX_FOLDERS) throw errors.badRequest(`This folder holds more than ${MAX_FOLDERS} folders, too many for one ZIP; download its folders one by one.`);
          const path = paths.claim(next.path, child.name, 'folder');
          directories.push({ path, createdAt: child.createdAt });
          queue.push({ folder: child, path, depth: next.depth + 1 });
        }
      }
      for await (const file of this.activeFiles(next.folder.id)) {
        if (entries.length >= this.maxFiles) throw errors.badRequest(`This folder holds more than ${this.maxFiles} files, too many for one ZIP; download its folders one by one.`);
        entries.push({ path: paths.claim(next.path, file.name, 'file'), file });
      }
    }
    // The length yazl will produce, computed the way it does (by a dry run with no bytes).
    const size = await new Promise<number>((resolve) => {
      // Its first entry asks for its bytes at once: that request is left unanswered.
      const dry = this.zipOf(directories, entries, () => {});
      dry.end(undefined, ((total: number) => resolve(total)) as unknown as () => void);
      (dry.outputStream as Readable).destroy();
    });
    return { folder, fileName: `${safeSegment(folder.name, 'folder')}.zip`, directories, entries, size };
  }

  /**
   * The ZIP's bytes. Each file is checked again when its turn comes: one blocked or
   * deleted since the plan, or whose bytes are gone, fails the stream (a client sees a cut
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
      this.openEntry(entry.file).then(
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
          source.once('end', () => options.events?.entryDone?.(entry.file));
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
    entries: ArchiveEntry[],
    open: (entry: ArchiveEntry, done: (error: Error | null, source?: Readable) => void) => void,
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

  /** A file's bytes, if it is still active (a block or delete since the plan is honoured). */
  private async openEntry(planned: FileRecord): Promise<Readable> {
    const file = await this.deps.store.files.byId(planned.id);
    if (!file || file.status !== FileStatus.Active || file.sha256 !== planned.sha256) throw errors.fileNotFound();
    return this.deps.downloads.open(file);
  }

  /** A folder's active files, a page at a time (newest first, as the folder page lists them). */
  private async *activeFiles(folderId: string): AsyncIterable<FileRecord> {
    let before: { createdAt: number; id: string } | undefined;
    for (;;) {
      const page = await this.deps.store.files.list({ folderId, states: [FileStatus.Active], before, limit: PAGE });
      yield* page;
      if (page.length < PAGE) return;
      const last = page.at(-1)!;
      before = { createdAt: last.createdAt, id: last.id };
    }
  }
}
