import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/utils';
import type { UploadLocksRepository } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';

/** A lock whose holder stopped renewing (a server killed mid-PATCH) is free after this. */
export const UPLOAD_LOCK_LEASE_MS = 10_000;
/** The holder renews this often, and sees then whether another request asked for the upload. */
export const UPLOAD_LOCK_RENEW_MS = 1_000;
/** A request waits this long for an upload another request writes, then answers 423. */
export const UPLOAD_LOCK_WAIT_MS = 20_000;
/** A waiting request tries again this often. */
const RETRY_MS = 200;

export interface UploadLockerDeps {
  locks: UploadLocksRepository;
  clock: Clock;
  /** This server's name (--server-name), the same across its restarts. */
  server: string;
  /** This process: a random id per start. */
  instance: string;
  /** Where a failing renewal is reported. */
  report: (error: unknown, message: string) => void;
  leaseMs?: number;
  renewMs?: number;
  waitMs?: number;
}

/** The answer when the upload stays locked: tus clients retry a 423. */
export const UPLOAD_LOCKED = { status_code: 423, body: 'The upload is being written by another request; try again\n' };

/**
 * The tus Locker on the metadata store (table upload_locks), so two requests never write
 * one upload at once, on one server or several. A lock is a leased row, renewed every
 * second while its request runs; a server that dies lets it run out. A second request for
 * the upload (a client resuming after a dropped connection the first request has not
 * noticed) asks the holder to let go: the holder sees the request at its next renewal and
 * ends its PATCH with the bytes it has (tus's request-release), and the second takes over.
 */
export class UploadLocker implements Locker {
  constructor(private readonly deps: UploadLockerDeps) {}

  newLock(id: string): Lock {
    return new UploadLock(id, this.deps);
  }

  /** Frees the locks earlier processes of this server held (they died: a crash, a kill). */
  async releaseEarlierProcesses(): Promise<void> {
    await this.deps.locks.releaseServer(`${this.deps.server} `, `${this.deps.server} ${this.deps.instance} `);
  }
}

class UploadLock implements Lock {
  private readonly holder: string;
  private renewal: NodeJS.Timeout | null = null;

  constructor(
    private readonly id: string,
    private readonly deps: UploadLockerDeps,
  ) {
    // `<server> <instance> <random>`: server names have no space (--server-name), so a
    // restart can tell its earlier processes' locks by the first word.
    this.holder = `${deps.server} ${deps.instance} ${randomBytes(6).toString('hex')}`;
  }

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const { locks, clock } = this.deps;
    const leaseMs = this.deps.leaseMs ?? UPLOAD_LOCK_LEASE_MS;
    const deadline = clock() + (this.deps.waitMs ?? UPLOAD_LOCK_WAIT_MS);
    for (;;) {
      if (signal.aborted) throw ERRORS.ABORTED;
      const now = clock();
      if (await locks.take(this.id, this.holder, now + leaseMs, now)) break;
      if (now >= deadline) throw UPLOAD_LOCKED;
      await locks.requestRelease(this.id);
      await sleep(RETRY_MS, undefined, { signal }).catch(() => {});
    }
    this.keep(requestRelease, leaseMs);
  }

  async unlock(): Promise<void> {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = null;
    await this.deps.locks.release(this.id, this.holder);
  }

  /** Renews the lease while held; asks our request to end when another wants the upload or the lease was lost. */
  private keep(requestRelease: RequestRelease, leaseMs: number): void {
    let renewing = false;
    let released = false;
    this.renewal = setInterval(() => {
      if (renewing) return;
      renewing = true;
      this.deps.locks
        .renew(this.id, this.holder, this.deps.clock() + leaseMs)
        .then(async ({ held, releaseRequested }) => {
          if ((!held || releaseRequested) && !released) {
            released = true;
            await requestRelease();
          }
        })
        .catch((error: unknown) => this.deps.report(error, 'renewing an upload lock failed'))
        .finally(() => {
          renewing = false;
        });
    }, this.deps.renewMs ?? UPLOAD_LOCK_RENEW_MS);
    this.renewal.unref();
  }
}
