import type { IRateLimiterRedisOptions } from 'rate-limiter-flexible';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from './rate-limiter-classes.js';
import type { RedisConnection } from './redis-connection.js';

export interface SharedRateLimiterOptions {
  redis: RedisConnection;
  /** The counter's name in its keys (`<prefix><name>:<hash of the key>`). */
  name: string;
  /** Points per minute. */
  points: number;
  /** A keyed hash: Redis never holds a client's address or a login. */
  hash: (key: string) => string;
}

type Settle = (value: unknown) => void;
/** What RateLimiterRedis has beyond its typings: where every failure of the store goes. */
type RedisLimiterInternals = RateLimiterAbstract & {
  getKey(key: string | number): string;
  _handleError(error: unknown, funcName: string, resolve: Settle, reject: Settle, params: unknown[]): void;
};
const RedisLimiterBase = RateLimiterRedis as unknown as new (options: IRateLimiterRedisOptions) => RedisLimiterInternals;

/**
 * A per-minute counter in Redis that every server shares (issue 10). The keys are keyed
 * hashes. When Redis cannot be used (not connected, or a command fails or times out),
 * the count is made in this process instead (the insurance limiter) and the connection
 * is told, so that it shows in the log and the metrics.
 */
export function sharedRateLimiter(options: SharedRateLimiterOptions): RateLimiterAbstract {
  const { redis, name, points, hash } = options;
  class SharedRateLimiter extends RedisLimiterBase {
    override getKey(key: string | number): string {
      return super.getKey(hash(String(key)));
    }

    override _handleError(error: unknown, funcName: string, resolve: Settle, reject: Settle, params: unknown[]): void {
      // A refusal is an answer, not a failure.
      if (!(error instanceof RateLimiterRes)) redis.fellBack(redis.ready ? (error as Error) : null);
      super._handleError(error, funcName, resolve, reject, params);
    }
  }
  return new SharedRateLimiter({
    storeClient: redis.client,
    keyPrefix: `${redis.prefix}${name}`,
    points,
    duration: 60,
    // Not connected: count here at once rather than wait.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: name, points, duration: 60 }),
  });
}
