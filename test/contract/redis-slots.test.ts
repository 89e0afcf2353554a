import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { type LeaseTimes, MemorySlots, RedisSlots } from '../../src/limits/download-slots.js';
import { type FallbackReason, RedisConnection } from '../../src/limits/redis-connection.js';
import { eventually } from '../helpers/downloads.js';
import { freshRedisPrefix, PrivateRedis, privateRedisSkipReason } from '../helpers/redis.js';

// Free-download slots in Redis (src/limits/download-slots.ts) as two servers see them,
// against a Redis of the test's own: the limit holds across servers, a dead server's slots
// free themselves when their lease runs out, a live download's renewals keep its slot and
// never take an address past its limit, and whatever Redis does wrong, a take falls back
// to this server's own slots and says so. Leases are short here; the server's are 30 s.

const LEASES: LeaseTimes = { leaseMs: 900, firstLeaseMs: 300 };
const skip = privateRedisSkipReason();

describe('RedisSlots', { skip, timeout: 60_000 }, () => {
  let redis: PrivateRedis;
  let raw: Redis;
  const warnings: string[] = [];
  const fallbacks: FallbackReason[] = [];
  const opened: RedisConnection[] = [];

  before(async () => {
    redis = await PrivateRedis.start();
    raw = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });
  after(async () => {
    redis?.resume();
    await Promise.all(opened.map((connection) => connection.close()));
    raw?.disconnect();
    await redis?.kill();
  });

  /** A server's slots: its own connection, the test's prefix, keys unhashed so the test can read them. */
  async function server(prefix: string): Promise<{ slots: RedisSlots; connection: RedisConnection; fallback: MemorySlots }> {
    const connection = await RedisConnection.open({
      url: redis.url,
      prefix,
      warn: (message) => warnings.push(message),
      onFallback: (reason) => fallbacks.push(reason),
    });
    await connection.connect();
    opened.push(connection);
    const fallback = new MemorySlots();
    return { slots: new RedisSlots({ redis: connection, name: 'slots', fallback, hash: (key) => key, leases: LEASES }), connection, fallback };
  }
  const holders = (prefix: string, key: string) => raw.zcard(`${prefix}slots:${key}`);

  test('two servers share the limit; a slot given back on one is free on the other', async () => {
    const prefix = freshRedisPrefix();
    const [a, b] = [await server(prefix), await server(prefix)];
    const first = await a.slots.take('10.0.0.1', 2);
    const second = await b.slots.take('10.0.0.1', 2);
    assert.ok(first && second);
    assert.equal(await a.slots.take('10.0.0.1', 2), null);
    assert.equal(await b.slots.take('10.0.0.1', 2), null);
    assert.ok(await b.slots.take('10.0.0.2', 2), 'another address has its own slots');
    first();
    await eventually(async () => (await holders(prefix, '10.0.0.1')) === 1, 'the give-back reached Redis');
    const third = await b.slots.take('10.0.0.1', 2);
    assert.ok(third, "server A's slot is free on server B");
    second();
    third();
  });

  test("a dead server's slots free themselves when their lease runs out; a live one's renewals keep its slot", async () => {
    const prefix = freshRedisPrefix();
    const [dead, live, other] = [await server(prefix), await server(prefix), await server(prefix)];
    assert.ok(await dead.slots.take('10.0.1.1', 2));
    const kept = await live.slots.take('10.0.1.1', 2);
    assert.ok(kept);
    // The dead server's process is gone: no give-back, no renewal.
    await dead.connection.close();
    assert.equal(await other.slots.take('10.0.1.1', 2), null);
    await sleep(LEASES.leaseMs * 2);
    // The live download renewed its slot across two leases; the dead one's ran out.
    assert.equal(await holders(prefix, '10.0.1.1'), 1);
    const freed = await other.slots.take('10.0.1.1', 2);
    assert.ok(freed, "the dead server's slot is free");
    assert.equal(await other.slots.take('10.0.1.1', 2), null, 'the live one is still held');
    kept();
    freed();
  });

  test('a renewal never takes an address past its limit', async () => {
    const prefix = freshRedisPrefix();
    const [a, b] = [await server(prefix), await server(prefix)];
    const held = await a.slots.take('10.0.2.1', 1);
    assert.ok(held);
    // As if server A lost Redis for longer than the lease: its holder ran out, and server B
    // gave the address's one slot to another download.
    await raw.del(`${prefix}slots:10.0.2.1`);
    const taken = await b.slots.take('10.0.2.1', 1);
    assert.ok(taken);
    // A's renewals go on; they must not put its holder back beside B's.
    await sleep(LEASES.leaseMs);
    assert.equal(await holders(prefix, '10.0.2.1'), 1);
    held();
    taken();
  });

  test("Redis refusing the command (an ACL): takes fall back to the server's own slots, and the operator is told once", async () => {
    const prefix = freshRedisPrefix();
    const a = await server(prefix);
    warnings.length = 0;
    fallbacks.length = 0;
    // (Out of memory would not do: the take script deletes expired holders first, and Redis
    // lets a script that has written go on writing.)
    await raw.call('ACL', 'SETUSER', 'default', '-eval');
    try {
      const first = await a.slots.take('10.0.3.1', 1);
      assert.ok(first, 'a slot from the fallback');
      assert.equal(await a.slots.take('10.0.3.1', 1), null, 'the fallback counts: still a limit');
      first();
      assert.ok(await a.slots.take('10.0.3.1', 1));
    } finally {
      await raw.call('ACL', 'SETUSER', 'default', '+@all');
    }
    assert.deepEqual(fallbacks, ['error', 'error', 'error']);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /refused a limit's command \(NOPERM .*\): this server counts that limit alone meanwhile/);
  });

  test('a take that times out falls back, and if Redis runs it later, its short first lease frees it', async () => {
    const prefix = freshRedisPrefix();
    const a = await server(prefix);
    fallbacks.length = 0;
    redis.pause();
    let released: (() => void) | null;
    try {
      released = await a.slots.take('10.0.4.1', 1);
    } finally {
      redis.resume();
    }
    assert.ok(released, 'a slot from the fallback');
    assert.deepEqual(fallbacks, ['error']);
    released();
    await eventually(async () => (await holders(prefix, '10.0.4.1')) === 0, 'no slot is left behind in Redis', 400);
  });
});
