import type { Readable } from 'node:stream';
import type { StagedBlob } from '../blob/blob-store.js';
import type { Account } from '../domain/types.js';
import type { UploadVolume } from '../limits/upload-volume.js';
import type { Metrics } from '../observability/metrics.js';
import type { CreatedFile, FilesService } from '../services/files-service.js';

/**
 * One upload in flight, from its first byte to its file row: its share of the owner's
 * upload volume and its staged bytes. Every entry point (POST /files, the web form, and
 * resumable uploads later) goes receive → store, or cancel when the file will not be kept.
 */
export interface PendingUpload {
  /**
   * Streams the file into the blob store's staging while the volume counts its bytes:
   * errorFileSize or errorUploadLimit mid-stream (nothing kept), errorUploadFaild when
   * the storage fails; the source's own errors (client gone, malformed body) pass through.
   */
  receive(source: Readable, signal?: AbortSignal): Promise<StagedBlob>;
  /**
   * Admits the staged bytes as a file of the owner (empty file, blacklisted digest or
   * name refused; dedup; the blob protocol) and records its volume. The staged bytes are
   * consumed either way.
   */
  store(staged: StagedBlob, filename: string | undefined): Promise<CreatedFile>;
  /** Gives back the volume of an upload that will not be stored; a no-op after store. */
  cancel(): void;
}

/** What an account may upload now (API.md 8), for a page to check files before sending them. */
export interface UploadAllowanceView {
  /** The largest file the server accepts, in bytes. */
  maxFileSize: number;
  /** The account's upload volume per rolling 24 h in bytes; null = unlimited. */
  volumeLimit: number | null;
  /** Bytes of it left now (stored and in-flight uploads counted); null = unlimited. */
  volumeLeft: number | null;
}

export interface UploadsServiceDeps {
  files: FilesService;
  volume: UploadVolume;
  /** The largest file (--max-file-size); FilesService enforces it while staging. */
  maxFileSize: number;
  /** Uploads in flight, their bytes and durations, counted here for every entry point. */
  metrics: Pick<Metrics, 'uploadStarted'>;
}

/** The upload use case: stream → limits → hash while staging → admit → publish (STYLE.md: uploads/). */
export class UploadsService {
  constructor(private readonly deps: UploadsServiceDeps) {}

  /**
   * Starts an upload of `owner`: errorUploadLimit before any byte is read when no volume
   * is left. `declaredBytes` (a request's Content-Length, which the file cannot exceed) is
   * reserved whole when it fits, so parallel uploads are served first come, first served.
   */
  async begin(owner: Account, declaredBytes?: number): Promise<PendingUpload> {
    const allowance = await this.deps.volume.begin(owner, declaredBytes);
    const { files } = this.deps;
    // Every upload ends in a failed receive, a store (kept or refused) or a cancel.
    const meter = this.deps.metrics.uploadStarted();
    return {
      async receive(source, signal) {
        try {
          const staged = await files.receive(allowance.meter(source), signal);
          meter.received(staged.size);
          return staged;
        } catch (error) {
          allowance.end();
          meter.end('failed');
          throw error;
        }
      },
      async store(staged, filename) {
        try {
          const created = await allowance.whenStored(files.store(owner, staged, filename));
          meter.end('stored');
          return created;
        } catch (error) {
          meter.end('failed');
          throw error;
        }
      },
      cancel: () => {
        allowance.end();
        meter.end('failed');
      },
    };
  }

  /**
   * What `owner` may upload now: a reading, not a reservation (another upload may take the
   * volume meanwhile); every upload is still checked while it streams.
   */
  async allowance(owner: Account): Promise<UploadAllowanceView> {
    const { limit, used } = await this.deps.volume.usage(owner);
    return { maxFileSize: this.deps.maxFileSize, volumeLimit: limit, volumeLeft: limit === null ? null : Math.max(0, limit - used) };
  }

  /** Drops staged bytes that will not be stored (a second file part, a refused form). */
  discard(staged: StagedBlob): Promise<void> {
    return this.deps.files.discard(staged);
  }
}
