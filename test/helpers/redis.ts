import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { freePort } from './cluster.js';
import { skipOrFail } from './postgres-test-schema.js';

/** The Redis the tests share: FILEHAVEN_TEST_REDIS_URL, or the machine's local server. */
export const REDIS_TEST_URL = process.env.FILEHAVEN_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test (or site) uses, for one test's servers (--redis-prefix). */
export const freshRedisPrefix = () => `test-${randomUUID().slice(0, 8)}:`;

let reachable: Promise<string | null> | undefined;

/**
 * Why tests of the shared limits cannot run here, or false. With CI=true a missing Redis is
 * a failure, not a skip: CI must run them.
 */
export async function redisSkipReason(): Promise<string | false> {
  reachable ??= redisProblem(REDIS_TEST_URL);
  const problem = await reachable;
  if (problem === null) return false;
  return skipOrFail(`Redis tests skipped: no server at ${REDIS_TEST_URL} (${problem}); set FILEHAVEN_TEST_REDIS_URL`);
}

/** Why the Redis at `url` (with its credentials) does not answer a PING, or null when it does. */
export async function redisProblem(url: string, connectTimeoutMs = 2000): Promise<string | null> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: connectTimeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    client.disconnect();
  }
}

/** Why a test cannot start a Redis of its own (no redis-server on the PATH), or false. */
export function privateRedisSkipReason(): string | false {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (found.status === 0) return false;
  return skipOrFail('Redis outage tests skipped: no redis-server on the PATH (Debian package redis-server)');
}

/**
 * A Redis server of one test's own, on a free port, that the test may kill, pause and
 * start again (on the same port) to see what the servers using it do.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.restart();
    return redis;
  }

  /** Starts the server (again) and waits until it answers. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('already running');
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.child = child;
    for (let attempt = 0; ; attempt++) {
      const problem = await redisProblem(this.url);
      if (problem === null) return;
      if (attempt >= 100 || child.exitCode !== null) throw new Error(`redis-server on port ${this.port} did not start: ${problem}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** SIGKILL: every connection drops at once, and with it everything the server held. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    }
  }

  /** SIGSTOP: connections stay open and nothing answers (a hung server, a network that drops packets). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }
}
