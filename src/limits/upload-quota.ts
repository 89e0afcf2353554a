import type { MetadataStore, Repositories } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { ReservationsService } from './reservations-service.js';

/** The rolling window of the upload volume limit (API.md 8: "rolling 24 h"). */
export const UPLOAD_WINDOW_MS = 24 * 3_600_000;

/**
 * An upload whose size is not known up front (no Content-Length, or one that did not fit
 * whole) grows its reservation this much at a time: one transaction per step, not per chunk.
 */
export const UPLOAD_GROWTH_BYTES = 4 * 1024 * 1024;

/** Stored uploads read at a time when working out Retry-After. */
const RETRY_SCAN_ROWS = 1000;

/** The answer to a reservation: granted, or refused with when enough volume frees up. */
export type Reservation = { granted: true } | { granted: false; retryAfterMs: number };

/**
 * The upload volume of accounts over the rolling window: uploads already stored plus
 * the bytes uploads in flight have reserved so far. Every check and every reservation of
 * one account is atomic with respect to the others, so parallel uploads of one account
 * can never pass its limit together, on one server or several.
 */
export interface UploadQuota {
  /** Starts counting one upload of an account against `limit` bytes per window. */
  open(accountId: number, limit: number): Promise<UploadTicket>;
  /**
   * Reserves `bytes` for an upload that outlives the request that starts it (a resumable
   * upload): a row no process holds, leased until `lease.until`, written with whatever
   * `within` writes in the same transaction. Refused, writing nothing, when the account's
   * stored volume plus every reservation would pass the limit.
   */
  reserveDetached(
    accountId: number,
    limit: number,
    bytes: number,
    lease: DetachedLease,
    within: (repos: Repositories, reservationId: number) => Promise<void>,
  ): Promise<Reservation>;
  /**
   * Whether the account is still within `limit` with what it has stored and reserved (a
   * limit lowered, a premium ended while a resumable upload waited): refused, with when
   * enough frees up, when it is over.
   */
  recheck(accountId: number, limit: number): Promise<Reservation>;
  /**
   * Bytes the account has used in the window now: stored uploads plus every reservation in
   * flight. A reading for pages (what is left), never a check: it takes no lock.
   */
  used(accountId: number): Promise<number>;
}

/** Who a detached reservation row names, and until when it counts. */
export interface DetachedLease {
  /** Never a server's name (those match --server-name's pattern), so no start settles it. */
  server: string;
  /** The upload's own id. */
  instance: string;
  until: number;
}

/**
 * Ends a detached reservation in the caller's transaction: a stored upload's bytes become
 * its upload_log row (under the account's lock, like a check); a given-up one's just go.
 * Whether the row was still there (gc may have settled an expired one).
 */
export async function settleDetached(
  repos: Repositories,
  reservationId: number,
  stored: { accountId: number; bytes: number; at: number } | null,
): Promise<boolean> {
  if (stored) await repos.locks.uploadVolume(stored.accountId);
  const row = await repos.reservations.take(reservationId);
  if (stored) await repos.uploadLog.record(stored.accountId, stored.bytes, stored.at);
  return row !== null;
}

/** One upload's share of its account's volume. */
export interface UploadTicket {
  /**
   * Grows this upload's reservation to at least `total` bytes (a no-op when it already
   * holds that much). Refused, reserving nothing more, when the account's stored volume
   * plus every reservation would pass the limit.
   */
  reserve(total: number): Promise<Reservation>;
  /**
   * The upload was stored: its upload_log row (`bytes` at `at`) is written and the
   * reservation ends, in one transaction.
   */
  commit(bytes: number, at: number): Promise<void>;
  /**
   * `commit` in the caller's transaction (the stored file's, issue 28: one transaction and
   * one fsync fewer per upload): writes the upload_log row and ends the reservation there.
   * Resolves with what to call once that transaction has committed (the ticket is then
   * done); a transaction that rolls back leaves the ticket open, to release.
   */
  commitWithin(repos: Repositories, bytes: number, at: number): Promise<() => void>;
  /** Ends the reservation of an upload that was not stored; a no-op after commit or a second call. */
  release(): Promise<void>;
}

export interface ReservedUploadQuotaDeps {
  /** upload_log and the reservation rows. */
  store: MetadataStore;
  /** Opens, holds and lets go of the rows. */
  reservations: ReservationsService;
  /** The window's time. */
  clock: Clock;
  /** The window (UPLOAD_WINDOW_MS). */
  windowMs?: number;
}

/**
 * UploadQuota on the metadata store: an upload in flight is a reservation row (kind
 * `upload`) whose planned bytes count against the account until the upload is stored or
 * given up, or until a start or gc settles the row a dead server left. A check reads the
 * stored volume (one SUM over upload_log) and the rows in flight under the account's
 * upload-volume lock, so it holds across processes and servers.
 */
export class ReservedUploadQuota implements UploadQuota {
  private readonly windowMs: number;
  private readonly firstReservations: FirstReservations;

