import { performance } from 'node:perf_hooks';
import type { BlobStore } from '../blob/blob-store.js';
import type { ThumbnailStore } from '../blob/thumbnail-store.js';
import type { MetadataStore } from '../db/repositories/repositories.js';
import { InputError } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import { FileStatus } from '../domain/types.js';
import { KNOWN_ADDRESS_MS } from '../limits/known-sign-in-addresses.js';
import type { ReservationsService } from '../limits/reservations-service.js';
import type { Metrics } from '../observability/metrics.js';
import { removeUnnamedBytes, removeUnreferencedBlob } from './blob-lifecycle.js';
import type { FilesService } from './files-service.js';
import { RunningElsewhereError, runAlone } from './run-alone.js';

export interface GcServiceDeps {
  store: MetadataStore;
  blobs: BlobStore;
  /** Expired files are deleted the way an operator deletes them. */
  files: FilesService;
  /** Transfers a dead server left (lease run out) are settled. */
  reservations: Pick<ReservationsService, 'settleAbandoned'>;
  /** Metadata time: blob rows, the upload log, expiry. */
  clock: Clock;
  /** Wall-clock time, which the file system stamps modification times with. */
  fileClock: Clock;
  /** Temp files untouched this long are abandoned; blobs younger than this are never collected. */
  tempGraceMs: number;
  /** Files not downloaded for this many days are deleted; 0 = never. */
  expireAfterDays: number;
  /** Who runs gc here (server and process), as the run lease names it. */
  holder: string;
  /** Real runs are counted by outcome. */
  metrics: Pick<Metrics, 'gcRan'>;
  /** Resumable uploads past their expiry are removed with their bytes. */
  resumable: { expire(): Promise<number>; holdsKey(key: string): Promise<boolean> };
  /** Thumbnails whose digest has no blob row any more are removed (none when not given). */
  thumbnails?: ThumbnailStore;
  /** Rows read at a time (expired files, unreferenced blobs); 500 unless a test makes it small. */
  batchSize?: number;
}

/** What one gc run removed (or, in a dry run, would remove). */
export interface GcReport {
  dryRun: boolean;
  /**
   * Live files deleted (A/B → D) because they reached their own expiry (files.expires_at,
   * issue 25) or nobody downloaded them for `expireAfterDays`.
   */
  filesExpired: number;
  /** Blob rows with no live file, removed with their bytes. */
  blobsRemoved: number;
  /** Blob files on disk with no blob row (left by a crash between rename and commit). */
  orphanFilesRemoved: number;
  /** Bytes of the blobs and orphan files removed (expired files' bytes are freed by their delete). */
  bytesFreed: number;
  /** Abandoned temp files of uploads that never finished. */
  tempFilesRemoved: number;
  /** Upload-log rows older than the rolling 24 h window (0 in a dry run). */
  uploadLogPruned: number;
  /** Reservations of transfers whose server died (lease run out), settled (0 in a dry run). */
  reservationsSettled: number;
  /** Premium traffic those gave back: planned bytes not covered by their last checkpoint. */
  trafficRefunded: number;
  /** Resumable uploads past --upload-expiry, removed with their bytes (0 in a dry run). */
  resumableUploadsExpired: number;
  /** Thumbnails of digests no blob row names any more (docs/web.md "Thumbnails"). */
  thumbnailsRemoved: number;
}

/** What `filehaven stats` reports. */
export interface StatsReport {
  accounts: number;
  /** Files and their bytes by state. */
  files: Record<'active' | 'blocked' | 'deleted', { count: number; bytes: number }>;
  /** Distinct blobs and their bytes: what the storage holds. */
  stored: { blobs: number; bytes: number };
  /** Bytes of live files minus bytes stored: what content addressing saves (never negative). */
  dedupSavedBytes: number;
  /** Download starts, all files. */
  downloads: number;
  /** Body bytes sent by free and direct downloads. */
  bytesServed: number;
  /** Expiry setting and how many live files would expire now; null when expiry is off. */
  expiry: { afterDays: number; wouldExpire: number } | null;
}

const DAY_MS = 86_400_000;
/** The upload volume window (API.md 8: rolling 24 h). */
const UPLOAD_LOG_KEEP_MS = DAY_MS;
/** Expired files and unreferenced blob rows read at a time. */
const BATCH = 500;

/**
 * Housekeeping: expiry, unreferenced and orphaned blobs, abandoned temp files, the upload
 * log. Every removal of bytes goes through the blob protocol (blob-lifecycle.ts), so gc
 * can run beside uploads, copies and deletes, in the server or from the CLI.
 */
export class GcService {
  private readonly batch: number;

  constructor(private readonly deps: GcServiceDeps) {
    this.batch = deps.batchSize ?? BATCH;
  }

