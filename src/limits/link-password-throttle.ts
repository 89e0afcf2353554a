import { errors } from '../domain/errors.js';
import { addressKey } from './client-address.js';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from './rate-limiter-classes.js';

export interface LinkPasswordThrottleOptions {
  /** Wrong passwords allowed per minute from one client address, whatever link they are for. */
  perAddressPerMinute: number;
  /** Wrong passwords allowed per minute for one link, from every address together. */
  perLinkPerMinute: number;
  /** The counters; in-memory by default, shared between servers when given Redis ones (limits.ts). */
  byAddress?: RateLimiterAbstract;
  byLink?: RateLimiterAbstract;
  /** Told of every guess refused by a full counter. */
  refused: () => void;
}

/**
 * The brute-force limit on the passwords of shares and upload requests (issue 25): wrong
 * guesses are counted per client address (across links, so one address cannot try many
 * links at once) and per link (across addresses, so many addresses cannot share out the
 * guesses on one link). A guess takes its place on both counters before the password is
 * checked, so parallel guesses cannot overtake the limit; a right one gives its place
 * back. Once a counter is full every guess it governs is refused, the right password
 * included, until its minute is over: errorSharePassword with 429 and Retry-After.
 *
 * A request without a password is no guess and is not counted: it is simply told the link
 * is protected. A browser that gave the right password carries a cookie (share-cookie
 * checks are the caller's), so an attacker filling a link's counter does not lock out
 * those who are already in.
 */
export class LinkPasswordThrottle {
  private readonly byAddress: RateLimiterAbstract;
  private readonly byLink: RateLimiterAbstract;
  private readonly refused: () => void;

  constructor(options: LinkPasswordThrottleOptions) {
    this.byAddress = options.byAddress ?? new RateLimiterMemory({ keyPrefix: 'link-password-address', points: options.perAddressPerMinute, duration: 60 });
    this.byLink = options.byLink ?? new RateLimiterMemory({ keyPrefix: 'link-password-link', points: options.perLinkPerMinute, duration: 60 });
    this.refused = options.refused;
  }

  /**
   * Runs `check` (the password comparison: true when right) as one guess at link `linkId`
   * from `ip`. Resolves when it is right; throws errorSharePassword (401) when wrong, or
   * with 429 when a counter is full.
   */
  async attempt(linkId: string, ip: string, check: () => Promise<boolean>): Promise<void> {
    const address = addressKey(ip);
    await take(this.byAddress.consume(address), this.refused);
    try {
      await take(this.byLink.consume(linkId), this.refused);
    } catch (error) {
      await this.byAddress.reward(address);
      throw error;
    }
    let right: boolean;
    try {
      right = await check();
    } catch (error) {
      // A failed check is no wrong guess.
      await Promise.all([this.byAddress.reward(address), this.byLink.reward(linkId)]);
      throw error;
    }
    if (!right) throw errors.sharePassword();
    await Promise.all([this.byAddress.reward(address), this.byLink.reward(linkId)]);
  }
}

/** A full counter becomes errorSharePassword with 429; a store failure passes on (failing closed). */
async function take(consumed: Promise<RateLimiterRes>, refused: () => void): Promise<void> {
  try {
    await consumed;
  } catch (refusal) {
    if (refusal instanceof RateLimiterRes) {
      refused();
      throw errors.sharePasswordThrottled(refusal.msBeforeNext / 1000);
    }
    throw refusal;
  }
}
