import type { Readable } from 'node:stream';
import type { ByteRange } from '../blob/blob-store.js';
import type { FileRecord, Folder } from '../domain/types.js';
import type { Metrics } from '../observability/metrics.js';
import type { DownloadCosts, DownloadLog } from './download-costs.js';
import type { DownloadCounts } from './download-counts.js';
import type { FileBytes } from './file-bytes.js';
import type { FolderArchiveService } from './folder-archive-service.js';
import type { Requester } from './requester.js';
import type { ShareCounts } from './share-counts.js';

export interface DownloadsServiceDeps {
  /** What a download costs, from who asks through what link. */
  costs: DownloadCosts;
  /** Where files' bytes are read. */
  bytes: FileBytes;
  /** A folder's ZIP: its plan and its bytes. */
  archives: FolderArchiveService;
  /** Download starts and bytes served are counted on the file (expiry and stats read them), in batches. */
  counts: DownloadCounts;
  /** Downloads in flight, their bytes and durations. */
  metrics: Pick<Metrics, 'downloadStarted'>;
  /** The download counts of shares (issue 25): exact, taken before the first body byte. */
  shareCounts: Pick<ShareCounts, 'take'>;
}

/** What every download request says besides the file and who asks. */
export interface DownloadRequest {
  /** Aborted once the response is over, however it ends: what the download held is given back then. */
  signal: AbortSignal;
  /** Where failures that must not fail the download are reported (the request's log). */
  log: DownloadLog;
}

/** A file download the HTTP layer drives (send-blob.ts): the same order for every requester. */
export interface FileDownload {
  /** The bytes (all, or an inclusive range) at the download's pace. */
  open(range?: ByteRange): Promise<Readable>;
  /**
   * A body of `length` bytes from byte `start` of the file is about to be sent: charged
   * (may refuse it), counted as a download start when it starts at 0, metered. Not called
   * for HEAD, 304 or 416.
   */
  begin(length: number, start: number): Promise<void>;
  /** `sent` body bytes in all have reached the client. */
  progress(sent: number): void;
  /** The body is over with `sent` bytes sent (called once after begin; later calls do nothing). */
  end(sent: number): void;
}

/** A folder's ZIP, planned: what the HTTP layer needs for its headers, and its bytes. */
export interface FolderDownload {
  /** The attachment's name: the folder's name with ".zip". */
  fileName: string;
  /** The exact length of the ZIP in bytes. */
  size: number;
  /**
   * Charges and starts the ZIP's bytes at the download's pace. The request's signal stops
   * them (closing the file being read) and counts what was sent of each file.
   */
  start(): Promise<Readable>;
  /** `sent` bytes of the ZIP in all have reached the client. */
  progress(sent: number): void;
}

/**
 * The download use case (STYLE.md sketch: downloads/): every entry point that sends a
 * file's bytes, or a folder's ZIP, calls it with who asks through what link
 * (requester.ts), and it decides and charges what the download costs (download-costs.ts:
 * a free slot and the speed cap, or premium traffic), counts download starts and bytes
 * served, and meters it. Routes only adapt HTTP to it: ranges, 304 and the byte pump
 * stay in send-blob.ts.
 */
export class DownloadsService implements FileBytes {
  constructor(private readonly deps: DownloadsServiceDeps) {}

  /** The same use case with another ZIP maker (other archive limits, in tests). */
  withArchives(archives: FolderArchiveService): DownloadsService {
    return new DownloadsService({ ...this.deps, archives });
  }

  /**
   * Resolves once the download counts taken so far are in the database (they are written
   * in batches, at most a second late: download-counts.ts). For readers that must see a
   * download that just ended, such as tests.
   */
  countsWritten(): Promise<void> {
    return this.deps.counts.flush();
  }

  /** The bytes of a file, or a range of them, at no cost: for thumbnails and ZIPs. */
  open(file: FileRecord, range?: ByteRange): Promise<Readable> {
    return this.deps.bytes.open(file, range);
  }

