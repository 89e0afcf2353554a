import type { Redis } from 'ioredis';
import { redactUrl } from '../config/redact-url.js';
import type { FallbackReason } from '../observability/metrics.js';

/** Longest a limit waits on Redis before it counts on its own (the request goes on either way). */
const COMMAND_TIMEOUT_MS = 1_000;
/** How often a lost connection is tried again, at most. */
const RECONNECT_MAX_MS = 2_000;
/** How often the connection is checked, so a Redis that stopped answering is noticed without waiting on a request. */
const HEALTH_CHECK_MS = 2_000;
/** One error of a kind is told at most this often: a Redis out of memory fails every command. */
const ERROR_REPORT_MS = 60_000;

export type { FallbackReason };

export interface RedisConnectionOptions {
  url: string;
  /** Prefix of every key this site writes (--redis-prefix). */
  prefix: string;
  /** Where the connection's comings and goings are told to the operator. */
  warn: (message: string) => void;
  /** Told of every count a limit made in this process instead of Redis (metrics). */
  onFallback?: (reason: FallbackReason) => void;
}

/**
 * The Redis connection the shared limits count on (issue 10), and the rule for when it
 * goes away: **limits fall back to each server's own counters**, they neither fail open
 * (no limit at all) nor closed (every request refused). A request never waits on a Redis
 * that is not connected: commands fail at once (no offline queue) and the limits count in
 * memory until the connection is back. Lost and regained connections are each told once.
 *
 * Nothing connects until the first limit asks (or `connect()`), so CLI commands, which
 * build the same services, never open a connection they do not use.
 */
export class RedisConnection {
  private lost = false;
  private healthTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** When each error message was last told. */
  private readonly told = new Map<string, number>();

  private constructor(
    readonly client: Redis,
    readonly prefix: string,
    private readonly options: RedisConnectionOptions,
  ) {
    client.on('ready', () => {
      if (this.lost) options.warn(`Redis at ${redactUrl(options.url)} is back: limits are shared between servers again`);
      this.lost = false;
    });
    // ioredis reports every failed attempt; an 'error' nobody listens to would end the process.
    client.on('error', (error: Error) => this.markLost(error.message));
    client.on('close', () => this.markLost('connection closed'));
  }

  /** A connection to `url`; ioredis is loaded only by a server that has one (idle memory). */
  static async open(options: RedisConnectionOptions): Promise<RedisConnection> {
    const { Redis } = await import('ioredis');
    const client = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2 * COMMAND_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(attempt * 200, RECONNECT_MAX_MS),
      // The limits' scripts are loaded again after every reconnect (EVALSHA falls back to EVAL).
      enableAutoPipelining: false,
    });
    return new RedisConnection(client, options.prefix, options);
  }

  /** Whether commands can go to Redis now; when not, limits count in this process. */
  get ready(): boolean {
    return this.client.status === 'ready';
  }

  /**
   * Connects (a server's start) and checks the connection from then on. An unreachable
   * Redis is told and the server starts anyway, counting on its own until Redis answers:
   * a fleet whose Redis is down keeps serving.
   */
  async connect(): Promise<void> {
    if (this.client.status === 'wait') {
      await this.client.connect().catch((error: Error) => this.markLost(error.message));
    }
    this.healthTimer ??= setInterval(() => this.check(), HEALTH_CHECK_MS).unref();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.healthTimer);
    if (this.client.status === 'wait' || this.client.status === 'end') return;
    await this.client.quit().catch(() => this.client.disconnect());
  }

  /**
   * A connection can be up and still not answer (a Redis stopped with SIGSTOP, a network
   * that drops packets): then every limit would wait the command timeout. A ping that
   * times out drops the connection, so limits count on their own at once while ioredis
   * connects again.
   */
  private check(): void {
    if (!this.ready) return;
    this.client.ping().catch((error: Error) => {
      if (this.closed || !this.ready) return;
      this.markLost(error.message);
      this.client.disconnect(true);
    });
  }

  /**
   * A limit counted in this process instead of Redis: `error` is what Redis (or the
   * command's timeout) answered, null when there was no connection to ask, which the
   * connection has already told. An error on a live connection (a Redis out of memory, a
   * read-only replica after a failover, a refused ACL) is told too, once a minute per
   * kind: nothing else would show that the servers count alone.
   */
  fellBack(error: Error | null): void {
    this.options.onFallback?.(error ? 'error' : 'not-connected');
    if (!error || !this.ready || this.closed) return;
    const now = Date.now();
    const message = error.message.slice(0, 200);
    if (now - (this.told.get(message) ?? -Infinity) < ERROR_REPORT_MS) return;
    if (this.told.size > 100) this.told.clear();
    this.told.set(message, now);
    this.options.warn(`Redis at ${redactUrl(this.options.url)} refused a limit's command (${message}): this server counts that limit alone meanwhile`);
  }

  private markLost(reason: string): void {
    if (this.lost || this.closed) return;
    this.lost = true;
    this.options.warn(`Redis at ${redactUrl(this.options.url)} is unreachable (${reason}): each server counts its own limits until it is back`);
  }
}
