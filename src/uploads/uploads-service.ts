import type { Readable } from 'node:stream';
import type { BlobStore, StagedBlob } from '../blob/blob-store.js';
import type { MetadataStore, Repositories } from '../db/repositories/repositories.js';
import { errors, isRefusal } from '../domain/errors.js';
import { type ExpiresIn, type FileExpiryRules, fileExpiresAt, parseExpiresIn } from '../domain/expiry.js';
import type { Clock, IdSource } from '../domain/ids.js';
import { sanitizeFileName } from '../domain/names.js';
import type { Account, Folder } from '../domain/types.js';
import { type DetachedLease, settleDetached } from '../limits/upload-quota.js';
import type { UploadVolume } from '../limits/upload-volume.js';
import type { Metrics } from '../observability/metrics.js';
import { blacklistedNamePattern } from '../services/moderation-service.js';
import type { CreatedFile } from '../services/new-file-row.js';
import { type AdmissionDeps, admitUpload } from './admission.js';
import { stageUpload } from './staging.js';
import type { StagedSource, StreamSource, UploadInput } from './upload-input.js';

/** What an account may upload now (API.md 8), for a page to check files before sending them. */
export interface UploadAllowanceView {
  /** The largest file the server accepts, in bytes. */
  maxFileSize: number;
  /** The account's upload volume per rolling 24 h in bytes; null = unlimited. */
  volumeLimit: number | null;
  /** Bytes of it left now (stored and in-flight uploads counted); null = unlimited. */
  volumeLeft: number | null;
}

/** What an upload whose bytes arrive later (a resumable upload) declares when it begins. */
export interface DeclaredUpload {
  /** Its whole length in bytes. */
  length: number;
  /** The file name as sent; null for a partial upload of tus's concatenation (its final names the file). */
  name: string | null;
  /** The folder it is meant for, checked now; null for the top level. */
  folderId: string | null;
}

export interface UploadsServiceDeps {
  store: MetadataStore;
  blobs: BlobStore;
  ids: IdSource;
  clock: Clock;
  volume: UploadVolume;
  /** Checks the folder an upload names belongs to its owner (errorFolderNotFound, errorPermissionDenied). */
  folders: { owned(owner: Account, id: string): Promise<Folder> };
  /** The largest file (--max-file-size), enforced while staging. */
  maxFileSize: number;
  /** The operator's file expiry settings: the default of an upload naming none, and the cap. */
  fileExpiry: FileExpiryRules;
  /** Uploads in flight, their bytes and outcomes, counted here for every entry point. */
  metrics: Pick<Metrics, 'uploadStarted' | 'resumableUploadEnded'>;
  /** Where unexpected storage failures are reported. */
  log: (error: unknown, message: string) => void;
}

/**
 * The upload use case (STYLE.md: uploads/): bytes + owner + folder + limits -> a file.
 * Every entry point (POST /files, the web form, the tus finish; WebDAV PUT and upload
 * requests later) calls `upload`; it owns the upload volume, staging and hashing, the
 * blacklist, dedup, the file row in its folder in one transaction, the upload log and
 * the metrics. A resumable upload also reserves its volume here when it begins
 * (`reserveAhead`) and has it checked again before each write (`recheck`).
 */
export class UploadsService {
  constructor(private readonly deps: UploadsServiceDeps) {}

  /**
   * Makes the bytes of `input.source` a file of `input.owner` in `input.folder`. Refusals
   * are ApiErrors: errorUploadLimit (before any byte is read when no volume is left, or
   * mid-stream), errorFileSize mid-stream, errorEmptyFile, errorFileInBlackList,
   * errorFolderNotFound; a storage failure is errorUploadFaild (500). A stream source's own
   * errors (client gone, malformed body) pass through. Nothing of a failed upload is kept
   * but a staged source's bytes after a failure that is no refusal.
   */
  upload(input: UploadInput): Promise<CreatedFile> {
    return input.source.kind === 'stream' ? this.streamed(input, input.source) : this.staged(input, input.source);
  }

  /**
   * Reads an upload's `expires_in` field (seconds, at least 1) and checks it against the
   * operator's cap now, so a bad one is refused before any byte is kept:
   * errorWrongParameters. The moment itself is taken when the file row is written.
   */
  expiresIn(raw: string | undefined): ExpiresIn {
    const asked = parseExpiresIn(raw, { zeroMeansNever: false });
    fileExpiresAt(asked, this.deps.fileExpiry, this.deps.clock());
    return asked;
  }

  /**
   * Before the first byte of an upload whose bytes arrive over many requests: checks what it
   * declares (errorEmptyFile, errorFileSize, the folder, errorFileInBlackList by name) and
   * reserves its whole length against the owner's volume (errorUploadLimit), detached from
   * any server until `lease.until`. `within` writes the upload's own row in the same
   * transaction, with the reservation's id (null for an unlimited owner); the reservation
   * ends when the upload is stored (`upload` with a staged source) or given up.
   */
  async reserveAhead(
    owner: Account,
    declared: DeclaredUpload,
    lease: DetachedLease,
    within: (repos: Repositories, reservationId: number | null) => Promise<void>,
  ): Promise<void> {
    await this.admissible(owner, declared);
    await this.deps.volume.reserveResumable(owner, declared.length, lease, within);
  }