  /**
   * Admits a download of `file` by `requester` (a public one takes a free slot at once:
   * errorTooManyDownloads). A download is counted as started once, on the response whose
   * body starts at byte 0 (`begin`'s `start`: the range the response really sends, so a
   * Range header that is malformed, multiple or overruled by If-Range, which gets the whole
   * file, counts too), so resumed ranges are not new downloads (expiry and share limits
   * read the count). A preview is never a download start; its bytes are served like any others.
   */
  async file(file: FileRecord, requester: Requester, request: DownloadRequest & { purpose: 'download' | 'preview' }): Promise<FileDownload> {
    const cost = await this.deps.costs.admit(requester, request.signal);
    // An owner's own read is no download start (requester.ts).
    const counts = request.purpose === 'download' && requester.link !== 'owner';
    let metered: ((sent: number) => void) | undefined;
    let ended = false;
    return {
      open: async (range) => cost.pace(await this.deps.bytes.open(file, range)),
      begin: async (length, start) => {
        const startsDownload = counts && start === 0;
        await cost.charge(length);
        // A share's count after the charge: a charge that fails (no free slot left for a
        // fast share whose owner's traffic ran out) must not use up one of its downloads.
        // A refused count gives the whole charge back; no body follows, so end never comes.
        if (startsDownload && requester.link === 'share') {
          try {
            await this.deps.shareCounts.take(requester.share.id);
          } catch (error) {
            ended = true;
            cost.settle(0, request.log);
            throw error;
          }
        }
        if (startsDownload) this.deps.counts.recordStart(file.id);
        // Last: end, which ends the meter, comes only after begin went through.
        metered ??= this.deps.metrics.downloadStarted(cost.kind);
      },
      progress: (sent) => cost.progress(sent),
      end: (sent) => {
        if (ended) return;
        ended = true;
        metered?.(sent);
        cost.settle(sent, request.log);
        this.deps.counts.recordBytesServed(file.id, sent);
      },
    };
  }

  /**
   * Admits a ZIP of `folder` by `requester`, then plans it (errorBadRequest when it is too
   * big for one archive): the admission comes first, so planning is bounded by the free
   * slots too. Only active files go in; each file's download start and the bytes of it
   * that were sent are counted as a download of that file would be.
   */
  async folder(folder: Folder, requester: Requester, request: DownloadRequest): Promise<FolderDownload> {
    const { archives, metrics } = this.deps;
    const cost = await this.deps.costs.admit(requester, request.signal);
    const plan = await archives.plan(folder);
    let sent = 0;
    return {
      fileName: plan.fileName,
      size: plan.size,
      progress: (bytes) => {
        sent = bytes;
      },
      start: async () => {
        await cost.charge(plan.size);
        // One count per ZIP response (no ranges: every response starts at byte 0), after
        // the charge as for a file; a refusal gives the charge back.
        if (requester.link === 'share') {
          try {
            await this.deps.shareCounts.take(requester.share.id);
          } catch (error) {
            cost.settle(0, request.log);
            throw error;
          }
        }
        const metered = metrics.downloadStarted(cost.kind);
        const zip = archives.stream(plan, {
          signal: request.signal,
          events: { entryStarted: (file) => this.deps.counts.recordStart(file.id) },
        });
        const body = cost.pace(zip);
        // Once the response is over: the archive stops itself (the same signal); the paced
        // stream goes too, and what reached the client is counted, per file.
        const end = () => {
          body.destroy();
          metered(sent);
          cost.settle(sent, request.log);
          for (const { file, bytes } of archives.sentPerFile(plan, sent)) this.deps.counts.recordBytesServed(file.id, bytes);
        };
        if (request.signal.aborted) end();
        else request.signal.addEventListener('abort', end, { once: true });
        return body;
      },
    };
  }
}
