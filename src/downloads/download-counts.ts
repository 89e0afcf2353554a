import type { MetadataStore } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';

const DAY_MS = 86_400_000;

/**
 * Counts are written at least this often: the same bound as a transfer's checkpoint
 * (docs/operating.md, Transfers in flight), so a crash loses at most this long's counts.
 */
export const FLUSH_MS = 1000;
/** ... and as soon as this many downloads (starts or ends) wait, whichever comes first. */
export const FLUSH_EVENTS = 256;

/** What one file's downloads added since the last flush. */
interface FilePending {
  starts: number;
  /** The latest start (epoch ms), null when none. */
  lastStartAt: number | null;
  bytesServed: number;
}

export interface DownloadCountsDeps {
  store: MetadataStore;
  clock: Clock;
  /** Where a failed flush is reported (its counts are kept and written by the next one). */
  report: (error: unknown, message: string) => void;
  /** FLUSH_MS unless given (tests). */
  flushMs?: number;
  /** FLUSH_EVENTS unless given (tests). */
  flushEvents?: number;
}

/**
 * What downloads leave behind in the files' rows: starts (for `files info` and expiry),
 * bytes served per file (`filehaven stats`) and per day (`served_days`, the console's
 * chart). Written once per download, the day's row was one every download of the server
 * wanted in its transaction: on PostgreSQL under 64 concurrent downloads it was a queue
 * (issue 28). So they are counted in memory, per file and per day, and written in one
 * transaction every FLUSH_MS or FLUSH_EVENTS downloads, and at a graceful stop. Every
 * write adds (`x = x + n`), so servers sharing a database each write their own and the
 * sums stay exact. Readers (the console, `stats`, `files info`, gc's inactivity expiry)
 * see them at most one flush late; nothing on the wire shows them. A crash loses what was
 * not written yet: at most FLUSH_MS (and FLUSH_EVENTS downloads) of counts, the bound a
 * transfer's checkpoint has. Share counts are not these: they are exact, taken before the
 * first byte (share-counts.ts).
 */
export class DownloadCounts {
  private files = new Map<string, FilePending>();
  private days = new Map<number, number>();
  private events = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The flush being written: one at a time, so two never race on the same rows. */
  private flushing: Promise<void> | null = null;
  private readonly flushMs: number;
  private readonly flushEvents: number;

  constructor(private readonly deps: DownloadCountsDeps) {
    this.flushMs = deps.flushMs ?? FLUSH_MS;
    this.flushEvents = deps.flushEvents ?? FLUSH_EVENTS;
  }

  /** Counts a download start. */
  recordStart(id: string): void {
    const at = this.deps.clock();
    const file = this.pendingOf(id);
    file.starts++;
    file.lastStartAt = Math.max(file.lastStartAt ?? at, at);
    this.counted();
  }

  /** Adds the body bytes a download actually sent: to the file's total and to today's. */
  recordBytesServed(id: string, bytes: number): void {
    if (bytes <= 0) return;
    const day = Math.floor(this.deps.clock() / DAY_MS);
    this.pendingOf(id).bytesServed += bytes;
    this.days.set(day, (this.days.get(day) ?? 0) + bytes);
    this.counted();
  }

  /**
   * Writes every count taken so far (waiting for a flush under way first); resolves once
   * they are in the database, rejects when the write failed (they are kept for the next).
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => {});
    if (this.files.size === 0 && this.days.size === 0) return;
    const files = this.files;
    const days = this.days;
    this.files = new Map();
    this.days = new Map();
    this.events = 0;
    this.flushing = this.write(files, days).finally(() => {
      this.flushing = null;
    });
    try {
      await this.flushing;
    } catch (error) {
      this.putBack(files, days);
      throw error;
    }
  }

  /** A graceful stop: no more timer, and what is counted is written (a failure is reported). */
  async stop(): Promise<void> {
    this.clearTimer();
    await this.flush().catch((error) => this.deps.report(error, 'writing download counts at stop failed: they are lost'));
  }

  private pendingOf(id: string): FilePending {
    let file = this.files.get(id);
    if (!file) {
      file = { starts: 0, lastStartAt: null, bytesServed: 0 };
      this.files.set(id, file);
    }
    return file;
  }

  private counted(): void {
    if (++this.events >= this.flushEvents) {
      this.clearTimer();
      this.flushInBackground();
      return;
    }
    this.scheduleFlush();
  }

  /** A flush in flushMs, unless one is planned already. */
  private scheduleFlush(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flushInBackground();
    }, this.flushMs);
    // A pending flush keeps no process alive: stop() writes it.
    this.timer.unref();
  }

  private flushInBackground(): void {
    this.flush().catch((error) => {
      this.deps.report(error, 'writing download counts failed: kept for the next try');
      // Tried again after an interval, not at once (the database may be away a while).
      if (this.files.size > 0 || this.days.size > 0) this.scheduleFlush();
    });
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * One transaction: the files' rows in id order, then the days' in day order, so two
   * servers flushing at once take the row locks in the same order (no deadlock on
   * PostgreSQL), and the day's row, which every server wants, is held the shortest.
   */
  private async write(files: Map<string, FilePending>, days: Map<number, number>): Promise<void> {
    const fileIds = [...files.keys()].sort();
    const dayNumbers = [...days.keys()].sort((a, b) => a - b);
    await this.deps.store.transaction(async (repos) => {
      for (const id of fileIds) await repos.files.addDownloads(id, files.get(id)!);
      for (const day of dayNumbers) await repos.servedDays.add(day, days.get(day)!);
    });
  }

  /** A failed write's counts go back in with those taken meanwhile. */
  private putBack(files: Map<string, FilePending>, days: Map<number, number>): void {
    for (const [id, pending] of files) {
      const file = this.pendingOf(id);
      file.starts += pending.starts;
      file.bytesServed += pending.bytesServed;
      if (pending.lastStartAt !== null) file.lastStartAt = Math.max(file.lastStartAt ?? pending.lastStartAt, pending.lastStartAt);
    }
    for (const [day, bytes] of days) this.days.set(day, (this.days.get(day) ?? 0) + bytes);
  }
}
