import { readdir } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import type { PoolConnections } from '../db/dialect.js';
import type { Clock } from '../domain/ids.js';
import { Counter, Gauge, Histogram, Registry } from './prom-client-classes.js';

const LIMITS = ['sign-in', 'api-rate', 'upload-volume', 'free-download-slots', 'traffic', 'connections-per-ip', 'link-password'] as const;
/** Why a shared limit counted in this process alone: no connection to Redis, or Redis answered a command with an error. */
export type FallbackReason = 'not-connected' | 'error';

/** The limits whose refusals are counted (`filehaven_limit_refusals_total{limit}`). */
export type LimitName = (typeof LIMITS)[number];

const DOWNLOAD_KINDS = ['public', 'direct', 'owner'] as const;
/** Public downloads (the free `?download` and the inline preview), premium direct links, or owners reading their own files (WebDAV). */
export type DownloadKind = (typeof DOWNLOAD_KINDS)[number];

const GC_OUTCOMES = ['done', 'failed', 'skipped'] as const;
/** How a gc run ended: it ran to its end, it failed, or another holder had the lease. */
export type GcOutcome = (typeof GC_OUTCOMES)[number];

export interface MetricsDeps {
  /** The database's connections at scrape time; null without a pool (SQLite: one connection). */
  connections: () => PoolConnections | null;
  /** The time of the last gc run is taken from it, like every other time the services keep. */
  clock: Clock;
  /** Whether the shared limits' Redis is connected now; null (or not given) without --redis-url. */
  redisConnected?: () => boolean | null;
}

/** One upload in flight, from its allowance to its file row (or its failure). */
export interface UploadMeter {
  /** The file's bytes arrived whole. */
  received(bytes: number): void;
  /** The upload is over; later calls do nothing. */
  end(outcome: 'stored' | 'failed'): void;
}

/** Route label of a request the router matched no route for (never the raw URL: cardinality, and URLs carry ids and secrets). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Whole requests, most under a second; transfers go to the last buckets. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 600];
/** Transfers: a small file in a fraction of a second to many GiB over hours. */
const TRANSFER_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600, 14_400];

/**
 * The Prometheus metrics of one server (issue 10 item 5), in a registry of its own: tests
 * run several servers in one process, and the CLI builds the services too. Names carry
 * their unit (Prometheus naming conventions). Counting an event is a method call at the
 * one place the event happens; nothing here knows Fastify or SQL.
 */
