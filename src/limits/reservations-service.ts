import type { MetadataStore, Repositories, ReservationKind, ReservationRecord } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { Metrics } from '../observability/metrics.js';
import { HeldLeases } from './held-leases.js';

/**
 * A running transfer records the bytes it has moved at most this many bytes apart…
 * (issue 14: a crash hands back at most one checkpoint's worth, well under 16 MiB).
 */
export const CHECKPOINT_BYTES = 4 * 1024 * 1024;
/** …or this often, whichever comes first, so a slow transfer's record is never old. */
export const CHECKPOINT_MS = 1_000;
/** A reservation whose holder has not renewed it for this long may be settled by anyone. */
export const LEASE_MS = 60_000;
/** The holder renews all its leases this often: four chances before one runs out. */
export const RENEW_MS = 15_000;
/** Abandoned rows settled per query. */
const SETTLE_BATCH = 100;

export interface ReservationsDeps {
  /** Where the rows and the accounts they take from live. */
  store: MetadataStore;
  /** Leases are written and judged by it. */
  clock: Clock;
  /** The name of this server, the same across its restarts (`--server-name`). */
  server: string;
  /** This process: a random id per start. */
  instance: string;
  /** Where failures that must not fail a transfer are reported. */
  report: (error: unknown, message: string) => void;
  /** Traffic taken, given back and refused is counted here, once committed. */
  metrics: Pick<Metrics, 'trafficReserved' | 'trafficRefunded' | 'limitRefused'>;
  /** How long a lease lasts (LEASE_MS). */
  leaseMs?: number;
  /** How often the holder renews its leases (RENEW_MS). */
  renewMs?: number;
}

/** What a settling pass found. */
export interface SettleReport {
  /** Rows settled by this pass. */
  settled: number;
  /** Traffic given back to accounts: planned bytes minus each row's last checkpoint. */
  trafficRefunded: number;
}

/**
 * Durable reservations (issue 14). Bytes a transfer may move are taken from the account in
 * the transaction that writes their row; the holder records checkpoints of the bytes moved
 * and settles the row when the transfer ends: what moved is charged, the rest given back,
 * in one transaction. A holder that dies leaves its row; its next start (same server name)
 * or any server's gc once the lease has run out settles it at its last checkpoint.
 *
 * Which way the error leans: a checkpoint counts only bytes handed to the kernel, so it is
 * never more than the client can receive, and a settle at the last checkpoint gives back
 * whatever moved after it (at most CHECKPOINT_BYTES plus what one checkpoint write takes).
 * The user may be undercharged by that much after a crash, never overcharged.
 *
 * Exactly once: every settle goes through `take`, a DELETE … RETURNING; of two servers
 * settling one row, one gets it. A holder whose row another server settled (a lease run
 * out while it lived: a stalled process, a clock that jumped) charges what it moved after
 * that row's last checkpoint when it ends, so its transfer is still paid, once.
 */
export class ReservationsService {
  private readonly leaseMs: number;
  /** Rows this process holds: their leases are renewed, and no settle of its own touches them. */
  private readonly held: HeldLeases;
  /** Settles in progress; stop() waits for them before the store closes. */
  private readonly settling = new Set<Promise<unknown>>();

  constructor(private readonly deps: ReservationsDeps) {
    this.leaseMs = deps.leaseMs ?? LEASE_MS;
    this.held = new HeldLeases({
      renewMs: deps.renewMs ?? RENEW_MS,
      renew: (ids) => deps.store.reservations.renew(ids, deps.clock() + this.leaseMs),
      report: (error) => deps.report(error, 'renewing reservation leases failed'),
    });
  }

  /**
   * Takes `bytes` of an account's premium traffic for a direct download: the traffic and
   * its row in one transaction. Null, taking nothing, when not enough traffic is left.
   */
  async takeTraffic(accountId: number, bytes: number): Promise<TrafficTransfer | null> {
    const id = await this.deps.store.transaction(async (repos) => {
      if (!(await repos.accounts.reserveTraffic(accountId, bytes))) return null;
      return this.openRow(repos, accountId, 'traffic', bytes);
    });
    if (id === null) {
      this.deps.metrics.limitRefused('traffic');
      return null;
    }
    this.deps.metrics.trafficReserved(bytes);
    this.hold(id);
    return new TrafficTransfer(
      { store: this.deps.store, clock: this.deps.clock, report: this.deps.report, metrics: this.deps.metrics, settled: (settle) => this.settled(id, settle) },
      id,
      accountId,
      bytes,
    );
  }

  /**
   * Writes an open row held by this process in the caller's transaction, which has taken
   * its bytes; call `hold(id)` once that transaction has committed.
   */
  openRow(repos: Repositories, accountId: number, kind: ReservationKind, planned: number): Promise<number> {
    const now = this.deps.clock();
    return repos.reservations.open({
      accountId,
      kind,
      planned,
      server: this.deps.server,
      instance: this.deps.instance,
      leaseUntil: now + this.leaseMs,
      createdAt: now,
    });
  }

  /** A row this process opened was committed: its lease is renewed until it is settled. */
  hold(id: number): void {
    this.held.hold(id);
  }

  /**
   * The holder is done with a row: settled, or its settle failed, in which case the lease
   * runs out and the row is settled at its last checkpoint like a dead server's. `settle`,
   * when given, is awaited by stop().
   */
  settled(id: number, settle?: Promise<unknown>): void {
    if (settle) {
      const tracked = settle.catch(() => {}).finally(() => this.settling.delete(tracked));
      this.settling.add(tracked);
    }
    this.held.letGo(id);
  }

