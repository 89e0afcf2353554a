import type { UploadLogRepository } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';

/** The rolling window of the upload volume limit (API.md 8: "rolling 24 h"). */
export const UPLOAD_WINDOW_MS = 24 * 3_600_000;

/** The answer to a reservation: granted, or refused with when enough volume frees up. */
export type Reservation = { granted: true } | { granted: false; retryAfterMs: number };

/**
 * The upload volume of accounts over the rolling window: uploads already stored plus
 * the bytes uploads in flight have reserved so far. Every check and every reservation of
 * one account is atomic with respect to the others, so parallel uploads of one account
 * can never pass its limit together. The in-memory implementation serves one process;
 * a shared store (Redis, PostgreSQL) implements the same interface for several.
 */
export interface UploadQuota {
  /** Starts counting one upload of an account against `limit` bytes per window. */
  open(accountId: number, limit: number): Promise<UploadTicket>;
}

/** One upload's share of its account's volume. */
export interface UploadTicket {
  /**
   * Grows this upload's reservation to `total` bytes (a no-op when it already holds that
   * much). Refused, reserving nothing more, when the account's stored volume plus every
   * reservation would pass the limit.
   */
  reserve(total: number): Promise<Reservation>;
  /**
   * The upload was stored and its upload_log row written at `at`: `bytes` join the
   * stored volume and the reservation ends.
   */
  commit(bytes: number, at: number): Promise<void>;
  /** Ends the reservation of an upload that was not stored; a no-op after commit or a second call. */
  release(): Promise<void>;
}

interface StoredUpload {
  at: number;
  bytes: number;
}

/**
 * Stored uploads an account's entry holds one by one, oldest first: what Retry-After and
 * the moving window need. Whatever the window holds beyond them is one number.
 */
export const HEAD_UPLOADS = 1000;

/** What the in-memory quota knows of one account while it has uploads in flight. */
interface AccountVolume {
  /** The oldest stored uploads inside the window, oldest first (all of them when `complete`). */
  head: StoredUpload[];
  /** Sum of `head`. */
  headBytes: number;
  /**
   * Bytes of the stored uploads inside the window that are not in `head`. Never too low;
   * it may count a row twice when an upload commits while the window is being reloaded.
   */
  restBytes: number;
  /** Whether `head` holds every stored upload inside the window (then `restBytes` is 0 but for such double counts). */
  complete: boolean;
  /** Sum of the reservations of open tickets. */
  reserved: number;
  /** Open tickets; the entry is dropped at zero and reloaded from upload_log next time. */
  holders: number;
  loaded: Promise<void>;
  /** A reload of the window in progress, shared by every ticket that needs it. */
  reloading: Promise<void> | null;
  /** Commits seen while a (re)load reads upload_log; added when it ends. */
  pending: StoredUpload[] | null;
}

const storedBytes = (volume: AccountVolume) => volume.headBytes + volume.restBytes;

export interface InMemoryUploadQuotaDeps {
  /** Source of the stored volume (the rows survive restarts; the in-flight part need not). */
  log: UploadLogRepository;
  clock: Clock;
  windowMs?: number;
}

/**
 * UploadQuota for a single process. An account's entry exists only while it has uploads
 * in flight: it is loaded from upload_log by the first one and dropped by the last one,
 * so stored uploads are read once per burst, not once per chunk, and nothing grows with
 * the number of accounts. A load is one SUM over the window plus the oldest HEAD_UPLOADS
 * rows, however many uploads the window holds; a burst that outlives those rows reloads
 * once they have all left the window. Each ticket writes its upload_log row before it
 * commits, so a reload never misses a stored upload.
 */
export class InMemoryUploadQuota implements UploadQuota {
  private readonly accounts = new Map<number, AccountVolume>();
  private readonly windowMs: number;

  constructor(private readonly deps: InMemoryUploadQuotaDeps) {
    this.windowMs = deps.windowMs ?? UPLOAD_WINDOW_MS;
  }

  async open(accountId: number, limit: number): Promise<UploadTicket> {
    let volume = this.accounts.get(accountId);
    if (!volume) {
      const fresh: AccountVolume = {
        head: [],
        headBytes: 0,
        restBytes: 0,
        complete: true,
        reserved: 0,
        holders: 0,
        loaded: Promise.resolve(),
        reloading: null,
        pending: null,
      };
      fresh.loaded = this.load(accountId, fresh);
      this.accounts.set(accountId, fresh);
      volume = fresh;
    }
    volume.holders += 1;
    try {
      await volume.loaded;
    } catch (error) {
      this.leave(accountId, volume);
      throw error;
    }
    return this.ticket(accountId, volume, limit);
  }

