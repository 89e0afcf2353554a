import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * HTTP/1.1 over a bare TCP socket, for requests no client library would send as written:
 * garbage methods, raw bytes in the target, conflicting or false Content-Length, broken
 * chunked framing, bodies cut short. The request goes out byte for byte; the first
 * response is parsed by hand (1xx interim answers skipped), so whatever the server
 * writes is seen as written.
 */

/** What the client does once every piece of the request is written. */
export type RawEnding =
  /** Keep the socket open and wait for the answer. */
  | 'wait'
  /** Half-close (FIN): "no more bytes", then wait for the answer or the server's close. */
  | 'half-close'
  /** Wait `abortAfterMs` for an early answer, then reset the connection. */
  | 'abort';

export interface RawExchangeOptions {
  host: string;
  port: number;
  /** Written in order; a number is a pause of that many milliseconds. */
  pieces: (Buffer | number)[];
  /** Whether a response to this request has no body (HEAD). */
  headRequest?: boolean;
  ending?: RawEnding;
  /** For `abort`: how long to listen for an early answer first. */
  abortAfterMs?: number;
  /** The bound on the whole exchange. */
  timeoutMs?: number;
}

export interface RawHttpResponse {
  status: number;
  /** The status line as received. */
  statusLine: string;
  /** Header names lower-cased; repeated headers joined with ", " (set-cookie with "\n"). */
  headers: Record<string, string>;
  body: Buffer;
  /** False when the connection ended before the body did. */
  complete: boolean;
}

export interface RawExchange {
  /** The first final (non-1xx) response, if one began to arrive. */
  response?: RawHttpResponse;
  /** The server closed (or reset) the connection before a response began. */
  closedWithoutResponse: boolean;
  /** Nothing came back (neither an answer nor a close) within `timeoutMs`. */
  timedOut: boolean;
  /** A socket error code seen (ECONNRESET, EPIPE, ECONNREFUSED…), if any. */
  errorCode?: string;
  /** Whether every byte of the request was handed to the kernel (false: the server closed first). */
  allWritten: boolean;
  /** Milliseconds from connect to the end of the exchange. */
  elapsedMs: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** The parse state of the response bytes received so far. */
type Parsed = { state: 'incomplete' } | { state: 'done'; response: RawHttpResponse } | { state: 'bad'; reason: string };

/** Parses the first final response out of `bytes`; `closed` says no more bytes will come. */
export function parseResponse(bytes: Buffer, headRequest: boolean, closed: boolean): Parsed {
  let offset = 0;
  for (;;) {
    const headEnd = bytes.indexOf(HEAD_END, offset);
    if (headEnd === -1)
      return closed && bytes.length > offset
        ? { state: 'bad', reason: `cut response head: ${JSON.stringify(bytes.subarray(offset, offset + 200).toString('latin1'))}` }
        : { state: 'incomplete' };
    const lines = bytes.subarray(offset, headEnd).toString('latin1').split('\r\n');
    const statusLine = lines[0] ?? '';
    const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
    if (!match) return { state: 'bad', reason: `not an HTTP status line: ${JSON.stringify(statusLine.slice(0, 200))}` };
    const status = Number(match[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) return { state: 'bad', reason: `bad header line: ${JSON.stringify(line.slice(0, 200))}` };
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = name in headers ? `${headers[name]}${name === 'set-cookie' ? '\n' : ', '}${value}` : value;
    }
    const bodyStart = headEnd + HEAD_END.length;
    if (status >= 100 && status < 200) {
      offset = bodyStart;
      continue;
    }
    const base = { status, statusLine, headers };
    if (headRequest || status === 204 || status === 304) return { state: 'done', response: { ...base, body: Buffer.alloc(0), complete: true } };
    const rest = bytes.subarray(bodyStart);
    if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
      const decoded = decodeChunked(rest);
      if (decoded.done) return { state: 'done', response: { ...base, body: decoded.body, complete: true } };
      if (decoded.bad) return { state: 'bad', reason: `bad chunked response body: ${decoded.bad}` };
      return closed ? { state: 'done', response: { ...base, body: decoded.body, complete: false } } : { state: 'incomplete' };
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      if (!/^\d+$/.test(length)) return { state: 'bad', reason: `bad Content-Length in response: ${length}` };
      const n = Number(length);
      if (rest.length >= n) return { state: 'done', response: { ...base, body: rest.subarray(0, n), complete: true } };
      return closed ? { state: 'done', response: { ...base, body: rest, complete: false } } : { state: 'incomplete' };
    }
    // Neither: the body runs until the server closes.
    return closed ? { state: 'done', response: { ...base, body: rest, complete: true } } : { state: 'incomplete' };
  }
}