  /**
   * Settles the rows earlier processes of this server left (`ofThisServer`, on start),
   * and rows whose lease ran out, of any server (this one's too, if it let go of them),
   * at their last checkpoint. Each row once, whoever else tries; a row that fails is
   * reported and left for the next pass.
   */
  async settleAbandoned(options: { ofThisServer: boolean }): Promise<SettleReport> {
    const report: SettleReport = { settled: 0, trafficRefunded: 0 };
    let afterId = 0;
    for (;;) {
      const rows = await this.deps.store.reservations.abandoned({
        instance: this.deps.instance,
        now: this.deps.clock(),
        afterId,
        limit: SETTLE_BATCH,
        ...(options.ofThisServer ? { server: this.deps.server } : {}),
      });
      for (const row of rows) {
        if (this.held.has(row.id)) continue;
        try {
          const refunded = await this.deps.store.transaction(async (repos) => {
            const taken = await repos.reservations.take(row.id);
            return taken ? settleTaken(repos, taken, taken.settled) : null;
          });
          if (refunded === null) continue;
          this.deps.metrics.trafficRefunded(refunded);
          report.settled += 1;
          report.trafficRefunded += refunded;
        } catch (error) {
          this.deps.report(error, `settling reservation ${row.id} failed`);
        }
      }
      if (rows.length < SETTLE_BATCH) return report;
      afterId = rows.at(-1)!.id;
    }
  }

  /** Open reservations, oldest first (for the operator). */
  list(limit = 1000): Promise<ReservationRecord[]> {
    return this.deps.store.reservations.list(limit);
  }

  /**
   * Stops renewing leases once the settles in progress are done (a graceful stop: the
   * requests have ended, their settles may still be running). Rows still held are left
   * to the next start or to gc.
   */
  async stop(): Promise<void> {
    while (this.settling.size > 0) await Promise.all([...this.settling]);
    this.held.stop();
  }
}

/**
 * Settles a row just taken, in the caller's transaction, as if `moved` bytes moved:
 * traffic gives back what was planned and not moved. Upload volume needs nothing more:
 * a row's bytes stop counting when it is gone, and a stored upload's bytes are in
 * upload_log. Returns the traffic given back.
 */
async function settleTaken(repos: Repositories, row: ReservationRecord, moved: number): Promise<number> {
  if (row.kind !== 'traffic') return 0;
  const refund = row.planned - Math.min(Math.max(moved, 0), row.planned);
  await repos.accounts.refundTraffic(row.accountId, refund);
  return refund;
}

/** What a TrafficTransfer needs from its service. */
interface TransferDeps {
  store: MetadataStore;
  clock: Clock;
  report: (error: unknown, message: string) => void;
  metrics: Pick<Metrics, 'trafficRefunded'>;
  /** The transfer is done with its row; `settle` is its settling, for a graceful stop to await. */
  settled: (settle: Promise<unknown>) => void;
}

/**
 * One direct download's traffic: checkpoints while the body streams, one settle at the
 * end. Checkpoint writes never wait on the stream: one at a time, skipped while one runs.
 */
export class TrafficTransfer {
  /**
   * The highest checkpoint written or tried: a settle by another server charged no more
   * than this (a write that failed may or may not have landed; assuming it did leans the
   * user's way).
   */
  private recorded = 0;
  private recordedAt: number;
  private latest = 0;
  private writing: Promise<void> | null = null;
  /** Another server settled this row: what moves from here on is charged at the end. */
  private takenOver = false;
  private finished = false;

  constructor(
    private readonly deps: TransferDeps,
    /** The reservation row. */
    readonly id: number,
    readonly accountId: number,
    /** Bytes taken for the response: its whole body. */
    readonly planned: number,
  ) {
    this.recordedAt = deps.clock();
  }

  /** Bytes handed to the kernel so far (never more than the client can receive). */
  progress(moved: number): void {
    if (moved <= this.latest) return;
    this.latest = Math.min(moved, this.planned);
    if (this.writing || this.takenOver || this.finished) return;
    if (this.latest - this.recorded < CHECKPOINT_BYTES && this.deps.clock() - this.recordedAt < CHECKPOINT_MS) return;
    this.writing = this.checkpoint().finally(() => {
      this.writing = null;
    });
  }

  private async checkpoint(): Promise<void> {
    const value = this.latest;
    try {
      this.recordedAt = this.deps.clock();
      const before = this.recorded;
      const landed = this.deps.store.reservations.checkpoint(this.id, value);
      this.recorded = value;
      if (!(await landed)) {
        // The row was gone before this write: it was settled at the previous checkpoint.
        this.takenOver = true;
        this.recorded = before;
      }
    } catch (error) {
      // A missed checkpoint only leans the way of the user (a crash would give back more).
      this.deps.report(error, 'a traffic checkpoint failed');
    }
  }

  /** The download is over: `moved` bytes are charged, the rest of the reservation given back. */
  finish(moved: number): Promise<void> {
    if (this.finished) return Promise.resolve();
    this.finished = true;
    const settle = this.settle(Math.min(Math.max(moved, 0), this.planned));
    this.deps.settled(settle);
    return settle;
  }

  private async settle(sent: number): Promise<void> {
    // A checkpoint in flight lands first, so `recorded` is what the row holds.
    await this.writing;
    const refunded = await this.deps.store.transaction(async (repos) => {
      const taken = await repos.reservations.take(this.id);
      if (taken) return settleTaken(repos, taken, sent);
      // Settled elsewhere at `recorded`: the bytes moved since are still owed.
      await repos.accounts.chargeTraffic(this.accountId, sent - this.recorded);
      return 0;
    });
    this.deps.metrics.trafficRefunded(refunded);
  }
}
