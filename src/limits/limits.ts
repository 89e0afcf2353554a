import type { Config } from '../config/config.js';
import type { MetadataStore } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import type { LimitName } from '../observability/metrics.js';
import { ApiRateLimiter } from './api-rate-limiter.js';
import { FreeDownloads } from './free-downloads.js';
import { KnownSignInAddresses } from './known-sign-in-addresses.js';
import { SignInThrottle } from './sign-in-throttle.js';
import type { ReservationsService } from '../services/reservations-service.js';
import { ReservedUploadQuota } from './upload-quota.js';
import { UploadVolume } from './upload-volume.js';

/** The limits of API.md section 8 and the request rates; one set per server, never global. */
export interface Limits {
  /** Upload volume per account over a rolling 24 h. */
  uploads: UploadVolume;
  /** Failed sign-ins per client address and per login. */
  signIn: SignInThrottle;
  /** API requests per key and per client address. */
  api: ApiRateLimiter;
  /** Concurrent free downloads per client address, and their speed cap. */
  freeDownloads: FreeDownloads;
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
  /** Told of every refusal, naming the limit (metrics). */
  refused: (limit: LimitName) => void;
}

/**
 * Builds the limits from the config. The upload volume lives in the metadata store and
 * holds across servers; the request-rate counters are in-process, and running several
 * processes means swapping them for shared ones (rate-limiter-flexible stores on Redis or
 * PostgreSQL), here and nowhere else.
 */
export function createLimits(config: Config, deps: LimitsDeps): Limits {
  return {
    uploads: new UploadVolume({
      quota: new ReservedUploadQuota({ store: deps.store, reservations: deps.reservations, clock: deps.clock }),
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
      known: new KnownSignInAddresses({ repository: deps.store.signInAddresses, clock: deps.clock, hash: deps.keyedHash }),
      report: deps.log,
      refused: () => deps.refused('sign-in'),
    }),
    api: new ApiRateLimiter({ perKey: config.apiRatePerKey, perIp: config.apiRatePerIp, refused: () => deps.refused('api-rate') }),
    freeDownloads: new FreeDownloads({ perIp: config.freeDownloadsPerIp, bytesPerSecond: config.freeDownloadSpeed, refused: () => deps.refused('free-download-slots') }),
  };
}
