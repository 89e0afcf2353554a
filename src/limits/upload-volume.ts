import { pipeline, type Readable, Transform } from 'node:stream';
import type { MetadataStore, Repositories, UploadLogRepository } from '../db/repositories/repositories.js';
import { errors } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import { type DetachedLease, UPLOAD_WINDOW_MS, type UploadQuota, type UploadTicket } from './upload-quota.js';

/** upload_log rows older than the window are deleted at most this often. */
const PRUNE_EVERY_MS = 3_600_000;

export interface UploadVolumeDeps {
  quota: UploadQuota;
  /** Transactions for the writes of an unlimited account's resumable upload. */
  store: Pick<MetadataStore, 'transaction'>;
  log: UploadLogRepository;
  clock: Clock;
  /** Which limit applies: premium or free. */
  isPremium: (account: Account) => boolean;
  /** Bytes per rolling 24 h for free accounts; null = unlimited. */
  freeLimit: number | null;
  /** Bytes per rolling 24 h for premium accounts; null = unlimited. */
  premiumLimit: number | null;
  /** Where failures that must not fail an upload are reported. */
  report: (error: unknown, message: string) => void;
  /** Told of every upload refused (before its first byte or mid-stream). */
  refused: () => void;
}

/**
 * The upload volume limit (API.md 8: per account, rolling 24 h, free and premium apart;
 * errorUploadLimit with Retry-After). Stored uploads are the upload_log rows; uploads in
 * flight reserve their bytes as they stream (reservation rows: limits/upload-quota.ts), so
 * parallel uploads cannot slip past the limit together. Copies store no bytes and do not count.
 */
export class UploadVolume {
  private lastPrune = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: UploadVolumeDeps) {}

  /** The account's limit in bytes per window; null = unlimited. */
  limitOf(account: Account): number | null {
    return this.deps.isPremium(account) ? this.deps.premiumLimit : this.deps.freeLimit;
  }

  /** The account's limit and what it has used of it now (stored and in flight); used is 0 when unlimited. */
  async usage(account: Account): Promise<{ limit: number | null; used: number }> {
    const limit = this.limitOf(account);
    return { limit, used: limit === null ? 0 : await this.deps.quota.used(account.id) };
  }

  /**
   * Starts one upload: errorUploadLimit when the account has no volume left at all.
   * `expectedBytes` (the request's Content-Length, which the file cannot exceed) is
   * reserved up front when it fits, so parallel uploads are served whole, first come
   * first served, rather than each getting a part of what is left and all failing.
   * Call `end()` on the result however the upload ends.
   */
  async begin(account: Account, expectedBytes?: number): Promise<UploadAllowance> {
    const limit = this.limitOf(account);
    if (limit === null) return new UploadAllowance(this, account, null);
    const ticket = await this.deps.quota.open(account.id, limit);
    try {
      if (expectedBytes !== undefined && expectedBytes > 0 && (await ticket.reserve(expectedBytes)).granted) {
        return new UploadAllowance(this, account, ticket, expectedBytes);
      }
      const first = await ticket.reserve(1);
      if (!first.granted) {
        this.deps.refused();
        throw errors.uploadLimit(first.retryAfterMs / 1000);
      }
    } catch (error) {
      // The refusal (or the failure) is the answer; a failing release only leaves a row to gc.
      await ticket.release().catch((releaseError: unknown) => this.deps.report(releaseError, 'releasing an upload reservation failed'));
      throw error;
    }
    return new UploadAllowance(this, account, ticket);
  }

  /**
   * Reserves the whole of a resumable upload at its creation (`within` writes the upload's
   * row in the same transaction): errorUploadLimit when it does not fit. An unlimited
   * account reserves nothing (`within` gets null).
   */
  async reserveResumable(
    account: Account,
    bytes: number,
    lease: DetachedLease,
    within: (repos: Repositories, reservationId: number | null) => Promise<void>,
  ): Promise<void> {
    const limit = this.limitOf(account);
    if (limit === null) {
      await this.deps.store.transaction((repos) => within(repos, null));
      return;
    }
    const answer = await this.deps.quota.reserveDetached(account.id, limit, bytes, lease, within);
    if (!answer.granted) {
      this.deps.refused();
      throw errors.uploadLimit(answer.retryAfterMs / 1000);
    }
  }

  /**
   * Before more bytes of a resumable upload arrive: errorUploadLimit when the account is
   * now over its limit with what it stored and reserved (its limit went down meanwhile).
   */
  async recheck(account: Account): Promise<void> {
    const limit = this.limitOf(account);
    if (limit === null) return;
    const answer = await this.deps.quota.recheck(account.id, limit);
    if (!answer.granted) {
      this.deps.refused();
      throw errors.uploadLimit(answer.retryAfterMs / 1000);
    }
  }

  /**
   * In the stored file's transaction: its bytes join the account's volume (its upload_log
   * row) and, for a limited account, its reservation ends, committed with the file or not
   * at all. Resolves with what to call once that transaction has committed.
   */
  async recordWithin(repos: Repositories, account: Account, bytes: number, ticket: UploadTicket | null): Promise<() => void> {
    const at = this.deps.clock();
    if (ticket) return ticket.commitWithin(repos, bytes, at);
    await repos.uploadLog.record(account.id, bytes, at);
    return () => {};
  }

  /** Deletes upload_log rows past the window, at most once per PRUNE_EVERY_MS, in the background. */
  pruneIfDue(): void {
    const at = this.deps.clock();
    if (at - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = at;
    this.deps.log.prune(at - UPLOAD_WINDOW_MS).catch((error: unknown) => this.deps.report(error, 'pruning upload_log failed'));
  }

  /** Reports a failure that must not fail the request. */
  report(error: unknown, message: string): void {
    this.deps.report(error, message);
  }

  /** Counts an upload refused mid-stream. */
  refused(): void {
    this.deps.refused();
  }
}

