import type { MetadataStore, Repositories, UploadRequestRecord } from '../db/repositories/repositories.js';
import { errors } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import { HeldLeases } from '../limits/held-leases.js';
import { LEASE_MS, RENEW_MS } from '../limits/reservations-service.js';

/** What an upload into a request declares before its first byte. */
export interface SlotWanted {
  /**
   * Bytes the file cannot exceed: a multipart body's Content-Length (an upper bound) or a
   * tus Upload-Length (the exact length); undefined when unknown (chunked).
   */
  declaredBytes?: number;
  /** The declared length is the file's exact length (tus): refused at once when it does not fit. */
  exact: boolean;
}

/** A granted slot: its row and the bytes it holds. */
export interface GrantedSlot {
  id: number;
  /**
   * Bytes of the request's max_bytes this upload holds: the file must not pass them
   * (errorUploadLimit). Null when the request has no max_bytes.
   */
  bytes: number | null;
}

export interface RequestSlotsDeps {
  store: MetadataStore;
  clock: Clock;
  /** Where failures that must not fail an upload are reported. */
  report: (error: unknown, message: string) => void;
  /** How long a held slot counts without renewal (LEASE_MS). */
  leaseMs?: number;
  /** How often held slots are renewed (RENEW_MS). */
  renewMs?: number;
}

/**
 * The exact limits of upload requests (issue 25: max_files and max_bytes "exact under
 * concurrency and across servers: reserve before receiving, as upload volume does").
 *
 * An upload into a request first takes a slot: a row holding one file and its bytes
 * (what it declared, else every byte still allowed), granted only when the files stored,
 * the slots in flight and this one fit the limits, checked under the request's lock
 * (`locks.request`: a PostgreSQL advisory lock; SQLite's write lock). The slot becomes the
 * request's counts in the file's own transaction (`settleSlot`, UploadInput.within), or
 * goes when the upload fails (`release`). This process renews the leases of the slots it
 * holds; a slot whose holder died stops counting when its lease runs out, and the next
 * check deletes it. A resumable upload's slot is leased until the upload expires instead.
 */
export class RequestSlots {
  private readonly leaseMs: number;
  private readonly held: HeldLeases;

  constructor(private readonly deps: RequestSlotsDeps) {
    this.leaseMs = deps.leaseMs ?? LEASE_MS;
    this.held = new HeldLeases({
      renewMs: deps.renewMs ?? RENEW_MS,
      renew: (ids) => deps.store.uploadRequests.renewSlots(ids, deps.clock() + this.leaseMs),
      report: (error) => deps.report(error, 'renewing upload request slots failed'),
    });
  }

  /**
   * Takes a slot in `requestId` for one upload: errorShareNotFound when the request is
   * unknown or closed, errorFileSize when an exact length passes its max_file_size,
   * errorUploadLimit when it is full. Held (renewed by this process) unless `detached`
   * names the lease's end and the resumable upload that holds it (until its expiry);
   * `within` writes in the same transaction.
   */
  async reserve(
    requestId: string,
    wanted: SlotWanted,
    detached?: { until: number; uploadId: string },
    within?: (repos: Repositories, slotId: number) => Promise<void>,
  ): Promise<GrantedSlot> {
    const now = this.deps.clock();
    const granted = await this.deps.store.transaction(async (repos): Promise<GrantedSlot> => {
      await repos.locks.request(requestId);
      const request = await repos.uploadRequests.byId(requestId);
      if (!request || request.closed) throw errors.requestNotFound();
      const declared = wanted.declaredBytes;
      if (wanted.exact && declared !== undefined && request.maxFileSize !== null && declared > request.maxFileSize) throw errors.fileSize(request.maxFileSize);
      await repos.uploadRequests.dropLapsedSlots(requestId, now);
      const inFlight = await repos.uploadRequests.slotsInFlight(requestId, now);
      if (request.maxFiles !== null && request.files + inFlight.files + 1 > request.maxFiles) throw errors.requestFull();
      let bytes: number | null = null;
      if (request.maxBytes !== null) {
        const left = request.maxBytes - request.bytes - inFlight.bytes;
        // An upper bound (a multipart body's length) may hold more than the file: the file
        // gets what is left and is cut if it passes it. An exact length must fit whole.
        if (left <= 0 || (wanted.exact && declared !== undefined && declared > left)) throw errors.requestFull();
        bytes = declared === undefined ? left : Math.min(declared, left);
      }
      const id = await repos.uploadRequests.openSlot({
        requestId,
        bytes: bytes ?? declared ?? 0,
        leaseUntil: detached?.until ?? now + this.leaseMs,
        createdAt: now,
        ...(detached ? { uploadId: detached.uploadId } : {}),
      });
      if (detached) await repos.uploadRequests.bindUpload(detached.uploadId, requestId, now);
      await within?.(repos, id);
      return { id, bytes };
    });
    if (!detached) this.held.hold(granted.id);
    return granted;
  }

  /** The upload was stored: its slot became the request's counts (settleSlot); stop renewing it. */
  stored(slotId: number): void {
    this.held.letGo(slotId);
  }

  /** Ends the slot of an upload that was not stored: it counts no more. A failure leaves it to its lease. */
  async release(slotId: number): Promise<void> {
    this.held.letGo(slotId);
    try {
      await this.deps.store.uploadRequests.takeSlot(slotId);
    } catch (error) {
      this.deps.report(error, 'releasing an upload request slot failed; it counts until its lease runs out');
    }
  }

  /** Stops renewing (a graceful stop); slots still held are left to their leases. */
  stop(): void {
    this.held.stop();
  }
}

/**
 * In the transaction that creates the file (UploadInput.within): the upload's slot becomes
 * one stored file of `size` bytes in the request's counts, under the request's lock. The
 * limits are checked again without the slot: a slot whose lease ran out (and was deleted)
 * while its upload lived no longer held its place, and an owner may have lowered a limit
 * or closed the request meanwhile. Throwing rolls the file back.
 */
export async function settleSlot(repos: Repositories, now: number, requestId: string, slotId: number, size: number): Promise<UploadRequestRecord> {
  await repos.locks.request(requestId);
  const request = await repos.uploadRequests.byId(requestId);
  if (!request || request.closed) throw errors.requestNotFound();
  if (request.maxFileSize !== null && size > request.maxFileSize) throw errors.fileSize(request.maxFileSize);
  await repos.uploadRequests.takeSlot(slotId);
  await repos.uploadRequests.dropLapsedSlots(requestId, now);
  const others = await repos.uploadRequests.slotsInFlight(requestId, now);
  if (request.maxFiles !== null && request.files + others.files + 1 > request.maxFiles) throw errors.requestFull();
  if (request.maxBytes !== null && request.bytes + others.bytes + size > request.maxBytes) throw errors.requestFull();
  await repos.uploadRequests.countStored(requestId, size);
  return { ...request, files: request.files + 1, bytes: request.bytes + size };
}
