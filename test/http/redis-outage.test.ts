import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { assertAtomError, read } from '../helpers/api-checks.js';
import { freshBackend, settingsEnv } from '../helpers/backend.js';
import { eventually, randomPayload } from '../helpers/downloads.js';
import { freshRedisPrefix, PrivateRedis, privateRedisSkipReason } from '../helpers/redis.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';
import { ServerProcess } from '../helpers/server-process.js';

// When the Redis of the shared limits goes away (issue 10), servers keep answering every
// request and the limits fall back to each server's own counters: neither open (no limit)
// nor closed (everything refused). When it is back, the limits are shared again. Each
// test runs a Redis of its own that it kills, pauses and starts again.

const skip = privateRedisSkipReason();
const LIMIT = 3;

describe('Redis going away under two servers', { skip, timeout: 120_000 }, () => {
  let redis: PrivateRedis;
  let a: TestServer;
  let b: TestServer;
  let owner: TestAccount;
  let download: string;
  before(async () => {
    redis = await PrivateRedis.start();
    a = await startTestServer({ redisUrl: redis.url, redisPrefix: freshRedisPrefix(), loginAttemptsPerMinute: LIMIT, trustProxy: true });
    b = await a.sibling();
    owner = await a.account();
    const up = await a.upload(owner.key, 'a.bin', randomPayload(4096));
    assert.equal(up.response.status, 201, up.body);
    download = `${new URL(up.downloadLink).pathname}?download=1`;
  });
  after(async () => {
    redis?.resume();
    await b?.close();
    await a?.close();
    await redis?.kill();
  });

  const signIn = (server: TestServer, login: string, ip: string) =>
    server.fetch('/apikeys', { method: 'POST', headers: { 'X-Forwarded-For': ip }, body: new URLSearchParams({ login, password: 'wrong' }) }).then(read);
  // Each check guesses at a login of its own: a login's counter (in memory or in Redis)
  // outlives the check that filled it by its minute.
  const freshLogin = async () => (await a.account()).login;
  const connected = (server: TestServer) => server.server.services.limits.redis!.ready;
  const metricsOf = async (server: TestServer) => (await server.fetch('/metrics')).text();

  /** Every kind of request is answered as without Redis trouble, on both servers. */
  async function expectServing(): Promise<void> {
    for (const server of [a, b]) {
      assert.equal((await server.fetch('/account', { headers: { Authorization: owner.key } })).status, 200);
      const file = await server.fetch(download, { headers: { 'X-Forwarded-For': '10.40.9.9' } });
      assert.equal(file.status, 200);
      assert.equal((await file.arrayBuffer()).byteLength, 4096);
    }
  }

  /** Sign-in failures from `ip` alternate between the servers; the next is refused on either: the limit is shared. */
  async function expectShared(ip: string): Promise<void> {
    const login = await freshLogin();
    for (let i = 0; i < LIMIT; i++) assertAtomError(await signIn(i % 2 ? b : a, login, ip), 401, 'errorWrongCredentials');
    assertAtomError(await signIn(a, login, ip), 429, 'errorWrongCredentials');
    assertAtomError(await signIn(b, login, ip), 429, 'errorWrongCredentials');
  }

  /** Each server allows LIMIT failures from `ip` on its own, then refuses: per server, still a limit. */
  async function expectPerServer(ip: string): Promise<void> {
    const login = await freshLogin();
    for (const server of [a, b]) {
      for (let i = 0; i < LIMIT; i++) assertAtomError(await signIn(server, login, ip), 401, 'errorWrongCredentials');
      assertAtomError(await signIn(server, login, ip), 429, 'errorWrongCredentials');
    }
  }

  test('killed: every request is answered, limits count per server; started again: shared again', async () => {
    await expectShared('10.40.0.1');
    assert.match(await metricsOf(a), /^filehaven_redis_connected 1$/m);
    await redis.kill();
    await eventually(async () => !connected(a) && !connected(b), 'both servers saw the connection go');
    assert.match(await metricsOf(a), /^filehaven_redis_connected 0$/m, 'operators see the fallback in /metrics');
    await expectServing();
    await expectPerServer('10.40.0.2');
    await redis.restart();
    await eventually(async () => connected(a) && connected(b), 'both servers connected again', 400);
    await expectServing();
    await expectShared('10.40.0.3');
  });

  test('out of memory (commands refused on a live connection): limits count per server, and /metrics counts each fallback', async () => {
    const fallbacks = async () => Number(/^filehaven_limit_fallbacks_total\{reason="error"\} (\d+)$/m.exec(await metricsOf(a))?.[1]);
    const before = await fallbacks();
    const raw = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    await raw.config('SET', 'maxmemory', '1');
    try {
      assert.ok(connected(a) && connected(b), 'the connections stay up');
      await expectServing();
      await expectPerServer('10.40.2.1');
    } finally {
      await raw.config('SET', 'maxmemory', '0');
      raw.disconnect();
    }
    assert.ok((await fallbacks()) > before, 'the fallbacks show in /metrics');
    await expectShared('10.40.2.2');
  });

  test('stops answering (SIGSTOP): every request is still answered, limits count per server until it answers again', async () => {
    redis.pause();
    // The first requests wait for Redis up to its command timeout; the health check then
    // drops the connection and the limits stop asking.
    await expectServing();
    await eventually(async () => !connected(a) && !connected(b), 'both servers gave up on the silent connection', 400);
    await expectPerServer('10.40.1.1');
    redis.resume();
    await eventually(async () => connected(a) && connected(b), 'both servers connected again', 400);
    await expectShared('10.40.1.2');
  });
});

test('a server started while its Redis is down starts, says so, and shares limits once Redis is up', { skip, timeout: 90_000 }, async () => {
  const redis = await PrivateRedis.start();
  await redis.kill();
  const backend = await freshBackend();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-redis-down-'));
  let server: ServerProcess | undefined;
  try {
    server = await ServerProcess.start(dataDir, ['--log-level', 'warn'], 60_000, { ...settingsEnv(backend.config), FILEHAVEN_REDIS_URL: redis.url });
    assert.match(
      server.log,
      new RegExp(`Redis at redis://127\\.0\\.0\\.1:${redis.port} is unreachable \\(.+\\): each server counts its own limits until it is back`),
    );
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200, 'a fleet whose Redis is down keeps serving');
    const signIn = await fetch(`${server.url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'admin', password: 'wrong' }) }).then(read);
    assertAtomError(signIn, 401, 'errorWrongCredentials');
    await redis.restart();
    await eventually(async () => /is back: limits are shared between servers again/.test(server!.log), 'the server connected once Redis was up', 400);
  } finally {
    await server?.stop();
    await redis.kill();
    await backend.remove();
    await rm(dataDir, { recursive: true, force: true });
  }
});
