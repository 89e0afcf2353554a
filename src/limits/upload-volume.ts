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
        return new UploadAllowance(this, account, ticket);
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
   * A stored upload joins the account's volume: its upload_log row is written and, for a
   * limited account, its reservation ends in the same transaction.
   */
  async record(account: Account, bytes: number, ticket: UploadTicket | null): Promise<void> {
    const at = this.deps.clock();
    try {
      if (ticket) await ticket.commit(bytes, at);
      else await this.deps.log.record(account.id, bytes, at);
    } catch (error) {
      // The file is stored: answer it. Its reservation row is let go: gc settles it once
      // its lease runs out, and until then the bytes still count.
      this.deps.report(error, 'recording the upload volume failed');
    }
    if (at - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = at;
      this.deps.log.prune(at - UPLOAD_WINDOW_MS).catch((error: unknown) => this.deps.report(error, 'pruning upload_log failed'));
    }
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
  ) {}

  /**
   * The file stream, counted: each chunk is reserved before it passes on, and the stream
   * fails with errorUploadLimit at the first chunk that would pass the limit, so the
   * staging is aborted and nothing is kept.
   */
  meter(source: Readable): Readable {
    const ticket = this.ticket;
    if (!ticket) return source;
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
   * Waits for the upload to be stored: a stored file's bytes join the account's volume
   * (upload_log) before the answer goes out; a failure ends the allowance.
   */
  async whenStored<T extends { file: { size: number } }>(storing: Promise<T>): Promise<T> {
    let stored: T;
    try {
      stored = await storing;
    } catch (error) {
      this.end();
      throw error;
    }
    if (!this.done) {
      this.done = true;
      await this.volume.record(this.account, stored.file.size, this.ticket);
    }
    return stored;
  }

  /** Ends the allowance of an upload that will not be stored; a no-op after `whenStored`. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.ticket?.release().catch((error: unknown) => this.volume.report(error, 'releasing an upload reservation failed'));
  }
}
