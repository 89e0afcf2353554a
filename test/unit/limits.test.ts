import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { UploadLogRepository } from '../../src/db/repositories/repositories.js';
import { addressKey } from '../../src/limits/client-address.js';
import { HEAD_UPLOADS, InMemoryUploadQuota, UPLOAD_WINDOW_MS } from '../../src/limits/upload-quota.js';

/** An upload_log in memory, counting how often it is read (one SUM per read) and how many rows it hands out. */
function memoryLog(): UploadLogRepository & { rows: { accountId: number; bytes: number; at: number }[]; reads: number; rowsRead: number } {
  const inWindow = (accountId: number, since: number) => log.rows.filter((r) => r.accountId === accountId && r.at >= since);
  const log = {
    rows: [] as { accountId: number; bytes: number; at: number }[],
    reads: 0,
    rowsRead: 0,
    async record(accountId: number, bytes: number, at: number) {
      log.rows.push({ accountId, bytes, at });
    },
    async windowSum(accountId: number, since: number) {
      log.reads += 1;
      return inWindow(accountId, since).reduce((sum, r) => sum + r.bytes, 0);
    },
    async oldest(accountId: number, since: number, limit: number) {
      // Stable sort: equal times keep the order of insertion, like the row id.
      const rows = inWindow(accountId, since)
        .sort((a, b) => a.at - b.at)
        .slice(0, limit);
      log.rowsRead += rows.length;
      return rows.map(({ bytes, at }) => ({ bytes, at }));
    },
    async prune(before: number) {
      const kept = log.rows.filter((r) => r.at >= before);
      const removed = log.rows.length - kept.length;
      log.rows = kept;
      return removed;
    },
  };
  return log;
}