export class Metrics {
  /** What `/metrics` renders. */
  readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: 'filehaven_http_requests_total',
    help: 'HTTP requests answered (or cut short), by route pattern, method and status ("aborted" when the client left before the status line).',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'filehaven_http_request_duration_seconds',
    help: "Time from a request's routing to the end of its response, by route pattern and method.",
    labelNames: ['route', 'method'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  private readonly uploadBytes = new Counter({
    name: 'filehaven_upload_bytes_total',
    help: 'Bytes of uploaded files received whole (an upload cut short is not counted).',
    registers: [this.registry],
  });
  private readonly uploadDuration = new Histogram({
    name: 'filehaven_upload_duration_seconds',
    help: 'Uploads from their start to their file row (stored) or their failure (failed).',
    labelNames: ['outcome'] as const,
    buckets: TRANSFER_BUCKETS,
    registers: [this.registry],
  });
  private readonly downloadBytes = new Counter({
    name: 'filehaven_download_bytes_total',
    help: 'File body bytes sent (handed to the kernel), by kind: public (free downloads and previews) or direct (premium links).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  private readonly downloadDuration = new Histogram({
    name: 'filehaven_download_duration_seconds',
    help: 'File bodies from their first byte to the end of the response, however it ends.',
    labelNames: ['kind'] as const,
    buckets: TRANSFER_BUCKETS,
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'filehaven_transfers_in_flight',
    help: 'Uploads and downloads in progress, by direction.',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });
  private readonly fallbacks = new Counter({
    name: 'filehaven_limit_fallbacks_total',
    help: 'Counts of shared limits made in this server alone, by reason: Redis not connected, or a command it failed (out of memory, read-only, timed out).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'filehaven_limit_refusals_total',
    help: 'Requests (or connections) refused by a limit, by limit.',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  private readonly reserved = new Counter({
    name: 'filehaven_traffic_reserved_bytes_total',
    help: 'Premium traffic taken for direct downloads before their bodies are sent.',
    registers: [this.registry],
  });
  private readonly refunded = new Counter({
    name: 'filehaven_traffic_refunded_bytes_total',
    help: 'Reserved premium traffic given back because it was not sent (downloads cut short, abandoned reservations settled).',
    registers: [this.registry],
  });
  private readonly digestReread = new Counter({
    name: 'filehaven_resumable_digest_reread_bytes_total',
    help: 'Bytes of resumable uploads read again to bring a SHA-256 up to date (only after a crash mid-request).',
    registers: [this.registry],
  });
  private readonly gcRuns = new Counter({
    name: 'filehaven_gc_runs_total',
    help: 'gc runs of this server, by outcome (skipped: another server held the gc lease).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly gcLastSuccess = new Gauge({
    name: 'filehaven_gc_last_success_timestamp_seconds',
    help: "When this server's last gc run that ran to its end finished (Unix time).",
    registers: [this.registry],
  });
  private readonly gcLastDuration = new Gauge({
    name: 'filehaven_gc_last_duration_seconds',
    help: "How long this server's last gc run that was not skipped took.",
    registers: [this.registry],
  });

  constructor(private readonly deps: MetricsDeps) {
    // Read when scraped: nothing to keep up to date between scrapes.
    const connections = deps.connections;
    new Gauge({
      name: 'filehaven_db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting: queries waiting for one); no samples on SQLite.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const pool = connections();
        if (pool === null) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
    const redisConnected = deps.redisConnected;
    new Gauge({
      name: 'filehaven_redis_connected',
      help: 'Whether the Redis of the shared limits is connected (1) or limits count in this server alone (0); no sample without --redis-url.',
      registers: [this.registry],
      collect() {
        const connected = redisConnected?.() ?? null;
        if (connected !== null) this.set(connected ? 1 : 0);
      },
    });
    registerProcessMetrics(this.registry);
    // Every known series from the start, at 0: a rate() needs a sample before the first event.
    for (const limit of LIMITS) this.refusals.inc({ limit }, 0);
    for (const kind of DOWNLOAD_KINDS) this.downloadBytes.inc({ kind }, 0);
    for (const outcome of GC_OUTCOMES) this.gcRuns.inc({ outcome }, 0);
    for (const reason of ['not-connected', 'error'] as const) this.fallbacks.inc({ reason }, 0);
    for (const direction of ['upload', 'download']) this.inFlight.set({ direction }, 0);
  }

  /** A response ended (sent, failed or cut): `route` is the matched pattern, never the URL. */
  request(route: string | undefined, method: string, status: number | 'aborted', seconds: number): void {
    const label = route ?? UNMATCHED_ROUTE;
    this.httpRequests.inc({ route: label, method, status: String(status) });
    this.httpDuration.observe({ route: label, method }, seconds);
  }

  /** An upload was let in (its volume allowed); end the meter however it ends. */
  uploadStarted(): UploadMeter {
    const started = performance.now();
    let ended = false;
    this.inFlight.inc({ direction: 'upload' });
    return {
      received: (bytes) => this.uploadBytes.inc(bytes),
      end: (outcome) => {
        if (ended) return;
        ended = true;
        this.inFlight.dec({ direction: 'upload' });
        this.uploadDuration.observe({ outcome }, (performance.now() - started) / 1000);
      },
    };
  }

  /**
   * A resumable upload ended at its finish, stored or refused: its bytes, counted once here
   * (a finish that fails for another reason is tried again by the client's next request,
   * and counts then), and its time since its creation. It is not among the uploads in
   * flight: those are the requests carrying a whole file.
   */
  resumableUploadEnded(outcome: 'stored' | 'failed', bytes: number, seconds: number): void {
    this.uploadBytes.inc(bytes);
    this.uploadDuration.observe({ outcome }, Math.max(0, seconds));
  }

  /**
   * A file body starts (its traffic or slot taken); call the result once when the response
   * is over with the body bytes sent. Bytes are counted once, at the end, from the figure
   * the download already keeps: nothing per chunk.
   */
  downloadStarted(kind: DownloadKind): (sent: number) => void {
    const started = performance.now();
    let ended = false;
    this.inFlight.inc({ direction: 'download' });
    return (sent) => {
      if (ended) return;
      ended = true;
      this.inFlight.dec({ direction: 'download' });
      if (sent > 0) this.downloadBytes.inc({ kind }, sent);
      this.downloadDuration.observe({ kind }, (performance.now() - started) / 1000);
    };
  }

  /** A limit refused a request (or a connection). */
  limitRefused(limit: LimitName): void {
    this.refusals.inc({ limit });
  }

  /** A shared limit counted in this server alone: Redis was not connected, or failed the command. */
  limitFellBack(reason: FallbackReason): void {
    this.fallbacks.inc({ reason });
  }

  /** Premium traffic taken for a direct download (committed). */
  trafficReserved(bytes: number): void {
    this.reserved.inc(bytes);
  }

  /** Reserved traffic given back (committed). */
  trafficRefunded(bytes: number): void {
    if (bytes > 0) this.refunded.inc(bytes);
  }

  /** Bytes of a resumable upload read again for its digest. */
  resumableDigestReread(bytes: number): void {
    if (bytes > 0) this.digestReread.inc(bytes);
  }

  /** A gc run of this server ended (`seconds`: how long it ran). */
  gcRan(outcome: GcOutcome, seconds: number): void {
    this.gcRuns.inc({ outcome });
    if (outcome === 'skipped') return;
    this.gcLastDuration.set(seconds);
    if (outcome === 'done') this.gcLastSuccess.set(this.deps.clock() / 1000);
  }

  /** The exposition text of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** The Content-Type of render()'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * The process metrics of prom-client's collectDefaultMetrics, under the same names (so
 * the usual dashboards work), but only those read at scrape time: collectDefaultMetrics
 * cannot pick, and it also starts an event-loop-delay sampler (a 10 ms timer) and a GC
 * observer that are never stopped, one more per server a test process starts.
 */
function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  // From zero, not from now: the counters hold the process's whole CPU time.
  let last = { user: 0, system: 0 };
  const cpuUser = new Counter({ name: 'process_cpu_user_seconds_total', help: 'Total user CPU time spent in seconds.', registers });
  const cpuSystem = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers });
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers,
    // One read of the CPU usage sets all three.
    collect() {
      const now = process.cpuUsage();
      const user = (now.user - last.user) / 1e6;
      const system = (now.system - last.system) / 1e6;
      last = now;
      cpuUser.inc(user);
      cpuSystem.inc(system);
      this.inc(user + system);
    },
  });
  const startTime = Math.round(performance.timeOrigin / 1000);
  new Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since unix epoch in seconds.',
    registers,
    collect() {
      this.set(startTime);
    },
  });
  const heapTotal = new Gauge({ name: 'nodejs_heap_size_total_bytes', help: 'Process heap size from Node.js in bytes.', registers });
  const heapUsed = new Gauge({ name: 'nodejs_heap_size_used_bytes', help: 'Process heap size used from Node.js in bytes.', registers });
  const external = new Gauge({ name: 'nodejs_external_memory_bytes', help: 'Node.js external memory size in bytes.', registers });
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    registers,
    collect() {
      const memory = process.memoryUsage();
      this.set(memory.rss);
      heapTotal.set(memory.heapTotal);
      heapUsed.set(memory.heapUsed);
      external.set(memory.external);
    },
  });
  // Leaking descriptors is how a file server dies slowly; Linux tells cheaply.
  if (process.platform === 'linux') {
    new Gauge({
      name: 'process_open_fds',
      help: 'Number of open file descriptors.',
      registers,
      async collect() {
        this.set((await readdir('/proc/self/fd')).length - 1);
      },
    });
  }
}
