import type { MetadataStore } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';

const DAY_MS = 86_400_000;

/** What downloads leave behind in the files' rows: starts (for `files info` and expiry) and bytes served. */
export class DownloadCounts {
  constructor(private readonly deps: { store: MetadataStore; clock: Clock }) {}

  /** Counts a download start. */
  async recordStart(id: string): Promise<void> {
    await this.deps.store.files.recordDownload(id, this.deps.clock());
  }

  /**
   * Adds the body bytes a download actually sent: to the file's total (for `filehaven
   * stats`) and to today's (the console's chart), in one transaction so the two agree.
   */
  async recordBytesServed(id: string, bytes: number): Promise<void> {
    if (bytes <= 0) return;
    const day = Math.floor(this.deps.clock() / DAY_MS);
    await this.deps.store.transaction(async (repos) => {
      await repos.files.addBytesServed(id, bytes);
      // Last: the day's row is the one every download wants, so it is held the shortest.
      await repos.servedDays.add(day, bytes);
    });
  }
}
