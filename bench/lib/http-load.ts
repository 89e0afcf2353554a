import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { defer } from './cleanup.js';
import { listeningUrl } from './filehaven-server.js';

const run = promisify(execFile);

/**
 * Requests per second under load, by wrk (a second process, in C: on two cores a load
 * generator in Node would take the core the server needs). Like nginx, the bench installs
 * nothing: without wrk it says what to install.
 */
export function wrkMissing(): string | null {
  const found = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return found.error ? 'wrk is not installed: the request rates are left out. Install it (Debian: apt-get install wrk) and run again' : null;
}

export interface LoadOptions {
  connections: number;
  threads: number;
  seconds: number;
  headers?: Record<string, string>;
  /** wrk's --timeout in seconds: an answer slower than that is a socket error (default WRK_TIMEOUT_S). */
  timeoutSeconds?: number;
}

/** How long wrk waits for one answer before it counts a timeout (a socket error: the run fails). */
const WRK_TIMEOUT_S = 30;

/** What one wrk run measured. */
export interface LoadResult {
  /** Requests per second. */
  rate: number;
  /** The 99th percentile of the latency, in milliseconds (wrk --latency). */
  p99Ms: number;
}

/** wrk against one URL; requests per second. Any answer that is not 2xx/3xx fails the run. */
export async function requestRate(url: string, options: LoadOptions): Promise<number> {
  return (await requestLoad(url, options)).rate;
}

/** wrk against one URL: requests per second and the p99 latency. Any answer that is not 2xx/3xx fails the run. */
export async function requestLoad(url: string, options: LoadOptions): Promise<LoadResult> {
  // wrk gives up on an answer after 2 s by default and counts a socket error, which fails
  // the run; on a loaded machine a slow answer is a latency, and belongs in the p99.
  const timeout = options.timeoutSeconds ?? WRK_TIMEOUT_S;
  const args = ['-t', String(options.threads), '-c', String(options.connections), '-d', `${options.seconds}s`, '--latency', '--timeout', `${timeout}s`];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  const { stdout } = await run('wrk', [...args, url], { timeout: (options.seconds + timeout + 30) * 1000 });
  const failed = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
  if (failed) throw new Error(`wrk ${url}: ${failed[1]} answers were not 2xx/3xx`);
  const errors = /Socket errors: (.*)/.exec(stdout);
  if (errors && /(connect|read|write|timeout) [1-9]/.test(errors[1]!)) throw new Error(`wrk ${url}: socket errors: ${errors[1]}`);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
  if (!rate) throw new Error(`wrk printed no rate: ${stdout}`);
  // The latency distribution of --latency: "     99%   12.34ms" (us, ms, s or m).
  const p99 = /^\s*99%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(stdout);
  if (!p99) throw new Error(`wrk printed no p99 latency: ${stdout}`);
  const unitMs = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[p99[2] as 'us' | 'ms' | 's' | 'm'];
  return { rate: Number(rate[1]), p99Ms: Number(p99[1]) * unitMs };
}

/**
 * The baseline: a bare `node:http` server in its own process (as filehaven runs in its
 * own) that answers every request with exactly the bytes given (status, headers, body),
 * from memory. What Node itself costs per request on this machine.
 */
export async function startBareNode(answer: { headers: Record<string, string>; body: string }): Promise<{ url: string }> {
  const script = `
    const http = require('node:http');
    const { headers, body } = JSON.parse(process.env.BARE_ANSWER);
    const server = http.createServer((request, response) => {
      request.resume();
      response.writeHead(200, { ...headers, 'content-length': Buffer.byteLength(body) });
      response.end(body);
    });
    server.keepAliveTimeout = 72000;
    server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BARE_ANSWER: JSON.stringify(answer) } });
  const exited = once(child, 'exit');
  defer('stop the bare node:http server', async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  return { url: await listeningUrl(child, 'the bare node:http server') };
}