describe('InMemoryUploadQuota', () => {
  test('stored plus reserved volume never passes the limit; refusals reserve nothing', async () => {
    let now = 1_000_000;
    const log = memoryLog();
    log.rows.push({ accountId: 1, bytes: 40, at: now - 1000 });
    const quota = new InMemoryUploadQuota({ log, clock: () => now });
    const a = await quota.open(1, 100);
    const b = await quota.open(1, 100);
    assert.deepEqual(await a.reserve(30), { granted: true });
    // 40 stored + 30 reserved: 30 left.
    const refused = await b.reserve(31);
    assert.equal(refused.granted, false);
    assert.deepEqual(await b.reserve(30), { granted: true });
    // Growing to what is already held is free.
    assert.deepEqual(await a.reserve(10), { granted: true });
    assert.equal((await a.reserve(31)).granted, false);
    // a is dropped: its 30 bytes are free again.
    await a.release();
    assert.deepEqual(await b.reserve(60), { granted: true });
  });

  test('Retry-After: when enough stored volume leaves the window, oldest first; a whole window otherwise', async () => {
    const now = 10 * UPLOAD_WINDOW_MS;
    const log = memoryLog();
    log.rows.push({ accountId: 1, bytes: 50, at: now - 5000 }, { accountId: 1, bytes: 30, at: now - 2000 });
    const quota = new InMemoryUploadQuota({ log, clock: () => now });
    const ticket = await quota.open(1, 100);
    // 20 left: 21 needs 1 byte freed → the first row, 5 s into the window.
    assert.deepEqual(await ticket.reserve(21), { granted: false, retryAfterMs: UPLOAD_WINDOW_MS - 5000 });
    // 71 needs 51 freed → both rows.
    assert.deepEqual(await ticket.reserve(71), { granted: false, retryAfterMs: UPLOAD_WINDOW_MS - 2000 });
    // More than the stored rows can ever free.
    assert.deepEqual(await ticket.reserve(101), { granted: false, retryAfterMs: UPLOAD_WINDOW_MS });
  });

  test('stored uploads leave the window as the clock moves, while uploads are in flight', async () => {
    let now = 5 * UPLOAD_WINDOW_MS;
    const log = memoryLog();
    log.rows.push({ accountId: 7, bytes: 90, at: now });
    const quota = new InMemoryUploadQuota({ log, clock: () => now });
    const ticket = await quota.open(7, 100);
    assert.equal((await ticket.reserve(20)).granted, false);
    now += UPLOAD_WINDOW_MS + 1;
    assert.deepEqual(await ticket.reserve(100), { granted: true });
  });

  test('a commit moves the bytes to the stored volume; the account is read once per burst and again after it', async () => {
    const now = 3 * UPLOAD_WINDOW_MS;
    const log = memoryLog();
    const quota = new InMemoryUploadQuota({ log, clock: () => now });
    const [a, b] = await Promise.all([quota.open(2, 100), quota.open(2, 100)]);
    assert.equal(log.reads, 1, 'parallel opens share one read');
    assert.deepEqual(await a!.reserve(60), { granted: true });
    await log.record(2, 60, now);
    await a!.commit(60, now);
    await a!.release(); // a no-op after commit
    assert.equal((await b!.reserve(41)).granted, false);
    assert.deepEqual(await b!.reserve(40), { granted: true });
    await b!.release();
    await b!.release();
    // Nobody in flight: the entry is gone, the next upload reads upload_log again.
    const c = await quota.open(2, 100);
    assert.equal(log.reads, 2);
    assert.equal((await c.reserve(41)).granted, false);
    assert.deepEqual(await c.reserve(40), { granted: true });
  });

  test('a load is one SUM and the oldest rows, however many uploads the window holds', async () => {
    const now = 4 * UPLOAD_WINDOW_MS;
    const log = memoryLog();
    for (let i = 0; i < 20_000; i++) log.rows.push({ accountId: 3, bytes: 1, at: now - 20_000 + i });
    const quota = new InMemoryUploadQuota({ log, clock: () => now });
    const ticket = await quota.open(3, 25_000);
    assert.equal(log.reads, 1);
    assert.ok(log.rowsRead <= HEAD_UPLOADS + 1, `read ${log.rowsRead} rows`);
    assert.deepEqual(await ticket.reserve(5000), { granted: true });
    // 20,000 stored + 5,000 held: 1 more byte waits for the oldest row to leave the window.
    assert.deepEqual(await ticket.reserve(5001), { granted: false, retryAfterMs: UPLOAD_WINDOW_MS - 20_000 });
    // 2,000 more bytes need 2,000 rows to leave: the head holds only the oldest 1,000, so the
    // answer is when the last of those leaves (a lower bound; the retry gets the next one).
    assert.deepEqual(await ticket.reserve(7000), { granted: false, retryAfterMs: UPLOAD_WINDOW_MS - 20_000 + HEAD_UPLOADS - 1 });
  });

  test('a burst that outlives the rows in memory reloads the window and counts what is still in it', async () => {
    let now = 4 * UPLOAD_WINDOW_MS;
    const log = memoryLog();
    // 2,500 uploads of 1 byte, one per ms, the newest just now.
    for (let i = 0; i < 2500; i++) log.rows.push({ accountId: 5, bytes: 1, at: now - 2499 + i });
    const quota = new InMemoryUploadQuota({ log, clock: () => now });
    const ticket = await quota.open(5, 2500);
    assert.equal((await ticket.reserve(1)).granted, false);
    // 1,500 of them leave the window: more than the head held.
    now += UPLOAD_WINDOW_MS - 2499 + 1500;
    assert.deepEqual(await ticket.reserve(1500), { granted: true });
    assert.equal(log.reads, 2, 'reloaded once');
    assert.equal((await ticket.reserve(1501)).granted, false);
    // Uploads stored during the burst count, and leave the window in their turn.
    const other = await quota.open(5, 2500);
    await log.record(5, 1500, now);
    await ticket.commit(1500, now);
    assert.equal((await other.reserve(1)).granted, false);
    now += UPLOAD_WINDOW_MS + 1;
    assert.deepEqual(await other.reserve(2500), { granted: true });
    assert.equal(log.reads, 2, 'the same burst all along');
  });

  test('an upload stored while the window is being reloaded is counted', async () => {
    let now = 4 * UPLOAD_WINDOW_MS;
    const log = memoryLog();
    for (let i = 0; i < 2 * HEAD_UPLOADS; i++) log.rows.push({ accountId: 6, bytes: 1, at: now - 2 * HEAD_UPLOADS + i });
    const quota = new InMemoryUploadQuota({ log, clock: () => now });
    const a = await quota.open(6, 10_000);
    const b = await quota.open(6, 10_000);
    assert.deepEqual(await b.reserve(3000), { granted: true });
    now += UPLOAD_WINDOW_MS - HEAD_UPLOADS; // the head (the oldest 1,000) has left the window
    // The reload's SUM reads its snapshot, then b's upload is stored before the answer
    // arrives (PostgreSQL runs them side by side): b's bytes must come from its commit.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const windowSum = log.windowSum.bind(log);
    log.windowSum = async (accountId, since) => {
      const snapshot = await windowSum(accountId, since);
      await gate;
      return snapshot;
    };
    const reserving = a.reserve(1);
    await new Promise((resolve) => setImmediate(resolve));
    await log.record(6, 3000, now);
    await b.commit(3000, now);
    release();
    assert.deepEqual(await reserving, { granted: true });
    // 1,000 old rows + 3,000 stored + 1 held: 5,999 left, never more.
    assert.equal((await a.reserve(6001)).granted, false);
    assert.deepEqual(await a.reserve(6000), { granted: true });
  });

  test('accounts are counted apart', async () => {
    const quota = new InMemoryUploadQuota({ log: memoryLog(), clock: () => 0 });
    const a = await quota.open(1, 100);
    const b = await quota.open(2, 100);
    assert.deepEqual(await a.reserve(100), { granted: true });
    assert.deepEqual(await b.reserve(100), { granted: true });
  });
});

describe('addressKey', () => {
  test('IPv4 addresses count one by one, IPv4-mapped IPv6 as IPv4', () => {
    assert.equal(addressKey('203.0.113.7'), '203.0.113.7');
    assert.equal(addressKey('::ffff:203.0.113.7'), '203.0.113.7');
  });

  test('IPv6 addresses count by /64, however they are written', () => {
    const key = addressKey('2001:db8:0:1::1');
    assert.equal(key, '2001:db8:0:1::/64');
    assert.equal(addressKey('2001:0DB8:0000:0001:ffff:ffff:ffff:ffff'), key);
    assert.equal(addressKey('2001:db8::1:0:0:0:5'), key);
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
    assert.notEqual(addressKey('2001:db8:0:2::1'), key);
  });
});
