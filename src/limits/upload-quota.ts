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

/** What the in-memory quota knows of one account while it has uploads in flight. */
interface AccountVolume {
  /** Stored uploads inside the window, oldest first. */
  stored: StoredUpload[];
  /** Sum of `stored`. */
  storedBytes: number;
  /** Sum of the reservations of open tickets. */
  reserved: number;
  /** Open tickets; the entry is dropped at zero and reloaded from upload_log next time. */
  holders: number;
  loaded: Promise<void>;
}

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
 * the number of accounts. Each ticket writes its upload_log row before it commits, so a
 * reload never misses a stored upload.
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
      const fresh: AccountVolume = { stored: [], storedBytes: 0, reserved: 0, holders: 0, loaded: Promise.resolve() };
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

  private async load(accountId: number, volume: AccountVolume): Promise<void> {
    const rows = await this.deps.log.since(accountId, this.deps.clock() - this.windowMs);
    volume.stored = rows.map((row) => ({ at: row.at, bytes: row.bytes })).sort((a, b) => a.at - b.at);
    volume.storedBytes = volume.stored.reduce((sum, row) => sum + row.bytes, 0);
  }

  private leave(accountId: number, volume: AccountVolume): void {
    volume.holders -= 1;
    if (volume.holders === 0 && this.accounts.get(accountId) === volume) this.accounts.delete(accountId);
  }

  /** Drops stored uploads that have left the window (the clock only moves forward). */
  private expire(volume: AccountVolume, now: number): void {
    const start = now - this.windowMs;
    while (volume.stored.length > 0 && volume.stored[0]!.at < start) volume.storedBytes -= volume.stored.shift()!.bytes;
  }

  /**
   * How long until `needed` bytes of stored volume leave the window, oldest first.
   * Reservations in flight leave it a full window after they are stored at the
   * earliest, so when stored uploads cannot free enough the answer is a whole window.
   */
  private retryAfterMs(volume: AccountVolume, needed: number, now: number): number {
    let freed = 0;
    for (const upload of volume.stored) {
      freed += upload.bytes;
      if (freed >= needed) return Math.max(1, upload.at + this.windowMs - now);
    }
    return this.windowMs;
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
        const now = this.deps.clock();
        this.expire(volume, now);
        const extra = total - held;
        const over = volume.storedBytes + volume.reserved + extra - limit;
        if (!open || over > 0) return { granted: false, retryAfterMs: this.retryAfterMs(volume, Math.max(over, 1), now) };
        held = total;
        volume.reserved += extra;
        return { granted: true };
      },
      commit: async (bytes, at) => {
        if (!open) return;
        volume.stored.push({ at, bytes });
        volume.storedBytes += bytes;
        end();
      },
      release: async () => {
        end();
      },
    };
  }
}
