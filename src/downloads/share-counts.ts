import type { MetadataStore } from '../db/repositories/repositories.js';
import { errors } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';

/**
 * The download count of shares (issue 25): one download of a share is counted by one
 * conditional UPDATE (SharesRepository.countDownload), exact under concurrency on every
 * engine and across servers, and decided by the clock of this request.
 */
export class ShareCounts {
  constructor(private readonly deps: { store: MetadataStore; clock: Clock }) {}

  /** Counts one download of the share, or refuses it: errorShareDownloadLimit, errorShareExpired, errorShareNotFound. */
  async take(shareId: string): Promise<void> {
    const refusal = await this.deps.store.shares.countDownload(shareId, this.deps.clock());
    if (refusal === null) return;
    if (refusal === 'limit') throw errors.shareDownloadLimit();
    if (refusal === 'expired') throw errors.shareExpired();
    throw errors.shareNotFound();
  }
}