  /**
   * One gc pass. A real one runs on one server (or CLI) at a time across the fleet and
   * rejects with RunningElsewhereError while another runs; a dry run changes nothing and
   * needs no lease.
   */
  async run(options: { dryRun?: boolean } = {}): Promise<GcReport> {
    if (options.dryRun) return this.pass(true);
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const report = await runAlone({ store: this.deps.store, clock: this.deps.clock, holder: this.deps.holder }, 'gc', () => this.pass(false));
      this.deps.metrics.gcRan('done', seconds());
      return report;
    } catch (error) {
      this.deps.metrics.gcRan(error instanceof RunningElsewhereError ? 'skipped' : 'failed', seconds());
      throw error;
    }
  }

  /** One full pass. A dry run only counts what a real run would remove right now. */
  private async pass(dryRun: boolean): Promise<GcReport> {
    const report: GcReport = {
      dryRun,
      filesExpired: 0,
      blobsRemoved: 0,
      orphanFilesRemoved: 0,
      bytesFreed: 0,
      tempFilesRemoved: 0,
      uploadLogPruned: 0,
      reservationsSettled: 0,
      trafficRefunded: 0,
      resumableUploadsExpired: 0,
      thumbnailsRemoved: 0,
    };
    // Expiry first: the blobs it leaves without a live file are released by the deletes.
    await this.expire(report);
    await this.removeUnreferencedBlobs(report);
    await this.removeOrphanFiles(report);
    await this.removeStaleTemp(report);
    // After the blobs: a thumbnail goes in the same run as the blob it was made from.
    await this.removeOrphanThumbnails(report);
    if (!report.dryRun) {
      report.resumableUploadsExpired = await this.deps.resumable.expire();
      const settled = await this.deps.reservations.settleAbandoned({ ofThisServer: false });
      report.reservationsSettled = settled.settled;
      report.trafficRefunded = settled.trafficRefunded;
      report.uploadLogPruned = await this.deps.store.uploadLog.prune(this.deps.clock() - UPLOAD_LOG_KEEP_MS);
      // Addresses not signed in from for 90 days lose their exemption from the per-login limit.
      await this.deps.store.signInAddresses.prune(this.deps.clock() - KNOWN_ADDRESS_MS);
      // WebDAV locks past their timeout hold nothing (every read leaves them out): their rows go.
      await this.deps.store.davLocks.purgeExpired(this.deps.clock());
      // Dead properties of files and folders gone by any door (the API, the web, expiry).
      await this.deps.store.davProperties.removeOrphans(this.deps.clock());
      // The planner's statistics follow the tables' growth (docs/operating.md "Large sites").
      await this.deps.store.housekeeping.refreshStatistics();
    }
    return report;
  }

  /**
   * Folds the rows of differences the database appended to the site's totals since the
   * last fold into one row per kind (migration 0019), so reading the totals stays a few
   * rows; how many rows there were. Every server runs it (server.ts): folds are safe at
   * once, and a server that stops leaves nothing for another to take over.
   */
  foldTotals(): Promise<number> {
    return this.deps.store.transaction((repos) => repos.housekeeping.foldTotals());
  }

  /** Counts for `filehaven stats`. */
  async stats(): Promise<StatsReport> {
    const raw = await this.deps.store.housekeeping.stats();
    const live = raw.files[FileStatus.Active].bytes + raw.files[FileStatus.Blocked].bytes;
    const cutoff = this.expiryCutoff();
    return {
      accounts: raw.accounts,
      files: { active: raw.files[FileStatus.Active], blocked: raw.files[FileStatus.Blocked], deleted: raw.files[FileStatus.Deleted] },
      stored: { blobs: raw.blobs.count, bytes: raw.blobs.bytes },
      // Unreferenced blobs awaiting gc count as stored, which could make this negative.
      dedupSavedBytes: Math.max(0, live - raw.blobs.bytes),
      downloads: raw.downloads,
      bytesServed: raw.bytesServed,
      expiry: cutoff === null ? null : { afterDays: this.deps.expireAfterDays, wouldExpire: await this.countExpired(cutoff) },
    };
  }

  /**
   * (d) Deletes live files past their own expiry (issue 25), then those not downloaded (or,
   * never downloaded, not uploaded) since the cutoff. A file past its expiry behaves as
   * deleted already (decided per request); this makes it so, and releases its blob under
   * the blob protocol when no other live file (a dedup twin, a copy) still points at it.
   */
  private async expire(report: GcReport): Promise<void> {
    const now = this.deps.clock();
    const housekeeping = this.deps.store.housekeeping;
    if (report.dryRun) report.filesExpired += await housekeeping.countPastExpiry(now);
    else await this.deleteEach(report, (after) => housekeeping.pastExpiry(now, this.batch, after));
    const cutoff = this.expiryCutoff();
    if (cutoff === null) return;
    if (report.dryRun) {
      // A file past both expiries is counted once: the cutoff's count leaves them out.
      report.filesExpired += await this.deps.store.housekeeping.countExpired(cutoff, now);
      return;
    }
    await this.deleteEach(report, (after) => housekeeping.expiredFiles(cutoff, this.batch, after));
  }

  /**
   * Deletes, the way an operator does, each file of `next(after)`'s batches until a short
   * batch, `after` being the last id of the batch before: keyset pages, so memory holds one
   * batch whatever the table's size, and no batch reads the rows of the ones before. Each
   * delete commits alone: a gc killed halfway has deleted what it got to, and the next run
   * (the schedule's, or `filehaven gc`) walks the index again from the oldest, finding
   * those no longer live and going on with the rest.
   */
  private async deleteEach(report: GcReport, next: (after: string | undefined) => Promise<string[]>): Promise<void> {
    let after: string | undefined;
    for (;;) {
      const ids = await next(after);
      for (const id of ids) {
        try {
          // The operator's delete: A/B → D and the blob released in one transaction.
          await this.deps.files.operatorDelete(id);
          report.filesExpired += 1;
        } catch (error) {
          // Deleted meanwhile by its owner or an operator: nothing left to do.
          if (!(error instanceof InputError)) throw error;
        }
      }
      if (ids.length < this.batch) return;
      after = ids.at(-1);
    }
  }

  /** (a) Blob rows with no live file, and their bytes, a batch of rows at a time by digest. */
  private async removeUnreferencedBlobs(report: GcReport): Promise<void> {
    const before = this.deps.clock() - this.deps.tempGraceMs;
    let after: string | undefined;
    for (;;) {
      const batch = await this.deps.store.housekeeping.unreferencedBlobs(before, this.batch, after);
      for (const { sha256, size } of batch) {
        // The reference check is repeated under the digest's lock: an upload or copy of the
        // same digest since the listing keeps the blob.
        const removed = report.dryRun || (await removeUnreferencedBlob(this.deps.store, this.deps.blobs, sha256));
        if (!removed) continue;
        report.blobsRemoved += 1;
        report.bytesFreed += size;
      }
      if (batch.length < this.batch) return;
      // Keyset on the digest: removals behind the position cannot shift what follows.
      after = batch.at(-1)!.sha256;
    }
  }

  /**
   * (b) Stored bytes no blob row names: left by a crash between an upload's publish and its
   * COMMIT, or between a row's removal and its bytes'. An upload publishes inside its
   * transaction, under the key's lock, so bytes without a committed row may be an upload
   * that is finishing: each is decided under the key's lock, and only past the grace (an
   * S3 upload is a complete object before its transaction starts).
   */
  private async removeOrphanFiles(report: GcReport): Promise<void> {
    const cutoff = this.deps.fileClock() - this.deps.tempGraceMs;
    for await (const blob of this.deps.blobs.listBlobs()) {
      if (blob.modifiedAt >= cutoff) continue;
      // The common case, bytes with their row, costs one read and no lock.
      if (await this.deps.store.blobs.namesKey(blob.key)) continue;
      // A finished resumable upload before its file row (a server died in between): its
      // client's next request makes the file; the upload's expiry, not the grace, ends it.
      if (await this.deps.resumable.holdsKey(blob.key)) continue;
      const removed = report.dryRun || (await removeUnnamedBytes(this.deps.store, this.deps.blobs, blob.key));
      if (!removed) continue;
      report.orphanFilesRemoved += 1;
      report.bytesFreed += blob.size;
    }
  }

  /** (c) Temp files untouched for the grace: an upload in progress keeps its file fresh. */
  private async removeStaleTemp(report: GcReport): Promise<void> {
    const cutoff = this.deps.fileClock() - this.deps.tempGraceMs;
    for await (const staged of this.deps.blobs.listStaged()) {
      if (staged.modifiedAt >= cutoff) continue;
      if (!report.dryRun) await this.deps.blobs.deleteStaged(staged.handle);
      report.tempFilesRemoved += 1;
    }
  }

  /**
   * (e) Thumbnails whose digest no blob row names: the blob went (its last file deleted),
   * or a thumbnail was written just as its blob went. Decided under the digest's lock, as
   * an upload of the same digest takes it, so a thumbnail of bytes stored again is kept;
   * younger than the grace, left for the next run. A thumbnail never keeps a blob: nothing
   * about blobs looks at thumbnails.
   */
  private async removeOrphanThumbnails(report: GcReport): Promise<void> {
    const thumbnails = this.deps.thumbnails;
    if (!thumbnails) return;
    const cutoff = this.deps.fileClock() - this.deps.tempGraceMs;
    for await (const thumbnail of thumbnails.list()) {
      if (thumbnail.modifiedAt >= cutoff) continue;
      if ((await this.deps.store.blobs.keyOf(thumbnail.sha256)) !== null) continue;
      const removed =
        report.dryRun ||
        (await this.deps.store.transaction(
          async (repos) => {
            await repos.locks.blob(thumbnail.sha256);
            if ((await repos.blobs.keyOf(thumbnail.sha256)) !== null) return false;
            await thumbnails.delete(thumbnail.sha256);
            return true;
          },
          // It deletes on what it reads: a blob row dropped by a commit not yet durable does not count as gone.
          { readsDurable: true },
        ));
      if (removed) report.thumbnailsRemoved += 1;
    }
  }

  private expiryCutoff(): number | null {
    return this.deps.expireAfterDays > 0 ? this.deps.clock() - this.deps.expireAfterDays * DAY_MS : null;
  }

  private async countExpired(cutoff: number): Promise<number> {
    return this.deps.store.housekeeping.countExpired(cutoff);
  }
}
