import { pipeline, type Readable } from 'node:stream';
import { errors } from '../domain/errors.js';
import { addressKey } from './client-address.js';
import { Throttle } from './throttle.js';

/**
 * What a refused client is told to wait: a slot frees when one of its own downloads
 * ends, which nobody can predict, so this is a polite polling interval.
 */
const SLOT_RETRY_SECONDS = 10;

export interface FreeDownloadsOptions {
  /** Concurrent free downloads per client address; 0 = unlimited. */
  perIp: number;
  /** Speed cap of one free download in bytes per second; null = unlimited. */
  bytesPerSecond: number | null;
  /** Told of every download refused for want of a slot. */
  refused: () => void;
}

/**
 * The limits of free downloads (`?download=1`, API.md 1 and 8): a few at once per client
 * address, each at the configured speed. Premium direct downloads never come here.
 */
export class FreeDownloads {
  private readonly active = new Map<string, number>();

  constructor(private readonly options: FreeDownloadsOptions) {}

  /**
   * Takes one of the address's download slots and returns the function that gives it
   * back (call it once the response is over, however it ends; later calls do nothing).
   * errorRateLimited (429) when every slot is taken.
   */
  enter(ip: string): () => void {
    if (this.options.perIp <= 0) return () => {};
    const key = addressKey(ip);
    const inUse = this.active.get(key) ?? 0;
    if (inUse >= this.options.perIp) {
      this.options.refused();
      throw errors.tooManyDownloads(SLOT_RETRY_SECONDS);
    }
    this.active.set(key, inUse + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (this.active.get(key) ?? 1) - 1;
      if (left > 0) this.active.set(key, left);
      else this.active.delete(key);
    };
  }

  /** Downloads of an address in progress (for tests and stats). */
  inProgress(ip: string): number {
    return this.active.get(addressKey(ip)) ?? 0;
  }

  /**
   * The stream at the speed cap, or unchanged without one. Destroying the returned
   * stream destroys the source too.
   */
  throttle(source: Readable): Readable {
    if (this.options.bytesPerSecond === null) return source;
    const throttled = new Throttle(this.options.bytesPerSecond);
    pipeline(source, throttled, () => {});
    return throttled;
  }
}
