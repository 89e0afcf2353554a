import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, type ReadResponse, read } from '../helpers/api-checks.js';
import { TEST_BACKEND } from '../helpers/backend.js';
import { bodyBytes, directLink, eventually, randomPayload, trafficLeft } from '../helpers/downloads.js';
import { freshRedisPrefix, REDIS_TEST_URL, redisSkipReason } from '../helpers/redis.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Two servers of one site (issue 10: same storage, same secret, same Redis) allow together
// exactly what one server would: every limit is counted once for the site, whichever
// server a request lands on. Requests alternate between the servers. Client addresses
// are simulated with X-Forwarded-For behind a trusted proxy, as behind the load balancer.

const skip = await redisSkipReason();
const KiB = 1024;

/**
 * Two servers on one site, with `overrides`; sharing a Redis prefix unless `redis` is
 * false (the limits kept in the metadata store need none).
 */
async function pair(overrides: Parameters<typeof startTestServer>[0], redis = true): Promise<[TestServer, TestServer]> {
  const shared = redis ? { redisUrl: REDIS_TEST_URL, redisPrefix: freshRedisPrefix() } : {};
  const a = await startTestServer({ ...shared, trustProxy: true, ...overrides });
  try {
    return [a, await a.sibling()];
  } catch (error) {
    await a.close();
    throw error;
  }
}

const closeAll = async (servers: TestServer[]) => {
  for (const server of servers.reverse()) await server.close();
};

describe('sign-in attempts over two servers', { skip }, () => {
  const LIMIT = 4;
  let servers: [TestServer, TestServer];
  before(async () => {
    servers = await pair({ loginAttemptsPerMinute: LIMIT });
  });
  after(() => closeAll(servers));

  const signIn = (server: TestServer, login: string, password: string, ip: string) =>
    server.fetch('/apikeys', { method: 'POST', headers: { 'X-Forwarded-For': ip }, body: new URLSearchParams({ login, password }) }).then(read);
  const expectWrong = (response: ReadResponse) => assertAtomError(response, 401, 'errorWrongCredentials');
  const expectLocked = (response: ReadResponse) => assertAtomError(response, 429, 'errorWrongCredentials');

  test(`${LIMIT} failures from one address, spread over both: the next is refused on either`, async () => {
    const [a, b] = servers;
    const { login } = await a.account();
    for (let i = 0; i < LIMIT; i++) expectWrong(await signIn(servers[i % 2]!, login, 'wrong', '10.30.0.1'));
    expectLocked(await signIn(a, login, 'wrong', '10.30.0.1'));
    expectLocked(await signIn(b, login, 'wrong', '10.30.0.1'));
  });

  test(`${LIMIT} failures on one login from new addresses, spread over both: the next new address is refused`, async () => {
    const [a, b] = servers;
    const { login, password } = await a.account();
    for (let i = 0; i < LIMIT; i++) expectWrong(await signIn(servers[i % 2]!, login, 'wrong', `10.30.1.${i + 1}`));
    expectLocked(await signIn(b, login, password, '10.30.1.99'));
    expectLocked(await signIn(a, login, password, '10.30.1.98'));
  });
});

describe('API request rates over two servers', { skip }, () => {
  const RATE = 6;
  let servers: [TestServer, TestServer];
  before(async () => {
    servers = await pair({ apiRatePerKey: RATE, apiRatePerIp: RATE * 4 });
  });
  after(() => closeAll(servers));

  const account = (server: TestServer, ip: string, key?: string) =>
    server.fetch('/account', { headers: { 'X-Forwarded-For': ip, ...(key ? { Authorization: key } : {}) } }).then(read);

  test(`per key: ${RATE} requests spread over both, the next refused on either`, async () => {
    const [a, b] = servers;
    const { key } = await a.account();
    // From a different address each time: only the key's counter can refuse.
    for (let i = 0; i < RATE; i++) assert.equal((await account(servers[i % 2]!, `10.31.0.${i + 1}`, key)).status, 200);
    assertAtomError(await account(a, '10.31.0.50', key), 429, 'errorRateLimited');
    assertAtomError(await account(b, '10.31.0.51', key), 429, 'errorRateLimited');
  });

  test(`per address: ${RATE * 4} requests spread over both, the next refused on either`, async () => {
    const [a, b] = servers;
    for (let i = 0; i < RATE * 4; i++) assertAtomError(await account(servers[i % 2]!, '10.31.1.1'), 401, 'errorPermissionDenied');
    assertAtomError(await account(a, '10.31.1.1'), 429, 'errorRateLimited');
    assertAtomError(await account(b, '10.31.1.1'), 429, 'errorRateLimited');
  });
});