  /**
   * What an upload declares, checked before its bytes are taken: errorEmptyFile,
   * errorFileSize, the folder (errorFolderNotFound, errorPermissionDenied) and
   * errorFileInBlackList by name. Reserves nothing.
   */
  async admissible(owner: Account, declared: DeclaredUpload): Promise<void> {
    if (declared.length === 0) throw errors.emptyFile();
    if (declared.length > this.deps.maxFileSize) throw errors.fileSize(this.deps.maxFileSize);
    if (declared.folderId !== null) await this.deps.folders.owned(owner, declared.folderId);
    if (declared.name !== null && (await blacklistedNamePattern(this.deps.store.blacklist, sanitizeFileName(declared.name))) !== null)
      throw errors.blacklisted();
  }

  /**
   * Stages bytes whose volume was reserved ahead (the partial uploads of a tus
   * concatenation, read in order), hashed as they pass and cut at the largest file, for
   * `upload` with a staged source; nothing is kept when staging fails.
   */
  stageReserved(source: Readable, signal?: AbortSignal): Promise<StagedBlob> {
    return stageUpload(this.deps.blobs, source, { maxBytes: this.deps.maxFileSize, signal, log: this.deps.log });
  }

  /**
   * Before more bytes of an upload reserved ahead arrive: the limits again (API.md 8), as
   * they may have changed since it began: the largest file, and the owner's volume.
   */
  async recheck(owner: Account, length: number): Promise<void> {
    if (length > this.deps.maxFileSize) throw errors.fileSize(this.deps.maxFileSize);
    await this.deps.volume.recheck(owner);
  }

  /**
   * What `owner` may upload now: a reading, not a reservation (another upload may take the
   * volume meanwhile); every upload is still checked while it streams.
   */
  async allowance(owner: Account): Promise<UploadAllowanceView> {
    const { limit, used } = await this.deps.volume.usage(owner);
    return { maxFileSize: this.deps.maxFileSize, volumeLimit: limit, volumeLeft: limit === null ? null : Math.max(0, limit - used) };
  }

  /** Bytes that stream now: volume taken first, then metered, staged and admitted. */
  private async streamed(input: UploadInput, source: StreamSource): Promise<CreatedFile> {
    const { blobs, log } = this.deps;
    const maxBytes = Math.min(this.deps.maxFileSize, input.limits?.maxFileSize ?? Number.POSITIVE_INFINITY);
    const allowance = await this.deps.volume.begin(input.owner, source.declaredBytes);
    // Every upload past the volume's first check ends stored or failed, counted once.
    const meter = this.deps.metrics.uploadStarted();
    let staged: StagedBlob;
    let name: string | undefined;
    let expiresIn: ExpiresIn | undefined;
    try {
      ({ staged, name, expiresIn } = await source.receive({
        stage: async (stream, signal) => {
          const received = await stageUpload(blobs, allowance.meter(stream), { maxBytes, signal, log });
          meter.received(received.size);
          return received;
        },
        discard: (unwanted) => blobs.discard(unwanted),
      }));
    } catch (error) {
      allowance.end();
      meter.end('failed');
      throw error;
    }
    try {
      const created = await allowance.whenStored((joinVolume) =>
        admitUpload(this.admission(), input.owner.id, staged, name, {
          folder: input.folder,
          expiresIn: expiresIn ?? input.expiresIn ?? { kind: 'absent' },
          within: async (repos, file) => {
            await input.within?.(repos, file);
            await joinVolume(repos, file.size);
          },
          keepStagedOnFailure: false,
          allowEmpty: input.limits?.allowEmpty,
        }),
      );
      meter.end('stored');
      return created;
    } catch (error) {
      meter.end('failed');
      throw error;
    }
  }

  /** Bytes staged already, their volume reserved ahead: the reservation becomes the upload log row in the file's transaction. */
  private async staged(input: UploadInput, source: StagedSource): Promise<CreatedFile> {
    const ended = (outcome: 'stored' | 'failed') =>
      this.deps.metrics.resumableUploadEnded(outcome, source.staged.size, (this.deps.clock() - source.startedAt) / 1000);
    try {
      const created = await admitUpload(this.admission(), input.owner.id, source.staged, source.name, {
        folder: input.folder,
        expiresIn: input.expiresIn ?? { kind: 'absent' },
        keepStagedOnFailure: source.keepOnFailure ?? true,
        within: async (repos, file) => {
          await input.within?.(repos, file);
          // The bytes join the owner's volume as the reservation ends (or, unlimited, just join).
          const stored = { accountId: input.owner.id, bytes: file.size, at: this.deps.clock() };
          if (source.reservationId === null) await repos.uploadLog.record(stored.accountId, stored.bytes, stored.at);
          else await settleDetached(repos, source.reservationId, stored);
        },
      });
      ended('stored');
      return created;
    } catch (error) {
      // A refusal ends the upload; anything else leaves it to be finished again.
      if (isRefusal(error)) ended('failed');
      throw error;
    }
  }

  private admission(): AdmissionDeps {
    const { store, blobs, ids, clock, fileExpiry, log } = this.deps;
    return { store, blobs, ids, clock, fileExpiry, log };
  }
}
