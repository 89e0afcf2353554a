import { pipeline, type Readable } from 'node:stream';
import { errors } from '../domain/errors.js';
import { addressKey } from './client-address.js';
import { type DownloadSlots, MemorySlots } from './download-slots.js';
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
  /** Where slots are counted: this process by default, Redis to share them between servers. */
  slots?: DownloadSlots;
  /** Told of every download refused for want of a slot. */
  refused: () => void;
}

/**
 * The limits of free downloads (`?download=1`, API.md 1 and 8): a few at once per client
 * address, each at the configured speed. Premium direct downloads never come here.
 */
export class FreeDownloads {
  private readonly slots: DownloadSlots;
  /** Slots this server holds, wherever they are counted (no limit of its own). */
  private readonly heldHere = new MemorySlots();

  constructor(private readonly options: FreeDownloadsOptions) {
    this.slots = options.slots ?? new MemorySlots();
  }

  /**
   * Takes one of the address's download slots and returns the function that gives it
   * back (call it once the response is over, however it ends; later calls do nothing).
   * errorRateLimited (429) when every slot is taken.
   */
  async enter(ip: string): Promise<() => void> {
    if (this.options.perIp <= 0) return () => {};
    const key = addressKey(ip);
    const release = await this.slots.take(key, this.options.perIp);
    if (!release) {
      this.options.refused();
      throw errors.tooManyDownloads(SLOT_RETRY_SECONDS);
    }
    // Both give-backs do nothing after their first call, so neither does this one.
    const here = this.heldHere.takeNow(key, Infinity)!;
    return () => {
      release();
      here();
    };
  }

  /** Downloads of an address this server is sending (for tests and stats). */
  inProgress(ip: string): number {
    return this.heldHere.held(addressKey(ip));
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
