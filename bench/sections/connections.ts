import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { ConnectionLoadResult, ConnectionLoadSettings } from '../lib/connection-load.js';
import type { BenchContext } from '../lib/context.js';
import { figure, type SectionResult } from '../lib/figures.js';
import { launchFilehaven, openFilesLimit, withFileLimit } from '../lib/filehaven-server.js';
import { atomLink, uploadFile } from '../lib/http-client.js';
import { requestRate, wrkMissing } from '../lib/http-load.js';
import { alternate, MiB, median, percentile, rssPeak } from '../lib/measure.js';

const MB = 1e6;

export interface ConnectionsSettings {
  /** Downloads at once, each read at `pace` (the issue: 1,000 at 1 MB/s). */
  downloads: number;
  /** Idle keep-alive connections held meanwhile (the issue: 10,000). */
  idle: number;
  /** Bytes per second each download is read at. */
  pace: number;
  /** The size of the file every download reads. */
  fileSize: number;
  /** Seconds of each wrk round of the download rate. */
  loadSeconds: number;
}

/** Open files the server or the client needs beyond its connections (files, the database, stdio). */
const SPARE_FILES = 512;
/** How often /healthz is asked while the load runs (a fresh connection each time, as an orchestrator's probe). */
const PROBE_EVERY_MS = 250;
/** The server's --idle-timeout, its default: an idle keep-alive connection lives this long. */
const IDLE_TIMEOUT_MS = 60_000;

/**
 * Issue 28, targets 6 and 8. First, downloads per second of a small file under 64
 * concurrent downloads (wrk), which on PostgreSQL measures what counting a download costs.
 * Then many connections on one server: `idle` keep-alive connections, and `downloads`
 * downloads of one file at once, each read at `pace` and checked by SHA-256, in a child
 * process; meanwhile the server's peak RSS and a health probe's latency. That server has
 * its per-address caps (connections, free downloads) set above what the load uses, so any
 * refusal is a failure. Talks to 127.0.0.1 only; every wait is bounded.
 */
export async function connections(context: BenchContext, settings: ConnectionsSettings): Promise<SectionResult> {
  const notes: string[] = [];
  const figures = [];
  const rate = await downloadRate(context, settings.loadSeconds);
  if ('missing' in rate) notes.push(rate.missing);
  else figures.push(rate.figure);

  const content = randomBytes(settings.fileSize);
  const sha256 = createHash('sha256').update(content).digest('hex');
  const stored = (await uploadFile(context.server.url, context.key, { content }, 'connections.bin')).body;
  const link = atomLink(stored, 'download_link');
  if (!link) throw new Error(`no download link in ${stored}`);

  // The caps above the load: the connection cap counts busy connections (downloads and
  // probes aside) and allows 8 open per busy one (src/http/connection-cap.ts).
  const cap = Math.max(settings.downloads + 64, Math.ceil((settings.downloads + settings.idle + 64) / 8));
  const files = settings.downloads + settings.idle + SPARE_FILES;
  const limit = openFilesLimit();
  if (limit.soft < files)
    notes.push(`open files: soft limit ${limit.soft}, hard ${limit.hard}; raised to ${files} for the server and the client (sh -c 'ulimit -n')`);
  const server = await launchFilehaven(
    context.dataDir,
    {
      flags: [
        ...context.settings.flags,
        '--server-name',
        'bench-connections',
        '--max-connections-per-ip',
        String(cap),
        '--free-downloads-per-ip',
        String(settings.downloads + 64),
      ],
      env: context.settings.env,
    },
    files,
  );
  try {
    const port = Number(new URL(server.url).port);
    const load: ConnectionLoadSettings = {
      port,
      path: `${new URL(link).pathname}?download=1`,
      sha256,
      size: settings.fileSize,
      downloads: settings.downloads,
      idle: settings.idle,
      pace: settings.pace,
      idleTimeoutMs: IDLE_TIMEOUT_MS,
    };
    const sampler = rssPeak(server.pid);
    const probes = probeHealth(port);
    const result = await runLoad(load, files);
    const health = await probes.stop();
    const peak = sampler.stop();
    const refused = result.refused + health.refused;
    const wrong = settings.downloads - result.right - result.refused;
    const what = `${settings.downloads.toLocaleString('en')} downloads of ${(settings.fileSize / MiB).toFixed(0)} MiB read at ${(settings.pace / MB).toFixed(1)} MB/s + ${settings.idle.toLocaleString('en')} idle keep-alive connections`;
    figures.push(
      figure(`peak RSS, ${what}`, `${(peak / MB).toFixed(0)} MB`, { target: '≤ 300 MB', met: peak <= 300 * MB }),
      figure('  every byte right (SHA-256), nothing refused', `${result.right} of ${settings.downloads} right, ${refused} refused`, {
        target: 'all, 0 refused',
        met: wrong === 0 && refused === 0 && result.failures.length === 0,
      }),
      figure('  idle connections held (none closed before the 60 s idle timeout)', `${result.idleOpened - result.idleDropped} of ${settings.idle}`, {
        met: result.idleOpened === settings.idle && result.idleDropped === 0,
      }),
      figure("  time to a download's headers, median / p99", `${seconds(median(result.headerMs))} / ${seconds(percentile(result.headerMs, 0.99))}`),
      figure('  GET /healthz under the load, median / p99', `${seconds(median(health.ms))} / ${seconds(percentile(health.ms, 0.99))}`, {
        reference: health.failed > 0 ? `${health.failed} probes unanswered in 30 s` : '',
      }),
    );
    notes.push(
      `the downloads took ${result.seconds.toFixed(1)} s in all (${((settings.downloads * settings.fileSize) / MB / result.seconds).toFixed(0)} MB/s); ${health.ms.length} health probes, one every ${PROBE_EVERY_MS} ms on a new connection; caps: --max-connections-per-ip ${cap}, --free-downloads-per-ip ${settings.downloads + 64}`,
      ...result.failures.map((failure) => `failure: ${failure}`),
    );
  } finally {
    await server.stop();
  }
  return { title: 'Connections', figures, notes };
}

