import { createHash } from 'node:crypto';
import { errors } from '../domain/errors.js';
import { rememberRecent } from '../domain/remember-recent.js';
import { addressKey } from './client-address.js';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from './rate-limiter-classes.js';

export interface ApiRateLimiterOptions {
  /** API requests per minute per API key; 0 = unlimited (when `byKey` is not given). */
  perKey?: number;
  /** API requests per minute per client address; 0 = unlimited (when `byAddress` is not given). */
  perIp?: number;
  /** The counters; in-memory by default, any rate-limiter-flexible store to share them; null = unlimited. */
  byKey?: RateLimiterAbstract | null;
  byAddress?: RateLimiterAbstract | null;
  /** Told of every request refused. */
  refused: () => void;
}

/** An API key as a counter key: the key itself never sits in the limiter's store. */
const keyOf = rememberRecent((apiKey: string) => createHash('sha256').update(apiKey).digest('hex'));

/** The request rate of API clients, per API key and per client address (errorRateLimited). */
export class ApiRateLimiter {
  private readonly byKey: RateLimiterAbstract | null;
  private readonly byAddress: RateLimiterAbstract | null;
  private readonly refused: () => void;

  constructor(options: ApiRateLimiterOptions) {
    const counter = (keyPrefix: string, points = 0) => (points > 0 ? new RateLimiterMemory({ keyPrefix, points, duration: 60 }) : null);
    this.byKey = options.byKey !== undefined ? options.byKey : counter('api-key', options.perKey);
    this.byAddress = options.byAddress !== undefined ? options.byAddress : counter('api-address', options.perIp);
    this.refused = options.refused;
  }

  /**
   * Counts one API request from `ip`, carrying `apiKey` if any (counted whether or not the
   * key is valid, before anything looks it up); errorRateLimited with Retry-After past
   * either limit. Refused requests count too, so a client that keeps hammering stays
   * refused until its minute is over. The address is counted first and a refused
   * address never reaches the key counter, so a flood of made-up keys cannot fill it.
   */
  async hit(ip: string, apiKey: string | undefined): Promise<void> {
    if (this.byAddress) await refuseWhenFull(this.byAddress.consume(addressKey(ip)), this.refused);
    if (this.byKey && apiKey !== undefined) await refuseWhenFull(this.byKey.consume(keyOf(apiKey)), this.refused);
  }
}

/** Turns a counter's refusal into errorRateLimited; a store failure is passed on as it is. */
async function refuseWhenFull(consumed: Promise<RateLimiterRes>, refused: () => void): Promise<void> {
  try {
    await consumed;
  } catch (refusal) {
    if (refusal instanceof RateLimiterRes) {
      refused();
      throw errors.rateLimited(refusal.msBeforeNext / 1000);
    }
    throw refusal;
  }
}
