import type { Readable } from 'node:stream';
import type { StagedBlob } from '../blob/blob-store.js';
import type { Repositories } from '../db/repositories/repositories.js';
import type { ExpiresIn } from '../domain/expiry.js';
import type { Account, FileRecord } from '../domain/types.js';

/*
 * What an entry point hands the upload use case (UploadsService.upload): whose file it
 * becomes, where it goes, where its bytes come from and the limits that apply. POST /files,
 * the web form and the tus finish build one each; WebDAV PUT and upload requests will too.
 */

/** Streams bytes into staging (counted, hashed, cut at the size limit); resolves with what was staged. */
export type StageBytes = (stream: Readable, signal?: AbortSignal) => Promise<StagedBlob>;

/** What a stream source gets to put the bytes it finds into staging. */
export interface StagingTools {
  /** Call once with the file's bytes: metered against the owner's volume, hashed, staged. */
  stage: StageBytes;
  /** Drops bytes staged for a request that failed after all (a second file part). */
  discard: (staged: StagedBlob) => Promise<void>;
}

/**
 * Bytes that arrive now (a multipart part, a form's file, a request body). The volume is
 * taken before `receive` is called, so a refusal comes before any byte is read; the bytes
 * are then counted against it as they stream. `receive` finds the bytes (a multipart
 * parser may have to read a while) and hands them to `stage`.
 */
export interface StreamSource {
  kind: 'stream';
  /** A length the bytes cannot exceed (a request's Content-Length), reserved whole when it fits. */
  declaredBytes?: number;
  /**
   * Stages the bytes through `tools.stage` and says the name the client gave them, and
   * the expiry its body asked for when that came with the bytes (a multipart field, read
   * before or after the file part; UploadsService.expiresIn checks it as it is read).
   */
  receive(tools: StagingTools): Promise<{ staged: StagedBlob; name: string | undefined; expiresIn?: ExpiresIn }>;
}

/**
 * Bytes already stored and hashed, whose volume was reserved when they began (a finished
 * resumable upload, reserved at its creation). They stay the caller's when storing fails
 * for a reason other than a refusal, to store again later: such bytes took hours to send.
 */
export interface StagedSource {
  kind: 'staged';
  staged: StagedBlob;
  name: string;
  /** The detached volume reservation that becomes the upload log row; null for an unlimited owner. */
  reservationId: number | null;
  /** When the upload began (a tus creation, maybe hours ago), for its duration in the metrics. */
  startedAt: number;
  /**
   * Whether the staged bytes stay the caller's after a failure that is no refusal (true
   * when absent). False for a concatenation: its partial uploads stay, and are staged again.
   */
  keepOnFailure?: boolean;
}

/** Where the bytes come from. */
export type UploadSource = StreamSource | StagedSource;

/** The folder a new file goes to; it is locked against its removal while the row is written. */
export interface UploadFolder {
  id: string;
  /**
   * When the folder is gone (or not the owner's) by the time the row is written: `refuse`
   * answers errorFolderNotFound and keeps nothing; `root` stores the file at the top
   * level instead (a resumable upload named its folder hours ago, and its bytes matter
   * more than where they land).
   */
  ifGone: 'refuse' | 'root';
}

/** Limits of the entry point, on top of the server's own. */
export interface UploadLimits {
  /** A largest file below --max-file-size (an upload request's own); never above it. */
  maxFileSize?: number;
  /**
   * Whether an empty file is stored rather than refused (errorEmptyFile): WebDAV clients
   * make empty files (a new document, a lock on an unmapped name) and sync them (issue 27).
   */
  allowEmpty?: boolean;
}

/** One upload: bytes + owner + folder + limits -> a file. */
export interface UploadInput {
  /** Whose file it becomes and whose upload volume pays for it. */
  owner: Account;
  /** The folder; null for the top level. */
  folder: UploadFolder | null;
  source: UploadSource;
  limits?: UploadLimits;
  /**
   * The file expiry asked for up front (a tus upload's metadata); a stream source's own
   * answer wins. Absent: the operator's default (--file-expiry-default). The moment is
   * taken from when the row is written, and written with it (issue 25).
   */
  expiresIn?: ExpiresIn;
  /**
   * Runs in the transaction that creates the file row, after the row: what else must
   * commit with it or not at all (a resumable upload marks itself stored; an upload
   * request will count its file). Throwing rolls the file back.
   */
  within?: (repos: Repositories, file: FileRecord) => Promise<void>;
}