describe('free-download slots over two servers', { skip }, () => {
  const PER_IP = 2;
  let servers: [TestServer, TestServer];
  let url: string;
  before(async () => {
    // Slow enough that a download held open stays open.
    servers = await pair({ freeDownloadsPerIp: PER_IP, freeDownloadSpeed: 64 * KiB });
    const { key } = await servers[0].account();
    const up = await servers[0].upload(key, 'big.bin', randomPayload(1024 * KiB));
    assert.equal(up.response.status, 201, up.body);
    url = `${new URL(up.downloadLink).pathname}?download=1`;
  });
  after(() => closeAll(servers));

  /** A download from `ip` on `server`, its body not read; resolves with the status once the headers are in. */
  function hold(server: TestServer, ip: string): Promise<{ status: number; abort(): void }> {
    return new Promise((resolve, reject) => {
      const request = http.get(`${server.url}${url}`, { agent: false, headers: { 'X-Forwarded-For': ip } }, (response) => {
        response.pause();
        if (response.statusCode !== 200) response.resume();
        resolve({ status: response.statusCode ?? 0, abort: () => request.destroy() });
      });
      request.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    });
  }

  test(`${PER_IP} downloads held, one on each server: a third is refused on either; an abort frees a slot for both`, async () => {
    const [a, b] = servers;
    const ip = '10.32.0.1';
    const first = await hold(a, ip);
    const second = await hold(b, ip);
    assert.deepEqual([first.status, second.status], [200, 200]);
    const third = await hold(a, ip);
    const fourth = await hold(b, ip);
    assert.deepEqual([third.status, fourth.status], [429, 429], 'every slot of the address is taken, on either server');
    // Another address is not affected.
    const other = await hold(b, '10.32.0.2');
    assert.equal(other.status, 200);
    other.abort();

    first.abort();
    await eventually(async () => a.server.services.limits.freeDownloads.inProgress(ip) === 0, 'the aborted download freed its slot');
    const again = await hold(b, ip);
    assert.equal(again.status, 200, 'the slot server A gave back is free on server B');
    assert.equal((await hold(a, ip)).status, 429);
    second.abort();
    again.abort();
  });
});

// The upload volume and premium traffic are kept in the metadata store: exact across
// servers with or without Redis. On SQLite the two servers of this file would share one
// process, and one thread: a write transaction of one waiting on the other's lock blocks
// the thread both need (better-sqlite3 waits synchronously), which two processes never do
// (test/contract/metadata-store-harnesses.ts says how SQLite's side is covered).
const metadataSkip = TEST_BACKEND === 'sqlite-local' && 'two servers in one process cannot share one SQLite file: run with FILEHAVEN_TEST_BACKEND=postgres-s3';

describe('upload volume over two servers', { skip: metadataSkip }, () => {
  const SIZE = 100 * KiB;
  const FREE = 10 * SIZE + SIZE / 2;
  let servers: [TestServer, TestServer];
  before(async () => {
    servers = await pair({ uploadVolumeFree: FREE }, false);
  });
  after(() => closeAll(servers));

  test('parallel uploads spread over both never pass the limit; filled up one by one, exactly what one server allows', async () => {
    const [a] = servers;
    const { key, account } = await a.account();
    const burst = await Promise.all(Array.from({ length: 16 }, (_, i) => servers[i % 2]!.upload(key, `p${i}.bin`, randomPayload(SIZE))));
    const stored = burst.filter((up) => up.response.status === 201).length;
    for (const up of burst)
      if (up.response.status !== 201) assertAtomError({ status: up.response.status, headers: up.response.headers, body: up.body }, 429, 'errorUploadLimit');
    assert.ok(stored >= 1 && stored * SIZE <= FREE, `${stored} uploads of ${SIZE} bytes stored against a limit of ${FREE}`);
    // What is left is taken one by one, alternating: the site ends at floor(limit / size)
    // files, as one server would, and the next is refused on either server.
    let total = stored;
    for (let i = 0; total < Math.floor(FREE / SIZE); i++) {
      const up = await servers[i % 2]!.upload(key, `s${i}.bin`, randomPayload(SIZE));
      assert.equal(up.response.status, 201, `upload ${total + 1} fits: ${up.body}`);
      total++;
    }
    for (const server of servers) {
      const up = await server.upload(key, 'over.bin', randomPayload(SIZE));
      assertAtomError({ status: up.response.status, headers: up.response.headers, body: up.body }, 429, 'errorUploadLimit');
    }
    const logged = await a.server.services.store.uploadLog.windowSum(account.id, 0);
    assert.equal(logged, total * SIZE);
  });
});

describe('premium traffic over two servers', { skip: metadataSkip }, () => {
  const SIZE = 256 * KiB;
  let servers: [TestServer, TestServer];
  before(async () => {
    servers = await pair({}, false);
  });
  after(() => closeAll(servers));

  test('parallel direct downloads spread over both never spend more traffic than there is', async () => {
    const [a, b] = servers;
    const owner = await a.account({ premiumDays: 30, trafficBytes: 2 * SIZE + SIZE / 2 });
    const up = await a.upload(owner.key, 'big.bin', randomPayload(SIZE));
    assert.equal(up.response.status, 201, up.body);
    const link = new URL(await directLink(a, owner.key, up.id));
    const urls = [a, b].map((server) => `${server.url}${link.pathname}${link.search}`);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const response = await fetch(urls[i % 2]!, { headers: { Authorization: owner.key } });
        return { status: response.status, bytes: (await bodyBytes(response)).length };
      }),
    );
    const served = outcomes.filter((o) => o.status === 200);
    for (const o of served) assert.equal(o.bytes, SIZE, 'a download that starts is served whole');
    for (const o of outcomes) assert.ok(o.status === 200 || o.status === 403, `status ${o.status}`);
    assert.equal(served.length, 2, `${served.length} of 8 downloads of ${SIZE} bytes served on ${2.5 * SIZE} bytes of traffic`);
    assert.equal(await trafficLeft(a, owner.key), SIZE / 2);
    assert.equal(await trafficLeft(b, owner.key), SIZE / 2);
  });
});
