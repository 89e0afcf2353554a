import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Raw HTTP for upload tests: hand-written multipart bodies (bytes fetch's FormData cannot
 * produce), requests whose server may answer early and close, and raw sockets.
 */

/** One multipart part: its header lines (raw bytes allowed) and its content. */
export interface RawPart {
  /** Header lines without the trailing CRLF, e.g. `Content-Disposition: form-data; name="upload"; filename="a"`. */
  headers: (string | Buffer)[];
  body: string | Buffer;
}

/** A file part named `name`; `filename` goes into the header as raw UTF-8, quoted (null: no filename). */
export function filePart(name: string, filename: string | null, body: string | Buffer): RawPart {
  const disposition = filename === null ? `form-data; name="${name}"` : `form-data; name="${name}"; filename="${filename}"`;
  return {
    headers: [Buffer.concat([Buffer.from('Content-Disposition: ', 'latin1'), Buffer.from(disposition, 'utf8')]), 'Content-Type: application/octet-stream'],
    body,
  };
}

/** A plain text field. */
export function fieldPart(name: string, value: string): RawPart {
  return { headers: [`Content-Disposition: form-data; name="${name}"`], body: value };
}

/** Builds a multipart/form-data body; `closing: false` leaves out the closing boundary. */
export function multipartBody(boundary: string, parts: RawPart[], options: { closing?: boolean } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`, 'latin1'));
    for (const line of part.headers) chunks.push(typeof line === 'string' ? Buffer.from(line, 'utf8') : line, Buffer.from('\r\n'));
    chunks.push(Buffer.from('\r\n'));
    chunks.push(typeof part.body === 'string' ? Buffer.from(part.body, 'utf8') : part.body);
    chunks.push(Buffer.from('\r\n'));
  }
  if (options.closing !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`, 'latin1'));
  return Buffer.concat(chunks);
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** What a request ended with: the response, or the socket error seen before any response. */
export type RawOutcome = { response: RawResponse; error?: undefined } | { response?: undefined; error: NodeJS.ErrnoException };

export interface RawRequestOptions {
  method?: string;
  path: string;
  headers?: Record<string, string | number>;
  /** Sent in chunks of 64 KiB; no Content-Length header is added (set one, or get chunked encoding). */
  body?: Buffer;
  /** Send the headers, wait for the response, and only then (if at all) the body. */
  waitForResponseBeforeBody?: boolean;
}

const CHUNK = 64 * 1024;

/** An open request and its outcome; `open()` is false once a response or an error ended it. */
interface OpenRequest {
  request: http.ClientRequest;
  outcome: Promise<RawOutcome>;
  open(): boolean;
}

/**
 * Opens one request over a fresh connection (no keep-alive pool). Robust against a server
 * that answers before reading the whole body and closes: a response (even one cut by a
 * reset) is the outcome, and a reset before any response is reported as `error` instead
 * of thrown. Callers stop writing once `open()` is false.
 */
function openRequest(url: URL, method: string, headers: Record<string, string | number> | undefined): OpenRequest {
  let done = false;
  let responded = false;
  let resolveOutcome!: (outcome: RawOutcome) => void;
  const outcome = new Promise<RawOutcome>((resolve) => (resolveOutcome = resolve));
  const request = http.request(url, { method, headers, agent: false });
  const finish = (result: RawOutcome) => {
    if (done) return;
    done = true;
    resolveOutcome(result);
    request.destroy();
  };
  request.on('error', (error: NodeJS.ErrnoException) => {
    if (!responded) finish({ error });
  });
  request.on('response', (response) => {
    responded = true;
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    const settle = () => finish({ response: { status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') } });
    response.on('end', settle);
    // A reset after the headers: what was received is the answer (the body may be cut).
    response.on('error', settle);
    response.on('aborted', settle);
  });
  return { request, outcome, open: () => !done && !responded };
}

/**
 * One request whose body is written chunk by chunk; writing stops as soon as a response
 * arrives (see openRequest for the outcome rules).
 */
export function rawRequest(baseUrl: string, options: RawRequestOptions): Promise<RawOutcome> {
  const { request, outcome, open } = openRequest(new URL(options.path, baseUrl), options.method ?? 'POST', options.headers);
  const body = options.body ?? Buffer.alloc(0);
  if (options.waitForResponseBeforeBody) {
    request.flushHeaders();
    return outcome;
  }
  let offset = 0;
  const writeMore = () => {
    while (open() && offset < body.length) {
      const chunk = body.subarray(offset, offset + CHUNK);
      offset += chunk.length;
      if (!request.write(chunk)) {
        request.once('drain', writeMore);
        return;
      }
    }
    if (open()) request.end();
  };
  writeMore();
  return outcome;
}

/**
 * One request whose body is written in steps: a Buffer is written, a function is awaited
 * between writes (e.g. to wait until the server staged the first part). Same outcome rules
 * as rawRequest; once a response arrives nothing more is written.
 */
export function steppedRequest(
  baseUrl: string,
  pathname: string,
  headers: Record<string, string | number>,
  steps: (Buffer | (() => Promise<void>))[],
): Promise<RawOutcome> {
  const { request, outcome, open } = openRequest(new URL(pathname, baseUrl), 'POST', headers);
  void (async () => {
    for (const step of steps) {
      if (!open()) return;
      if (typeof step === 'function') await step();
      else await new Promise<void>((written) => request.write(step, () => written()));
    }
    if (open()) request.end();
  })();
  return outcome;
}

/** The request line, headers and blank line of a raw HTTP/1.1 request. */
export function requestHead(method: string, target: string, host: string, headers: Record<string, string | number>): Buffer {
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8');
}

/** Opens a raw TCP connection to the server of `baseUrl`. */
export async function connect(baseUrl: string): Promise<net.Socket> {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Writes bytes to a socket and waits until they are handed to the kernel. */
export function writeAll(socket: net.Socket, bytes: Buffer): Promise<void> {
  return new Promise((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
}

/** Polls `check` until it returns true, at most `tries` times `intervalMs` apart; returns the last result. */
export async function eventually(check: () => Promise<boolean>, tries = 100, intervalMs = 50): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return true;
    await sleep(intervalMs);
  }
  return check();
}

/** Every file under a folder, as paths relative to it, sorted; [] when the folder is missing. */
export async function listFiles(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}