  constructor(private readonly deps: ReservedUploadQuotaDeps) {
    this.windowMs = deps.windowMs ?? UPLOAD_WINDOW_MS;
    this.firstReservations = new FirstReservations((accountId, asks) => this.grantFirst(accountId, asks));
  }

  /**
   * Opens a row for each ask that fits, in order, in one transaction under the account's
   * lock: what one grants counts against the next, as if each had its own transaction.
   */
  private grantFirst(accountId: number, asks: readonly FirstAsk[]): Promise<FirstAnswer[]> {
    return this.deps.store.transaction(async (repos) => {
      await repos.locks.uploadVolume(accountId);
      const now = this.deps.clock();
      let used = await repos.reservations.volumeInUse(accountId, this.windowStart(now));
      const answers: FirstAnswer[] = [];
      for (const ask of asks) {
        const room = ask.limit - used;
        if (ask.bytes > room) {
          answers.push({ granted: false, retryAfterMs: await this.retryAfterMs(repos.uploadLog, accountId, ask.bytes - room, now) });
          continue;
        }
        answers.push({ granted: true, id: await this.deps.reservations.openRow(repos, accountId, 'upload', ask.bytes) });
        used += ask.bytes;
      }
      return answers;
    });
  }

  async open(accountId: number, limit: number): Promise<UploadTicket> {
    const { store, reservations, clock } = this.deps;
    let rowId: number | null = null;
    let held = 0;
    let open = true;
    // A ticket's steps run one after another: an end that overtook a growing reservation
    // would leave the row that reservation opens behind it.
    let queue: Promise<unknown> = Promise.resolve();
    const serial = <T>(step: () => Promise<T>): Promise<T> => {
      const run = queue.then(step, step);
      queue = run.catch(() => {});
      return run;
    };
    const end = (stored: { bytes: number; at: number } | null) =>
      serial(async () => {
        if (!open) return;
        open = false;
        const id = rowId;
        if (id === null) {
          if (stored) await store.uploadLog.record(accountId, stored.bytes, stored.at);
          return;
        }
        const settle = store.transaction(async (repos) => {
          // Without the account's lock (issue 28: each upload waited for it twice): a check
          // reads upload_log and the rows in one statement (volumeInUse), so it sees this
          // move before or after, never half done, and the move lowers what is in use (the
          // row planned at least every byte stored) or, the row settled by another server
          // meanwhile, adds what a check under the lock would also have seen only after.
          if (stored) await repos.uploadLog.record(accountId, stored.bytes, stored.at);
          await repos.reservations.take(id);
        });
        // A failed settle lets go of the row too: its lease runs out and gc settles it.
        reservations.settled(id, settle);
        await settle;
      });
    return {
      reserve: async (total) => {
        if (total <= held) return { granted: true };
        return serial(async () => {
          if (!open) return { granted: false, retryAfterMs: this.windowMs };
          if (rowId === null) {
            // The first reservation, the whole of a declared size: with the other uploads'
            // of the account that wait meanwhile, in one transaction.
            const first = await this.firstReservations.ask(accountId, limit, total);
            if (!first.granted) return first;
            reservations.hold(first.id);
            rowId = first.id;
            held = total;
            return { granted: true };
          }
          const answer = await store.transaction(async (repos): Promise<Reservation & { planned?: number; id?: number }> => {
            await repos.locks.uploadVolume(accountId);
            const now = clock();
            const since = this.windowStart(now);
            // Whether this upload's row is still there: another server may have settled it
            // (its lease ran out while the upload lived), and then its bytes count no more.
            const alive = rowId !== null && (await repos.reservations.setPlanned(rowId, held));
            const used = await repos.reservations.volumeInUse(accountId, since);
            // `used` holds this upload's own `mine` bytes.
            const mine = alive ? held : 0;
            const room = limit - used;
            const needed = total - mine;
            if (needed > room) {
              return { granted: false, retryAfterMs: await this.retryAfterMs(repos.uploadLog, accountId, needed - room, now) };
            }
            // The first reservation is what the caller asked for (a declared size); later ones
            // come chunk by chunk and grow a step ahead.
            const planned = mine + (rowId === null ? needed : Math.min(room, Math.max(needed, UPLOAD_GROWTH_BYTES)));
            if (!alive) return { granted: true, planned, id: await reservations.openRow(repos, accountId, 'upload', planned) };
            await repos.reservations.setPlanned(rowId!, planned);
            return { granted: true, planned };
          });
          if (!answer.granted) return answer;
          if (answer.id !== undefined) {
            // A first row, or one replacing the row another server settled.
            if (rowId !== null) reservations.settled(rowId);
            reservations.hold(answer.id);
            rowId = answer.id;
          }
          held = answer.planned!;
          return { granted: true };
        });
      },
      commit: (bytes, at) => end({ bytes, at }),
      commitWithin: async (repos, bytes, at) => {
        // Called once the upload's bytes are staged: every reservation step has ended by
        // then (each chunk waited for its own), so none can change the row meanwhile.
        if (!open) throw new Error('the upload ticket has ended');
        const id = rowId;
        // As `end` does, without the account's lock (see there).
        await repos.uploadLog.record(accountId, bytes, at);
        if (id !== null) await repos.reservations.take(id);
        return () => {
          if (!open) return;
          open = false;
          if (id !== null) reservations.settled(id);
        };
      },
      release: () => end(null),
    };
  }

