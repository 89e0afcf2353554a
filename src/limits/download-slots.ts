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
  private readonly held = new Map<string, number>();

  async take(key: string, limit: number): Promise<(() => void) | null> {
    return this.takeNow(key, limit);
  }

  takeNow(key: string, limit: number): (() => void) | null {
    const inUse = this.held.get(key) ?? 0;
    if (inUse >= limit) return null;
    this.held.set(key, inUse + 1);
    return once(() => {
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    });
  }
}

/** How long a slot lives in Redis without being renewed: what a crashed server's downloads hold at most. */
export const SLOT_LEASE_MS = 30_000;
/** Renewals per lease: a renewal late by one Redis hiccup still comes in time. */
const RENEWALS_PER_LEASE = 3;

/**
 * Takes a slot: the slots of a key are a sorted set of holders scored by when their lease
 * ends. Run as one script, so two servers can never both take the last slot. Redis's own
 * clock dates the leases, so servers whose clocks differ agree on them.
 */
const TAKE = `
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

/** Extends a holder's lease; puts it back if a Redis restart lost it, so it still counts. */
const RENEW = `
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/**
 * Slots every server sees (issue 10): held in Redis, each with a lease its server renews
 * while the download runs, so the slots of a server that dies free themselves within
 * SLOT_LEASE_MS. While Redis is unreachable, slots are taken from `fallback`, this
 * server's own (RedisConnection: limits fall back to per-server counting).
 */
export class RedisSlots implements DownloadSlots {
  constructor(
    private readonly redis: RedisConnection,
    private readonly name: string,
    private readonly fallback: MemorySlots,
  ) {}

  async take(key: string, limit: number): Promise<(() => void) | null> {
    if (!this.redis.ready) return this.fallback.takeNow(key, limit);
    const redisKey = `${this.redis.prefix}${this.name}:${key}`;
    const holder = randomUUID();
    let taken: unknown;
    try {
      taken = await this.redis.client.eval(TAKE, 1, redisKey, limit, holder, SLOT_LEASE_MS);
    } catch {
      // Redis failed under this request: count it here (and the connection tells the operator).
      return this.fallback.takeNow(key, limit);
    }
    if (taken !== 1) return null;
    const renewal = setInterval(() => {
      this.redis.client.eval(RENEW, 1, redisKey, holder, SLOT_LEASE_MS).catch(() => {});
    }, SLOT_LEASE_MS / RENEWALS_PER_LEASE).unref();
    return once(() => {
      clearInterval(renewal);
      // A give-back that fails leaves the slot to its lease.
      this.redis.client.zrem(redisKey, holder).catch(() => {});
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