/** One upload's allowance: meters the file as it streams, then records or releases it. */
export class UploadAllowance {
  private done = false;

  constructor(
    private readonly volume: UploadVolume,
    private readonly account: Account,
    /** Null when the account's volume is unlimited. */
    private readonly ticket: UploadTicket | null,
    /**
     * Bytes reserved up front, whole: the request's Content-Length, which the file cannot
     * exceed (0 when nothing was reserved so).
     */
    private readonly reservedWhole = 0,
  ) {}

  /**
   * The file stream, counted: each chunk is reserved before it passes on, and the stream
   * fails with errorUploadLimit at the first chunk that would pass the limit, so the
   * staging is aborted and nothing is kept.
   */
  meter(source: Readable): Readable {
    const ticket = this.ticket;
    // Within a length reserved whole no chunk can be refused: nothing to count chunk by
    // chunk (a Transform and a pipeline per upload, issue 28). recordWithin checks the
    // size all the same, before the file can commit.
    if (!ticket || this.reservedWhole > 0) return source;
    const volume = this.volume;
    let seen = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        ticket.reserve(seen).then(
          (answer) => {
            if (answer.granted) return callback(null, chunk);
            volume.refused();
            callback(errors.uploadLimit(answer.retryAfterMs / 1000));
          },
          (error: Error) => callback(error),
        );
      },
    });
    // Errors travel both ways: a failing source fails `counter` for the reader, and a
    // refused chunk (or a reader that gives up) destroys the source.
    pipeline(source, counter, () => {});
    return counter;
  }

  /**
   * Stores the upload with `store`, which must call `within` in the transaction that
   * writes the file's row: the file's bytes join the account's volume (upload_log) and
   * its reservation ends in that same transaction, so both are durable before the answer
   * goes out (one transaction per upload, not two; issue 28). A failure ends the allowance.
   */
  async whenStored<T>(store: (within: (repos: Repositories, bytes: number) => Promise<void>) => Promise<T>): Promise<T> {
    let committed: (() => void) | undefined;
    let stored: T;
    try {
      stored = await store(async (repos, bytes) => {
        // A stream longer than its Content-Length is not metered (meter): it cannot be.
        if (this.reservedWhole > 0 && bytes > this.reservedWhole) throw new Error(`an upload of ${bytes} bytes passed its declared ${this.reservedWhole}`);
        committed = await this.volume.recordWithin(repos, this.account, bytes, this.ticket);
      });
    } catch (error) {
      this.end();
      throw error;
    }
    if (committed) {
      this.done = true;
      committed();
    } else {
      // `store` never called `within`: nothing of the file counts, and the reservation ends.
      this.volume.report(new Error('an upload was stored without its volume'), 'recording the upload volume failed');
      this.end();
    }
    this.volume.pruneIfDue();
    return stored;
  }

  /** Ends the allowance of an upload that will not be stored; a no-op after `whenStored`. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.ticket?.release().catch((error: unknown) => this.volume.report(error, 'releasing an upload reservation failed'));
  }
}
