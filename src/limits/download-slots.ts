import { randomUUID } from 'node:crypto';
import type { RedisConnection } from './redis-connection.js';

/**
 * Concurrent slots per key (a client address's free downloads): `take` holds one when
 * fewer than `limit` are held, and returns the function that gives it back (later calls
 * do nothing); null when every slot is taken.
 */
export interface DownloadSlots {
  take(key: string, limit: number): Promise<(() => void) | null>;
}

/** Slots counted in this process: exact for one server, per server for several. */
export class MemorySlots implements DownloadSlots {
  private readonly counts = new Map<string, number>();

  async take(key: string, limit: number): Promise<(() => void) | null> {
    return this.takeNow(key, limit);
  }

  /** Slots of `key` held now. */
  held(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  takeNow(key: string, limit: number): (() => void) | null {
    const inUse = this.held(key);
    if (inUse >= limit) return null;
    this.counts.set(key, inUse + 1);
    return once(() => {
      const left = this.held(key) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
    });
  }
}

export interface LeaseTimes {
  /** How long a slot lives in Redis without being renewed: what a dead server's downloads hold at most. */
  leaseMs: number;
  /**
   * The lease a slot is taken with, renewed to `leaseMs` as soon as the take is answered.
   * A take that timed out here but ran in Redis later holds its slot only this long.
   */
  firstLeaseMs: number;
}

export const SLOT_LEASES: LeaseTimes = { leaseMs: 30_000, firstLeaseMs: 5_000 };
/** Renewals per lease: a renewal late by one Redis hiccup still comes in time. */
const RENEWALS_PER_LEASE = 3;

/**
 * Drops the expired holders of KEYS[1], a sorted set of holders scored by when their
 * lease ends, dated by Redis's own clock (servers whose clocks differ agree on them).
 */
const EXPIRE = `
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)`;

/** Takes a slot for holder ARGV[2] if fewer than ARGV[1] are held; one script, so two servers never both take the last. */
const TAKE = `${EXPIRE}
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`;

/**
 * Extends holder ARGV[2]'s lease. A holder that is gone (its lease ran out while its
 * server could not reach Redis, or Redis restarted) comes back only while the address has
 * a free slot: a renewal never takes the address past its limit (ARGV[1]).
 */
const RENEW = `${EXPIRE}
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`;

export interface RedisSlotsOptions {
  redis: RedisConnection;
  /** Name of the slots in the key (`<prefix><name>:<hash of the key>`). */
  name: string;
  /** The slots of this server while Redis cannot be used. */
  fallback: MemorySlots;
  /** A keyed hash: Redis never holds a client's address. */
  hash: (key: string) => string;
  leases?: LeaseTimes;
}

/**
 * Slots every server sees (issue 10): held in Redis, each with a lease its server renews
 * while the download runs, so the slots of a server that dies free themselves within the
 * lease. While Redis cannot be used, slots are taken from the fallback, this server's
 * own (RedisConnection: limits fall back to per-server counting).
 */
export class RedisSlots implements DownloadSlots {
  private readonly leases: LeaseTimes;

  constructor(private readonly options: RedisSlotsOptions) {
    this.leases = options.leases ?? SLOT_LEASES;
  }

  async take(key: string, limit: number): Promise<(() => void) | null> {
    const { redis, fallback } = this.options;
    if (!redis.ready) {
      redis.fellBack(null);
      return fallback.takeNow(key, limit);
    }
    const redisKey = `${redis.prefix}${this.options.name}:${this.options.hash(key)}`;
    const holder = randomUUID();
    let taken: unknown;
    try {
      taken = await redis.client.eval(TAKE, 1, redisKey, limit, holder, this.leases.firstLeaseMs);
    } catch (error) {
      // Counted here this time. If the take ran in Redis after all, its short first lease frees it.
      redis.fellBack(error as Error);
      return fallback.takeNow(key, limit);
    }
    if (taken !== 1) return null;
    const renew = () => {
      redis.client.eval(RENEW, 1, redisKey, limit, holder, this.leases.leaseMs).catch(() => {});
    };
    renew();
    const renewal = setInterval(renew, this.leases.leaseMs / RENEWALS_PER_LEASE).unref();
    return once(() => {
      clearInterval(renewal);
      // A give-back that fails leaves the slot to its lease.
      redis.client.zrem(redisKey, holder).catch(() => {});
    });
  }
}

function once(release: () => void): () => void {
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    release();
  };
}