function decodeChunked(bytes: Buffer): { done: boolean; body: Buffer; bad?: string } {
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset);
    if (lineEnd === -1) return { done: false, body: Buffer.concat(chunks) };
    const sizeText = bytes.subarray(offset, lineEnd).toString('latin1').split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]+$/.test(sizeText)) return { done: false, body: Buffer.concat(chunks), bad: `chunk size ${JSON.stringify(sizeText)}` };
    const size = parseInt(sizeText, 16);
    const start = lineEnd + 2;
    if (size === 0) {
      // Trailers end with an empty line.
      const end = bytes.indexOf('\r\n', start);
      if (end === -1) return { done: false, body: Buffer.concat(chunks) };
      if (end === start) return { done: true, body: Buffer.concat(chunks) };
      const trailersEnd = bytes.indexOf(HEAD_END, start);
      return trailersEnd === -1 ? { done: false, body: Buffer.concat(chunks) } : { done: true, body: Buffer.concat(chunks) };
    }
    if (bytes.length < start + size + 2) {
      chunks.push(bytes.subarray(start, Math.min(bytes.length, start + size)));
      return { done: false, body: Buffer.concat(chunks) };
    }
    chunks.push(bytes.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/**
 * Sends one raw request on a fresh connection and reads the first final response. Never
 * throws: connection errors, resets and silence are reported in the result. A response
 * that does not parse as HTTP/1.1 is reported as a response with status 0 and the reason
 * in `statusLine`, so the caller's checks fail on it.
 */
export function rawExchange(options: RawExchangeOptions): Promise<RawExchange> {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 10_000;
  const ending = options.ending ?? 'wait';
  return new Promise((resolve) => {
    const socket = net.connect({ host: options.host, port: options.port });
    const received: Buffer[] = [];
    let receivedLength = 0;
    let finished = false;
    let errorCode: string | undefined;
    let writing = true;
    let allWritten = false;

    const finish = (result: Omit<RawExchange, 'elapsedMs' | 'errorCode' | 'allWritten'>) => {
      if (finished) return;
      finished = true;
      writing = false;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...result, ...(errorCode ? { errorCode } : {}), allWritten, elapsedMs: Date.now() - started });
    };
    const evaluate = (closed: boolean) => {
      const bytes = Buffer.concat(received, receivedLength);
      if (bytes.length === 0) {
        if (closed) finish({ closedWithoutResponse: true, timedOut: false });
        return;
      }
      const parsed = parseResponse(bytes, options.headRequest ?? false, closed);
      if (parsed.state === 'done') finish({ response: parsed.response, closedWithoutResponse: false, timedOut: false });
      else if (parsed.state === 'bad')
        finish({
          response: { status: 0, statusLine: parsed.reason, headers: {}, body: bytes, complete: false },
          closedWithoutResponse: false,
          timedOut: false,
        });
      else if (closed) finish({ closedWithoutResponse: true, timedOut: false });
    };
    const timer = setTimeout(() => {
      const bytes = Buffer.concat(received, receivedLength);
      const parsed = bytes.length > 0 ? parseResponse(bytes, options.headRequest ?? false, true) : undefined;
      finish({ ...(parsed?.state === 'done' ? { response: parsed.response } : {}), closedWithoutResponse: false, timedOut: true });
    }, timeoutMs);

    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      receivedLength += chunk.length;
      evaluate(false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      errorCode ??= error.code ?? error.message;
      writing = false;
    });
    socket.on('close', () => evaluate(true));
    socket.on('connect', () => {
      void (async () => {
        for (const piece of options.pieces) {
          if (!writing || socket.destroyed) return;
          if (typeof piece === 'number') {
            await sleep(piece);
            continue;
          }
          if (piece.length === 0) continue;
          // The callback runs once the bytes are handed to the kernel, or with the error
          // that ended the socket (the server may answer early and close).
          const flushed = await new Promise<boolean>((done) => socket.write(piece, (error) => done(!error)));
          if (!flushed) return;
        }
        if (!writing || socket.destroyed) return;
        allWritten = true;
        if (ending === 'half-close') socket.end();
        else if (ending === 'abort') {
          await sleep(options.abortAfterMs ?? 0);
          if (finished) return;
          // An early answer already received is still the outcome; otherwise none is expected.
          const bytes = Buffer.concat(received, receivedLength);
          const parsed = bytes.length > 0 ? parseResponse(bytes, options.headRequest ?? false, true) : undefined;
          finish({ ...(parsed?.state === 'done' ? { response: parsed.response } : {}), closedWithoutResponse: false, timedOut: false });
        }
      })();
    });
  });
}