  /**
   * Reads the window from upload_log: the oldest rows first, then the SUM, so a row written
   * in between is in the sum (counted) rather than only in the head; commits meanwhile are
   * added on top. Either way a row may be counted twice, never not at all.
   */
  private async load(accountId: number, volume: AccountVolume): Promise<void> {
    volume.pending = [];
    try {
      const since = this.deps.clock() - this.windowMs;
      const rows = await this.deps.log.oldest(accountId, since, HEAD_UPLOADS + 1);
      const total = await this.deps.log.windowSum(accountId, since);
      volume.head = rows.slice(0, HEAD_UPLOADS).map((row) => ({ at: row.at, bytes: row.bytes }));
      volume.headBytes = volume.head.reduce((sum, row) => sum + row.bytes, 0);
      volume.restBytes = 0;
      volume.complete = rows.length <= HEAD_UPLOADS;
      // Rows pruned between the two reads are in the head but not in the sum; they have
      // left the window, so they go before the rest is worked out.
      this.expire(volume, this.deps.clock());
      volume.restBytes = Math.max(0, total - volume.headBytes);
    } finally {
      const pending = volume.pending ?? [];
      volume.pending = null;
      for (const upload of pending) this.addStored(volume, upload);
    }
  }

  /** Reloads the window when the head has run out while the window holds more than it did. */
  private async refill(accountId: number, volume: AccountVolume): Promise<void> {
    this.expire(volume, this.deps.clock());
    if (volume.complete || volume.head.length > 0) return;
    volume.reloading ??= this.load(accountId, volume).finally(() => {
      volume.reloading = null;
    });
    await volume.reloading;
  }

  /** A stored upload joins the volume: one by one while the head holds everything, else as bytes. */
  private addStored(volume: AccountVolume, upload: StoredUpload): void {
    if (volume.pending) {
      volume.pending.push(upload);
      return;
    }
    if (!volume.complete) {
      volume.restBytes += upload.bytes;
      return;
    }
    volume.head.push(upload);
    volume.headBytes += upload.bytes;
    if (volume.head.length > 2 * HEAD_UPLOADS) {
      // A long burst: keep the oldest one by one and the newer ones as a number.
      const newer = volume.head.splice(HEAD_UPLOADS);
      const bytes = newer.reduce((sum, row) => sum + row.bytes, 0);
      volume.headBytes -= bytes;
      volume.restBytes += bytes;
      volume.complete = false;
    }
  }

  private leave(accountId: number, volume: AccountVolume): void {
    volume.holders -= 1;
    if (volume.holders === 0 && this.accounts.get(accountId) === volume) this.accounts.delete(accountId);
  }

  /** Drops stored uploads of the head that have left the window (the clock only moves forward). */
  private expire(volume: AccountVolume, now: number): void {
    const start = now - this.windowMs;
    while (volume.head.length > 0 && volume.head[0]!.at < start) volume.headBytes -= volume.head.shift()!.bytes;
  }

  /**
   * How long until `needed` bytes of stored volume leave the window, oldest first.
   * Reservations in flight leave it a full window after they are stored at the
   * earliest, so when stored uploads cannot free enough the answer is a whole window.
   * When the window holds more uploads than the head and the head cannot free enough,
   * the answer is when the last of the head leaves: a lower bound, and a retry then is
   * answered with the next one.
   */
  private retryAfterMs(volume: AccountVolume, needed: number, now: number): number {
    let freed = 0;
    for (const upload of volume.head) {
      freed += upload.bytes;
      if (freed >= needed) return Math.max(1, upload.at + this.windowMs - now);
    }
    const last = volume.head.at(-1);
    return volume.complete || !last ? this.windowMs : Math.max(1, last.at + this.windowMs - now);
  }

  private ticket(accountId: number, volume: AccountVolume, limit: number): UploadTicket {
    let held = 0;
    let open = true;
    const end = () => {
      if (!open) return;
      open = false;
      volume.reserved -= held;
      held = 0;
      this.leave(accountId, volume);
    };
    return {
      reserve: async (total) => {
        if (total <= held) return { granted: true };
        // The only wait; from here on the check and the reservation are one step.
        if (!volume.complete) await this.refill(accountId, volume);
        const now = this.deps.clock();
        this.expire(volume, now);
        const extra = total - held;
        const over = storedBytes(volume) + volume.reserved + extra - limit;
        if (!open || over > 0) return { granted: false, retryAfterMs: this.retryAfterMs(volume, Math.max(over, 1), now) };
        held = total;
        volume.reserved += extra;
        return { granted: true };
      },
      commit: async (bytes, at) => {
        if (!open) return;
        this.addStored(volume, { at, bytes });
        end();
      },
      release: async () => {
        end();
      },
    };
  }
}
