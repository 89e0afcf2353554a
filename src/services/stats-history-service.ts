import type { MetadataStore, SiteDay } from '../db/repositories/repositories.js';
import { InputError } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';

export interface StatsHistoryServiceDeps {
  store: MetadataStore;
  clock: Clock;
}

/** One UTC day of the site's history. */
export interface StatsDay {
  /** 00:00 UTC of the day, epoch ms. */
  day: number;
  /** Files created that day (uploads and copies) and their bytes. */
  uploads: number;
  uploadedBytes: number;
  /** At the end of the day (or now, for today): bytes of live files, and of their distinct contents. */
  fileBytes: number;
  storedBytes: number;
  /** What de-duplication saved then: fileBytes − storedBytes. */
  savedBytes: number;
  /** Body bytes downloads sent that day (counted since migration 0011; 0 before). */
  servedBytes: number;
}

const DAY_MS = 86_400_000;
export const MAX_HISTORY_DAYS = 366;
/**
 * A day's figures are kept once this long has passed since its end: a transaction that
 * took its time (created_at, deleted_at) before midnight and committed after it is in.
 */
export const SETTLE_MS = 3_600_000;

/** Live bytes at the end of a day. */
type Level = Pick<SiteDay, 'fileBytes' | 'storedBytes'>;

/**
 * The day-by-day history behind the console's charts. Uploads and live bytes are derived
 * from the files table (a file row records its upload and, when deleted, its deletion,
 * which is enough to say what was live at the end of any day); bytes served, which files
 * keep only as one running total each, come from the per-day counter (served_days).
 *
 * A finished day cannot change any more (file rows are never removed, and their upload
 * and deletion times never move), so its figures are computed once and kept (site_days,
 * migration 0017); only days not kept yet, today among them, are computed, each from the
 * day before and its own changes (liveBytesChange), which reads that day's files rather
 * than the whole table. Only the first day of a range with nothing kept before it is
 * summed over the whole table, once.
 */
export class StatsHistoryService {
  constructor(private readonly deps: StatsHistoryServiceDeps) {}

  /** The last `days` UTC days, today included, oldest first. */
  async days(days: number): Promise<StatsDay[]> {
    if (!Number.isSafeInteger(days) || days < 1 || days > MAX_HISTORY_DAYS) throw new InputError(`the history covers 1 to ${MAX_HISTORY_DAYS} days`);
    const { store } = this.deps;
    const now = this.deps.clock();
    const today = Math.floor(now / DAY_MS);
    const first = today - (days - 1);
    // Days ending this long ago are settled: computed, they are kept.
    const settled = (day: number) => (day + 1) * DAY_MS + SETTLE_MS <= now;
    // The day before the range too: the first day's base when it is kept.
    const kept = new Map((await store.siteDays.between(first - 1, today)).map((d) => [d.day, d]));
    const served = new Map((await store.servedDays.between(first, today)).map((d) => [d.day, d.bytes]));
    // Uploads of the days not kept only (today's, usually): a range of files_created.
    let unkept = first;
    while (unkept <= today && kept.has(unkept)) unkept++;
    const uploads = new Map((await store.operatorQueries.dailyUploads(unkept * DAY_MS, (today + 1) * DAY_MS)).map((d) => [d.day / DAY_MS, d]));
    const history: StatsDay[] = [];
    let before: Level | undefined = kept.get(first - 1);
    // One day after the other: a page an operator opens now and then must not take every
    // pooled connection at once.
    for (let day = first; day <= today; day++) {
      let figures = kept.get(day);
      if (!figures) {
        const end = Math.min((day + 1) * DAY_MS - 1, now);
        const level = before ? await this.levelAfter(before, day * DAY_MS - 1, end) : await store.operatorQueries.liveBytesAt(end);
        const up = uploads.get(day);
        figures = { day, uploads: up?.files ?? 0, uploadedBytes: up?.bytes ?? 0, ...level };
        if (settled(day)) await store.siteDays.keep(figures);
      }
      before = figures;
      history.push({
        day: day * DAY_MS,
        uploads: figures.uploads,
        uploadedBytes: figures.uploadedBytes,
        fileBytes: figures.fileBytes,
        storedBytes: figures.storedBytes,
        savedBytes: figures.fileBytes - figures.storedBytes,
        // Days that served nothing have no row: 0.
        servedBytes: served.get(day) ?? 0,
      });
    }
    return history;
  }

  /** The level at `to`, from the level at `from` and what changed in between. */
  private async levelAfter(before: Level, from: number, to: number): Promise<Level> {
    const change = await this.deps.store.operatorQueries.liveBytesChange(from, to);
    return { fileBytes: before.fileBytes + change.fileBytes, storedBytes: before.storedBytes + change.storedBytes };
  }
}
