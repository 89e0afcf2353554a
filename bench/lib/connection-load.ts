/**
 * The client side of the "connections" section, run as a child process (its own event
 * loop, so the bench's probes are not delayed by it): `idle` keep-alive connections that
 * each make one request and then sit idle, then `downloads` downloads of one file at once,
 * each read at `pace` bytes/s and hashed (SHA-256). Talks to 127.0.0.1 only; prints one
 * JSON line (ConnectionLoadResult) and exits. Settings come as JSON in CONNECTION_LOAD.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';

export interface ConnectionLoadSettings {
  /** The server's port on 127.0.0.1. */
  port: number;
  /** The download's path (and query). */
  path: string;
  /** The file's SHA-256 (hex) and size. */
  sha256: string;
  size: number;
  downloads: number;
  idle: number;
  /** Bytes per second each download is read at. */
  pace: number;
  /** The server's idle timeout (--idle-timeout): an idle connection closed sooner was dropped. */
  idleTimeoutMs: number;
}

export interface ConnectionLoadResult {
  /** Milliseconds from each download's request to its status line and headers. */
  headerMs: number[];
  /** Downloads whose bytes had the right length and SHA-256. */
  right: number;
  /** Answers 429 (refused: the per-address cap) among the downloads and the idle connections' requests. */
  refused: number;
  /** Anything else that went wrong, one line each (at most 20 kept). */
  failures: string[];
  /** Idle connections opened (answered 200), and those the server closed before its idle timeout. */
  idleOpened: number;
  idleDropped: number;
  /** Seconds from the first download's request to the last one's end. */
  seconds: number;
}

const settings = JSON.parse(process.env.CONNECTION_LOAD ?? '{}') as ConnectionLoadSettings;
const failures: string[] = [];
const fail = (what: string) => {
  if (failures.length < 20) failures.push(what);
};
let refused = 0;
/** For the progress line (stderr, every PROGRESS_MS): a run that takes long says where it is. */
const progress = { idle: 0, headers: 0, done: 0, bytes: 0 };
const PROGRESS_MS = 10_000;

/** One keep-alive connection: a request, its answer read, and then nothing until the end. */
function idleConnection(): Promise<net.Socket | null> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: settings.port });
    let seen = '';
    const done = (result: net.Socket | null) => {
      socket.removeAllListeners('data');
      if (!result) socket.destroy();
      resolve(result);
    };
    socket.on('error', (error) => {
      fail(`idle connection: ${error.message}`);
      done(null);
    });
    socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      const head = seen.indexOf('\r\n\r\n');
      if (head < 0) return;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(seen)?.[1]);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(seen.slice(0, head))?.[1] ?? 0);
      if (seen.length < head + 4 + length) return;
      if (status === 429) refused++;
      if (status !== 200 || /\r\nconnection: close/i.test(seen.slice(0, head))) {
        if (status !== 429) fail(`idle connection's request answered ${status}`);
        return done(null);
      }
      done(socket);
    });
  });
}

/** One download read at the pace, hashed; its time to headers. */
function download(agent: http.Agent): Promise<number | null> {
  return new Promise((resolve) => {
    const asked = performance.now();
    const request = http.get({ host: '127.0.0.1', port: settings.port, path: settings.path, agent }, (response) => {
      const headerMs = performance.now() - asked;
      progress.headers++;
      if (response.statusCode !== 200) {
        if (response.statusCode === 429) refused++;
        else fail(`download answered ${response.statusCode}`);
        response.resume();
        return resolve(null);
      }
      const hash = createHash('sha256');
      let received = 0;
      const started = Date.now();
      response.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        received += chunk.length;
        progress.bytes += chunk.length;
        const wait = started + (received / settings.pace) * 1000 - Date.now();
        if (wait > 0) {
          response.pause();
          setTimeout(() => response.resume(), wait);
        }
      });
      response.on('end', () => {
        progress.done++;
        if (received !== settings.size || hash.digest('hex') !== settings.sha256) {
          fail(`download: ${received} of ${settings.size} bytes, or a wrong SHA-256`);
          return resolve(null);
        }
        resolve(headerMs);
      });
      response.on('error', (error) => {
        fail(`download: ${error.message}`);
        resolve(null);
      });
    });
    request.on('error', (error) => {
      fail(`download: ${error.message}`);
      resolve(null);
    });
  });
}

async function main(): Promise<ConnectionLoadResult> {
  const began = performance.now();
  const ticker = setInterval(() => {
    const { idle, headers, done, bytes } = progress;
    process.stderr.write(
      `  connections: ${((performance.now() - began) / 1000).toFixed(0)} s: ${idle} idle open, ${headers} downloads answered, ${done} done, ${(bytes / 1e6).toFixed(0)} MB read\n`,
    );
  }, PROGRESS_MS);
  ticker.unref();
  // Opened a few hundred at a time: the server's listen backlog (511) is not the test.
  const idle: net.Socket[] = [];
  for (let opened = 0; opened < settings.idle; ) {
    const batch = Math.min(256, settings.idle - opened);
    const sockets = await Promise.all(Array.from({ length: batch }, () => idleConnection()));
    for (const socket of sockets) if (socket) idle.push(socket);
    progress.idle = idle.length;
    opened += batch;
  }
  // Opened before the downloads start: closed sooner than the idle timeout after that is dropped.
  const openedBy = performance.now();
  let dropped = 0;
  for (const socket of idle) socket.once('close', () => (performance.now() - openedBy < settings.idleTimeoutMs ? dropped++ : 0));
  // One connection per download, all at once.
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const started = performance.now();
  const outcomes = await Promise.all(Array.from({ length: settings.downloads }, () => download(agent)));
  const seconds = (performance.now() - started) / 1000;
  const headerMs = outcomes.filter((ms): ms is number => ms !== null);
  const result: ConnectionLoadResult = {
    headerMs,
    right: headerMs.length,
    refused,
    failures,
    idleOpened: idle.length,
    idleDropped: dropped,
    seconds,
  };
  for (const socket of idle) socket.destroy();
  clearInterval(ticker);
  return result;
}

process.stdout.write(`${JSON.stringify(await main())}\n`);
