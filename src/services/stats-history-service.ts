import type { MetadataStore } from '../db/repositories/repositories.js';
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
 * The day-by-day history behind the console's charts. Uploads and live bytes are derived
 * from the files table (a file row records its upload and, when deleted, its deletion,
 * which is enough to say what was live at the end of any day); bytes served, which files
 * keep only as one running total each, come from the per-day counter (served_days).
 */
export class StatsHistoryService {
  constructor(private readonly deps: StatsHistoryServiceDeps) {}

  /** The last `days` UTC days, today included, oldest first. */
  async days(days: number): Promise<StatsDay[]> {
    if (!Number.isSafeInteger(days) || days < 1 || days > MAX_HISTORY_DAYS) throw new InputError(`the history covers 1 to ${MAX_HISTORY_DAYS} days`);
    const now = this.deps.clock();
    const today = Math.floor(now / DAY_MS) * DAY_MS;
    const first = today - (days - 1) * DAY_MS;
    const uploads = new Map((await this.deps.store.operatorQueries.dailyUploads(first, today + DAY_MS)).map((d) => [d.day, d]));
    // Days that served nothing have no row: 0.
    const served = new Map((await this.deps.store.servedDays.between(first / DAY_MS, today / DAY_MS)).map((d) => [d.day * DAY_MS, d.bytes]));
    const history: StatsDay[] = [];
    // One query pair per day, one after the other: a page an operator opens now and then
    // must not take every pooled connection at once.
    for (let day = first; day <= today; day += DAY_MS) {
      const live = await this.deps.store.operatorQueries.liveBytesAt(Math.min(day + DAY_MS - 1, now));
      const up = uploads.get(day);
      history.push({
        day,
        uploads: up?.files ?? 0,
        uploadedBytes: up?.bytes ?? 0,
        fileBytes: live.fileBytes,
        storedBytes: live.storedBytes,
        savedBytes: live.fileBytes - live.storedBytes,
        servedBytes: served.get(day) ?? 0,
      });
    }
    return history;
  }
}