  async reserveDetached(
    accountId: number,
    limit: number,
    bytes: number,
    lease: DetachedLease,
    within: (repos: Repositories, reservationId: number) => Promise<void>,
  ): Promise<Reservation> {
    const { store, clock } = this.deps;
    return store.transaction(async (repos): Promise<Reservation> => {
      await repos.locks.uploadVolume(accountId);
      const now = clock();
      const used = await repos.reservations.volumeInUse(accountId, this.windowStart(now));
      if (bytes > limit - used) return { granted: false, retryAfterMs: await this.retryAfterMs(repos.uploadLog, accountId, bytes - (limit - used), now) };
      const id = await repos.reservations.open({
        accountId,
        kind: 'upload',
        planned: bytes,
        server: lease.server,
        instance: lease.instance,
        leaseUntil: lease.until,
        createdAt: now,
      });
      await within(repos, id);
      return { granted: true };
    });
  }

  async recheck(accountId: number, limit: number): Promise<Reservation> {
    const { store, clock } = this.deps;
    return store.transaction(async (repos): Promise<Reservation> => {
      await repos.locks.uploadVolume(accountId);
      const now = clock();
      const used = await repos.reservations.volumeInUse(accountId, this.windowStart(now));
      if (used <= limit) return { granted: true };
      return { granted: false, retryAfterMs: await this.retryAfterMs(repos.uploadLog, accountId, used - limit, now) };
    });
  }

  async used(accountId: number): Promise<number> {
    const { store, clock } = this.deps;
    return store.reservations.volumeInUse(accountId, this.windowStart(clock()));
  }

  /**
   * The oldest time a stored upload still counts at `now`: one stored at `at` counts up to
   * `at + window` exclusive, so a client that waits exactly its Retry-After is served.
   */
  private windowStart(now: number): number {
    return now - this.windowMs + 1;
  }

  /**
   * How long until `needed` bytes of stored volume leave the window, oldest first. Bytes
   * in flight leave it a full window after they are stored at the earliest, so when the
   * stored uploads cannot free enough the answer is a whole window.
   */
  private async retryAfterMs(log: MetadataStore['uploadLog'], accountId: number, needed: number, now: number): Promise<number> {
    let since = this.windowStart(now);
    let freed = 0;
    for (;;) {
      const rows = await log.oldest(accountId, since, RETRY_SCAN_ROWS);
      for (const row of rows) {
        freed += row.bytes;
        if (freed >= needed) return Math.max(1, row.at + this.windowMs - now);
      }
      if (rows.length < RETRY_SCAN_ROWS) return this.windowMs;
      // Rows sharing the last time are read again from that time on; skip what was counted.
      const last = rows.at(-1)!.at;
      const counted = rows.filter((row) => row.at === last);
      if (counted.length === rows.length) return this.windowMs;
      freed -= counted.reduce((sum, row) => sum + row.bytes, 0);
      since = last;
    }
  }
}

/** An upload's first reservation: `bytes` of an account limited to `limit`. */
interface FirstAsk {
  limit: number;
  bytes: number;
}

/** Granted with the row opened for it, or refused. */
type FirstAnswer = { granted: true; id: number } | { granted: false; retryAfterMs: number };

/**
 * The first reservations of one account's uploads, taken together (issue 28): each took
 * the account's lock in a transaction of its own, so 32 uploads at once of one account
 * (PostgreSQL: one lock, one COMMIT after the other) waited on each other. Asks that come
 * while the account's transaction runs go, in order, into its next one.
 */
class FirstReservations {
  private readonly waiting = new Map<number, { ask: FirstAsk; answer: (result: Promise<FirstAnswer>) => void }[]>();
  private readonly granting = new Set<number>();

  constructor(private readonly grant: (accountId: number, asks: readonly FirstAsk[]) => Promise<FirstAnswer[]>) {}

  ask(accountId: number, limit: number, bytes: number): Promise<FirstAnswer> {
    return new Promise<FirstAnswer>((resolve) => {
      const queue = this.waiting.get(accountId) ?? [];
      queue.push({ ask: { limit, bytes }, answer: resolve });
      this.waiting.set(accountId, queue);
      if (!this.granting.has(accountId)) void this.grantWaiting(accountId);
    });
  }

  private async grantWaiting(accountId: number): Promise<void> {
    this.granting.add(accountId);
    try {
      for (let queue = this.waiting.get(accountId); queue !== undefined; queue = this.waiting.get(accountId)) {
        this.waiting.delete(accountId);
        const answers = this.grant(
          accountId,
          queue.map((entry) => entry.ask),
        );
        // A failed transaction granted nothing: every ask of it fails with the cause.
        queue.forEach((entry, i) => {
          entry.answer(answers.then((all) => all[i]!));
        });
        await answers.catch(() => {});
      }
    } finally {
      this.granting.delete(accountId);
    }
  }
}
