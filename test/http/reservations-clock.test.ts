import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServices } from '../../src/composition.js';
import { enclosureHref } from '../helpers/crash-http.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const MiB = 1024 * 1024;
const HOUR_MS = 3_600_000;

// Issue 14, "a clock that jumps": leases are judged by the clock of whoever settles. A
// server's own gc never settles its own live transfers, however its clock jumps; another
// server whose clock runs hours ahead does settle them (their lease looks long gone), and
// the holder, finding its row settled, charges at its end what it sent after its last
// checkpoint. Either way the account pays exactly for the bytes sent, once.
describe('reservations when a clock jumps', { timeout: 60_000 }, () => {
  let t: TestServer;
  const clock = new TestClock(Date.now());
  before(async () => {
    t = await startTestServer({ gcIntervalMs: 0 }, clock);
  });
  after(() => t?.close());

  test('a download outlives its own server jumping ahead and another server settling its row', async () => {
    const FILE = 24 * MiB;
    const TRAFFIC = 100 * MiB;
    const { key } = await t.account({ premiumDays: 30, trafficBytes: TRAFFIC });
    const uploaded = await t.upload(key, 'big.bin', randomBytes(FILE));
    assert.equal(uploaded.response.status, 201, uploaded.body);
    const link = await t.fetch(`/files/${uploaded.id};DirectLink`, { headers: { Authorization: key } });
    const href = enclosureHref(await link.text());
    assert.ok(href);

    // A download that reads 9 MiB and then waits.
    let received = 0;
    let paused: http.IncomingMessage | undefined;
    const done = new Promise<number>((resolve, reject) => {
      http
        .get(href, { headers: { Authorization: key } }, (res) => {
          assert.equal(res.statusCode, 200);
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received >= 9 * MiB && !paused) {
              paused = res;
              res.pause();
            }
          });
          res.on('end', () => resolve(received));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    const until = Date.now() + 20_000;
    while (!paused && Date.now() < until) await sleep(5);
    assert.ok(paused, 'the download got going');
    const { store } = t.server.services;
    const [row] = await store.reservations.list(10);
    assert.ok(row && row.kind === 'traffic' && row.planned === FILE, JSON.stringify(row));

    // The server's own clock jumps two hours: its gc leaves its own transfer alone.
    clock.advance(2 * HOUR_MS);
    const own = await t.server.services.gc.run();
    assert.equal(own.reservationsSettled, 0);
    assert.equal((await store.reservations.list(10)).length, 1);

    // Another server, its clock a further two hours ahead, finds the lease expired.
    const later = new TestClock(clock.now + 2 * HOUR_MS);
    const other = await openServices({ ...t.server.services.config, serverName: 'other-server' }, { clock: later.fn, log: () => {} });
    try {
      const settled = await other.reservations.settleAbandoned({ ofThisServer: false });
      assert.equal(settled.settled, 1);
      // At its last checkpoint: at least 9 MiB had been sent, some of it maybe not yet recorded.
      assert.ok(settled.trafficRefunded > 0 && settled.trafficRefunded <= FILE - row.settled, String(settled.trafficRefunded));
      assert.deepEqual(await store.reservations.list(10), []);
    } finally {
      await other.close();
    }

    paused!.resume();
    assert.equal(await done, FILE);
    // The holder settles when its response closes, just after the client has the last byte.
    const expected = TRAFFIC - FILE;
    let left = -1;
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const account = await t.fetch('/account', { headers: { Authorization: key } });
      left = Number(/<ed:premium_trafficLeft>(\d+)</.exec(await account.text())?.[1]);
      if (left === expected) break;
      await sleep(20);
    }
    assert.equal(left, expected, 'charged the whole file, once');
  });
});
