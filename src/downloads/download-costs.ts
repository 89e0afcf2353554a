import type { Readable } from 'node:stream';
import { errors } from '../domain/errors.js';
import type { Account } from '../domain/types.js';
import type { FreeDownloads } from '../limits/free-downloads.js';
import type { ReservationsService, TrafficTransfer } from '../limits/reservations-service.js';
import type { DownloadKind } from '../observability/metrics.js';
import type { Requester } from './requester.js';

/**
 * What one response costs the one who asks, from admission to its end. Made by
 * DownloadCosts.admit, once per response; the use case (downloads-service.ts) calls its
 * members in this order: pace as the bytes are opened, charge before the first body byte,
 * progress as they leave, settle once at the end.
 */
export interface DownloadCost {
  /** What the metrics count this download as. */
  readonly kind: DownloadKind;
  /** The bytes at this cost's pace: the free speed cap, or unchanged. Destroying the result destroys `source`. */
  pace(source: Readable): Readable;
  /** Charges a body of `length` bytes before its first byte is sent; throws to refuse it. */
  charge(length: number): Promise<void>;
  /** `sent` body bytes in all have reached the client (handed to the kernel). */
  progress(sent: number): void;
  /** The body is over with `sent` bytes sent: what they cost is charged, the rest given back. */
  settle(sent: number, log: DownloadLog): void;
}

/** Where failures that must not fail a download are reported (the request's log). */
export type DownloadLog = (error: unknown, message: string) => void;

export interface DownloadCostsDeps {
  /** The free downloads' slots per client address and their speed cap (API.md 8). */
  freeDownloads: FreeDownloads;
  /** Premium traffic in flight is a reservation row that outlives a crash. */
  reservations: Pick<ReservationsService, 'takeTraffic'>;
  /** Whether an account has premium now (a fast share's owner). */
  isPremium: (account: Account) => boolean;
}

/** An owner reading their own file: nothing to pay, nothing to pace. */
const OWN_BYTES: DownloadCost = {
  kind: 'owner',
  pace: (source) => source,
  charge: async () => {},
  progress: () => {},
  settle: () => {},
};

/** Decides what a download costs from who asks through what link (requester.ts). */
export class DownloadCosts {
  constructor(private readonly deps: DownloadCostsDeps) {}

  /**
   * Admits a response of `requester` before any costly work for it (a ZIP's plan), so that
   * work is bounded too: a public download takes one of the address's free slots
   * (errorTooManyDownloads when none is left), held until `signal` aborts, which the caller
   * does once the response is over, however it ends.
   */
  async admit(requester: Requester, signal: AbortSignal): Promise<DownloadCost> {
    switch (requester.link) {
      case 'public':
        return this.free(requester.address, signal);
      case 'direct':
        return this.premium(requester.account);
      case 'owner':
        return OWN_BYTES;
      case 'share':
        // Fast only while the owner has premium, decided per request (shares-service.ts).
        return requester.share.fast && this.deps.isPremium(requester.owner)
          ? this.fastShare(requester.owner, requester.address, signal)
          : this.free(requester.address, signal);
    }
  }

  /**
   * A fast share of a premium owner: the owner's traffic pays, exactly as for a direct link
   * (the whole body taken before its first byte, settled when it ends, also after a
   * crash), uncapped. When the traffic left cannot pay for the body, the download falls
   * back to the free rules (a slot of the client's address, the speed cap) instead of
   * failing: charge() decides, and pace() (which comes after it) follows.
   */
  private fastShare(owner: Account, address: string, signal: AbortSignal): DownloadCost {
    const { reservations, freeDownloads } = this.deps;
    let transfer: TrafficTransfer | null = null;
    let free = false;
    return {
      get kind() {
        return free ? ('public' as const) : ('direct' as const);
      },
      pace: (source) => (free ? freeDownloads.throttle(source) : source),
      charge: async (length) => {
        if (length === 0) return;
        transfer = await reservations.takeTraffic(owner.id, length);
        if (transfer) return;
        const leave = await freeDownloads.enter(address);
        free = true;
        if (signal.aborted) leave();
        else signal.addEventListener('abort', leave, { once: true });
      },
      progress: (sent) => transfer?.progress(sent),
      settle: (sent, log) => {
        transfer?.finish(sent).catch((error) => log(error, 'settling the traffic of a share download failed'));
      },
    };
  }

  private async free(address: string, signal: AbortSignal): Promise<DownloadCost> {
    const { freeDownloads } = this.deps;
    const leave = await freeDownloads.enter(address);
    // At once when the response is already over; leave() does nothing after its first call.
    if (signal.aborted) leave();
    else signal.addEventListener('abort', leave, { once: true });
    return {
      kind: 'public',
      pace: (source) => freeDownloads.throttle(source),
      charge: async () => {},
      progress: () => {},
      settle: () => {},
    };
  }

  private premium(account: Account): DownloadCost {
    const { reservations } = this.deps;
    let transfer: TrafficTransfer | null = null;
    return {
      kind: 'direct',
      pace: (source) => source,
      // The whole body is taken first, so concurrent downloads cannot overdraw (API.md 6);
      // the transfer charges what is sent and gives back the rest, also after a crash.
      charge: async (length) => {
        if (length === 0) return;
        transfer = await reservations.takeTraffic(account.id, length);
        if (!transfer) throw errors.permissionDenied('Not enough premium traffic left for this download');
      },
      progress: (sent) => transfer?.progress(sent),
      settle: (sent, log) => {
        transfer?.finish(sent).catch((error) => log(error, 'settling the traffic of a download failed'));
      },
    };
  }
}
