import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { PreviousUpload, UrlStorage } from 'tus-js-client';
import { writePrivateFile } from './private-file.js';

/** One upload as the file keeps it: tus-js-client's PreviousUpload and the fingerprint it is filed under. */
interface StoredUpload {
  /** The local file, the server and the account it was started for (tus-upload-transport.ts). */
  fingerprint: string;
  /** The upload URL the server gave at creation (tus 1.0 "Creation"); null for a parallel upload. */
  uploadUrl: string | null;
  /**
   * A parallel upload's partial upload URLs, in order (tus concatenation): a later run
   * resumes each and sends the final again. Absent in entries of single uploads.
   */
  parallelUploadUrls?: string[] | null;
  /** Upload-Length. */
  size: number | null;
  /** Upload-Metadata as sent (filename, folder). */
  metadata: Record<string, string>;
  /** When the upload was created, as tus-js-client writes it (Date#toString). */
  creationTime: string;
}

/** The file's content: the version, and the uploads by storage key. */
interface StateFile {
  version: 1;
  uploads: Record<string, StoredUpload>;
}

/**
 * An entry older than this is dropped when the file is next written: an upload never
 * resumed is long expired on the server by then, and the file must not grow forever.
 */
const KEEP_MS = 30 * 24 * 3600 * 1000;

/** Writes queued per file, so the uploads of one process (`--parallel`) never lose each other's entries. */
const queues = new Map<string, Promise<unknown>>();

/**
 * tus-js-client's URL storage (its `urlStorage` option) in one JSON file, for Node: the
 * upload URL of each unfinished upload under the fingerprint of its local file, so a
 * later process, after Ctrl-C, a lost connection or `kill -9`, finds it and resumes.
 *
 * Every change rewrites the file atomically (temp file, sync, rename, mode 0600), so a
 * crash never leaves it half written. Changes made in this process are serialized; two
 * processes writing at the same instant can lose one entry, which costs only that
 * upload's resume (it starts over). A damaged file counts as empty: it holds nothing
 * that cannot be started again.
 */
export class JsonFileUrlStorage implements UrlStorage {
  constructor(
    /** The JSON file (the CLI's: `uploads.json` beside its login). */
    readonly file: string,
    private readonly now: () => number = Date.now,
  ) {}

  async findAllUploads(): Promise<PreviousUpload[]> {
    return toPrevious(await this.read());
  }

  async findUploadsByFingerprint(fingerprint: string): Promise<PreviousUpload[]> {
    return toPrevious(await this.read(), fingerprint);
  }

  async removeUpload(urlStorageKey: string): Promise<void> {
    await this.change((uploads) => void delete uploads[urlStorageKey]);
  }

  /** Drops every entry of a fingerprint: once its upload is finished, none is of use. */
  async removeUploadsByFingerprint(fingerprint: string): Promise<void> {
    await this.change((uploads) => {
      for (const [key, upload] of Object.entries(uploads)) if (upload.fingerprint === fingerprint) delete uploads[key];
    });
  }

  async addUpload(fingerprint: string, upload: PreviousUpload): Promise<string> {
    const key = randomBytes(8).toString('hex');
    await this.change((uploads) => {
      uploads[key] = {
        fingerprint,
        uploadUrl: upload.uploadUrl ?? null,
        ...(upload.parallelUploadUrls ? { parallelUploadUrls: [...upload.parallelUploadUrls] } : {}),
        size: upload.size ?? null,
        metadata: { ...upload.metadata },
        creationTime: upload.creationTime,
      };
    });
    return key;
  }

  private async read(): Promise<Record<string, StoredUpload>> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
    try {
      const parsed = JSON.parse(text) as Partial<StateFile>;
      if (parsed.version !== 1 || typeof parsed.uploads !== 'object' || parsed.uploads === null) return {};
      return Object.fromEntries(Object.entries(parsed.uploads).filter(([, upload]) => isStoredUpload(upload)));
    } catch {
      return {};
    }
  }

  /** Reads, changes and rewrites the file, after every earlier change of this process. */
  private change(edit: (uploads: Record<string, StoredUpload>) => void): Promise<void> {
    const previous = queues.get(this.file) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(async () => {
        const uploads = await this.read();
        edit(uploads);
        const oldest = this.now() - KEEP_MS;
        for (const [key, upload] of Object.entries(uploads)) if (Date.parse(upload.creationTime) < oldest) delete uploads[key];
        const state: StateFile = { version: 1, uploads };
        await writePrivateFile(this.file, `${JSON.stringify(state, null, 2)}\n`);
      });
    queues.set(this.file, next);
    const forget = () => {
      if (queues.get(this.file) === next) queues.delete(this.file);
    };
    next.then(forget, forget);
    return next;
  }
}

function isStoredUpload(value: unknown): value is StoredUpload {
  const upload = value as Partial<StoredUpload> | null;
  return (
    typeof upload === 'object' &&
    upload !== null &&
    typeof upload.fingerprint === 'string' &&
    (typeof upload.uploadUrl === 'string' ||
      (Array.isArray(upload.parallelUploadUrls) &&
        upload.parallelUploadUrls.length > 0 &&
        upload.parallelUploadUrls.every((url) => typeof url === 'string'))) &&
    typeof upload.creationTime === 'string'
  );
}

/** The entries (of one fingerprint) as tus-js-client wants them, oldest first. */
function toPrevious(uploads: Record<string, StoredUpload>, fingerprint?: string): PreviousUpload[] {
  return Object.entries(uploads)
    .filter(([, upload]) => fingerprint === undefined || upload.fingerprint === fingerprint)
    .map(([key, upload]) => ({
      size: upload.size,
      metadata: upload.metadata ?? {},
      creationTime: upload.creationTime,
      urlStorageKey: key,
      uploadUrl: upload.uploadUrl,
      parallelUploadUrls: upload.parallelUploadUrls ?? null,
    }))
    .sort((a, b) => (Date.parse(a.creationTime) || 0) - (Date.parse(b.creationTime) || 0));
}
