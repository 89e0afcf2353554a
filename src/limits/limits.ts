import type { Config } from '../config/config.js';
import type { MetadataStore } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import type { LimitName } from '../observability/metrics.js';
import { ApiRateLimiter } from './api-rate-limiter.js';
import { MemorySlots, RedisSlots } from './download-slots.js';
import { FreeDownloads } from './free-downloads.js';
import { KnownSignInAddresses } from './known-sign-in-addresses.js';
import { LinkPasswordThrottle } from './link-password-throttle.js';
import { type RateLimiterAbstract, RateLimiterMemory } from './rate-limiter-classes.js';
import type { RedisConnection } from './redis-connection.js';
import type { ReservationsService } from './reservations-service.js';
import { sharedRateLimiter } from './shared-rate-limiter.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { ReservedUploadQuota } from './upload-quota.js';
import { UploadVolume } from './upload-volume.js';

/** The limits of API.md section 8 and the request rates; one set per server, never global. */
export interface Limits {
  /** The Redis connection of the shared counters; null when each server counts alone. */
  redis: RedisConnection | null;
  /** Upload volume per account over a rolling 24 h. */
  uploads: UploadVolume;
  /** Failed sign-ins per client address and per login. */
  signIn: SignInThrottle;
  /** API requests per key and per client address. */
  api: ApiRateLimiter;
  /** Concurrent free downloads per client address, and their speed cap. */
  freeDownloads: FreeDownloads;
  /** Wrong passwords of shares and upload requests per client address and per link. */
  linkPasswords: LinkPasswordThrottle;
}

export interface LimitsDeps {
  store: MetadataStore;
  /** Uploads in flight reserve their volume as rows the reservations service keeps. */
  reservations: ReservationsService;
  clock: Clock;
  isPremium: (account: Account) => boolean;
  log: (error: unknown, message: string) => void;
  /** A keyed hash (HMAC with the server secret), so stored limit keys reveal no login or address. */
  keyedHash: (text: string) => string;
  /** The connection that shares the request-rate counters and download slots (--redis-url); null = in this process. */
  redis: RedisConnection | null;
  /** Told of every refusal, naming the limit (metrics). */
  refused: (limit: LimitName) => void;
}

/**
 * Builds the limits from the config. The upload volume (and premium traffic, in the
 * reservations service) lives in the metadata store, so it holds across servers as it is.
 * The request-rate counters and free-download slots are in this process, or in Redis
 * with --redis-url, where every server sees them; while Redis is unreachable, each server
 * counts on its own (redis-connection.ts).
 */
export function createLimits(config: Config, deps: LimitsDeps): Limits {
  const { redis } = deps;
  // Keys in Redis are keyed hashes, apart from every other use of the secret.
  const hash = (key: string) => deps.keyedHash(`shared-limit\n${key}`);
  const counter = (name: string, points: number): RateLimiterAbstract =>
    redis ? sharedRateLimiter({ redis, name, points, hash }) : new RateLimiterMemory({ keyPrefix: name, points, duration: 60 });
  const optional = (name: string, points: number) => (points > 0 ? counter(name, points) : null);
  return {
    redis,
    uploads: new UploadVolume({
      quota: new ReservedUploadQuota({ store: deps.store, reservations: deps.reservations, clock: deps.clock }),
      store: deps.store,
      log: deps.store.uploadLog,
      clock: deps.clock,
      isPremium: deps.isPremium,
      freeLimit: config.uploadVolumeFree,
      premiumLimit: config.uploadVolumePremium,
      report: deps.log,
      refused: () => deps.refused('upload-volume'),
    }),
    signIn: new SignInThrottle({
      attemptsPerMinute: config.loginAttemptsPerMinute,
      byAddress: counter('sign-in-address', config.loginAttemptsPerMinute),
      byLogin: counter('sign-in-login', config.loginAttemptsPerMinute),
      known: new KnownSignInAddresses({ repository: deps.store.signInAddresses, clock: deps.clock, hash: deps.keyedHash }),
      report: deps.log,
      refused: () => deps.refused('sign-in'),
    }),
    api: new ApiRateLimiter({
      byKey: optional('api-key', config.apiRatePerKey),
      byAddress: optional('api-address', config.apiRatePerIp),
      refused: () => deps.refused('api-rate'),
    }),
    freeDownloads: new FreeDownloads({
      perIp: config.freeDownloadsPerIp,
      bytesPerSecond: config.freeDownloadSpeed,
      slots: redis ? new RedisSlots({ redis, name: 'download-slots', fallback: new MemorySlots(), hash }) : new MemorySlots(),
      refused: () => deps.refused('free-download-slots'),
    }),
    // A link's password is guessed like an account's: the same per-address budget, and ten
    // times that per link, so a link shared with many people is not locked by one of them.
    linkPasswords: new LinkPasswordThrottle({
      perAddressPerMinute: config.loginAttemptsPerMinute,
      perLinkPerMinute: config.loginAttemptsPerMinute * 10,
      byAddress: counter('link-password-address', config.loginAttemptsPerMinute),
      byLink: counter('link-password-link', config.loginAttemptsPerMinute * 10),
      refused: () => deps.refused('link-password'),
    }),
  };
}