const seconds = (ms: number) => (Number.isFinite(ms) ? (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(0)} ms`) : 'n/a');

/**
 * Downloads per second of a 4 KiB file by its public link, wrk -t2 -c64 (each download
 * takes a free slot, counts a start and its bytes served), A/B alternating with GET /healthz
 * on the same server as the reference: what a download costs beyond a trivial answer.
 */
async function downloadRate(context: BenchContext, seconds: number): Promise<{ figure: ReturnType<typeof figure> } | { missing: string }> {
  const missing = wrkMissing();
  if (missing) return { missing };
  const stored = (await uploadFile(context.server.url, context.key, { content: randomBytes(4096) }, 'rate.bin')).body;
  const link = atomLink(stored, 'download_link');
  if (!link) throw new Error(`no download link in ${stored}`);
  // A download that waits its turn behind 63 others on a busy machine may take seconds.
  const load = { threads: 2, connections: 64, seconds, timeoutSeconds: 30 };
  const samples = await alternate(context.rounds, {
    download: () => requestRate(`${link}?download=1`, load),
    health: () => requestRate(`${context.server.url}/healthz`, load),
  });
  const downloads = median(samples.download);
  const health = median(samples.health);
  return {
    figure: figure('downloads/s of a 4 KiB file, wrk -t2 -c64', `${downloads.toFixed(0)} /s`, {
      reference: `${health.toFixed(0)} req/s GET /healthz, same server`,
      ratio: `${(downloads / health).toFixed(2)}×`,
    }),
  };
}

/** The client child (bench/lib/connection-load.ts); its result. */
async function runLoad(load: ConnectionLoadSettings, files: number): Promise<ConnectionLoadResult> {
  const [command, args] = withFileLimit(process.execPath, ['--import', 'tsx', 'bench/lib/connection-load.ts'], files);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, CONNECTION_LOAD: JSON.stringify(load) } });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  // Bounded: a few minutes for a slow machine (every download at its pace, 1,000 at once,
  // is 1 GB/s: more than two cores serve), and four times the pace.
  const bound = 300_000 + 4 * (load.size / load.pace) * 1000;
  const timer = setTimeout(() => child.kill('SIGKILL'), bound);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`the connection load exited with ${code} (bound ${bound} ms): ${out.slice(-500)}`);
  return JSON.parse(out) as ConnectionLoadResult;
}

/** GET /healthz every PROBE_EVERY_MS on a new connection until stopped: each answer's latency, and refusals. */
function probeHealth(port: number): { stop(): Promise<{ ms: number[]; refused: number; failed: number }> } {
  const ms: number[] = [];
  let refused = 0;
  let failed = 0;
  const pending = new Set<Promise<void>>();
  const probe = () => {
    const asked = performance.now();
    const done = new Promise<void>((resolve) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 30_000 }, (response) => {
        response.resume();
        response.on('end', () => {
          if (response.statusCode === 429) refused++;
          ms.push(performance.now() - asked);
          resolve();
        });
      });
      request.on('timeout', () => request.destroy(new Error('no answer in 30 s')));
      request.on('error', () => {
        failed++;
        resolve();
      });
    });
    pending.add(done);
    void done.then(() => pending.delete(done));
  };
  const timer = setInterval(probe, PROBE_EVERY_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await Promise.all(pending);
      return { ms, refused, failed };
    },
  };
}
