import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { create as contentDisposition } from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fresh from 'fresh';
import rangeParser from 'range-parser';
import { type ByteRange, canRecycle } from '../blob/blob-store.js';
import type { FileRecord } from '../domain/types.js';

export interface SendFileOptions {
  file: FileRecord;
  /** Opens the bytes (all, or an inclusive range). */
  open: (range?: ByteRange) => Promise<Readable>;
  /**
   * Called with the body length, and the file's byte where the body starts (0 unless a
   * single satisfiable range is served), before any body byte is sent; may throw to refuse
   * (premium traffic, API.md 6). Not called for HEAD, 304 or 416.
   */
  beforeBody?: (length: number, start: number) => Promise<void>;
  /**
   * Called as the body streams with the body bytes that have left the process (handed to
   * the kernel): never more than the client can receive.
   */
  progress?: (sent: number) => void;
  /**
   * Called exactly once after a successful beforeBody, when the response is over however
   * it ends (sent, failed, client gone), with the body bytes sent (all of them when the
   * response finished; else those known to have left the process) and those planned.
   */
  afterBody?: (sent: number, planned: number) => void;
  /**
   * Headers that replace the download defaults (an inline preview's Content-Type,
   * Content-Disposition and Content-Security-Policy); by default the bytes are an
   * `application/octet-stream` attachment.
   */
  headers?: Record<string, string>;
}

/** The strong validator of a file: its content digest (same bytes, same tag). */
export const etagOf = (file: FileRecord) => `"${file.sha256}"`;

/** Whether If-Range allows the Range header to apply (RFC 9110 13.1.5). */
function ifRangeHolds(request: FastifyRequest, etag: string, lastModified: string): boolean {
  const ifRange = request.headers['if-range'];
  if (typeof ifRange !== 'string') return true;
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) return ifRange === etag;
  return ifRange === lastModified;
}

/**
 * Streams a file with the HTTP semantics a download manager needs: ETag and
 * Last-Modified with 304 for If-None-Match / If-Modified-Since (via `fresh`), single
 * byte ranges with 206 and 416 (via `range-parser`; multi-range requests get the whole
 * file, which RFC 9110 allows), HEAD, and an RFC 6266 attachment name.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, options: SendFileOptions): Promise<FastifyReply> {
  const { file } = options;
  const etag = etagOf(file);
  const lastModified = new Date(file.createdAt).toUTCString();
  reply.headers({
    ETag: etag,
    'Last-Modified': lastModified,
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, no-cache',
    'Content-Type': 'application/octet-stream',
    'Content-Disposition': contentDisposition(file.name, { type: 'attachment' }),
    'X-Content-Type-Options': 'nosniff',
    ...options.headers,
  });

  if (fresh(request.headers, { etag, 'last-modified': lastModified })) {
    return reply.code(304).send();
  }

  let range: ByteRange | undefined;
  const header = request.headers.range;
  if (header !== undefined && ifRangeHolds(request, etag, lastModified)) {
    const parsed = rangeParser(file.size, header, { combine: true });
    if (parsed === -1) {
      return reply.code(416).header('Content-Range', `bytes */${file.size}`).type('text/plain; charset=utf-8').send('Range Not Satisfiable\n');
    }
    if (parsed !== -2 && parsed.type === 'bytes' && parsed.length === 1) range = parsed[0];
  }
  const length = range ? range.end - range.start + 1 : file.size;
  if (range) reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`);
  reply.header('Content-Length', length);
  // An empty stream, not undefined: Fastify's HEAD route rewrites Content-Length to 0 for an empty payload.
  if (request.method === 'HEAD') return reply.send(Readable.from([]));

  // A refusal (or a failure to open) is an error response, not the file: without its headers.
  const notTheFile = (error: unknown) => {
    for (const name of ['ETag', 'Last-Modified', 'Accept-Ranges', 'Content-Disposition', 'Content-Range', 'Content-Length']) reply.removeHeader(name);
    return error;
  };

  // afterBody runs exactly once when beforeBody went through, however the response ends:
  // also when the client leaves while we reserve or open (the close event may come first).
  // Bytes sent are those whose write completed: in the kernel's hands, not Node's.
  let sent = 0;
  let stream: Readable | undefined;
  let armed = false;
  let closed = false;
  let reported = false;
  const report = () => {
    if (reported || !armed) return;
    reported = true;
    stream?.destroy();
    options.afterBody?.(sent, length);
  };
  const res = reply.raw;
  // A client that left before this point (during authorisation) is gone at once: without
  // that, its reservation would be taken and never given back.
  whenResponseGone(request, reply, () => {
    closed = true;
    report();
    // A response still queued behind another learns it here that it will never be sent.
    res.destroy();
  });

  try {
    await options.beforeBody?.(length, range?.start ?? 0);
  } catch (error) {
    throw notTheFile(error);
  }
  armed = true;
  if (closed) {
    report();
    return reply;
  }
  try {
    stream = await options.open(range);
  } catch (error) {
    report();
    throw notTheFile(error);
  }
  const source = stream;
  // Listened to from here on, so that an error between two steps never goes unheard
  // (which would end the process): before the first chunk, firstChunk rejects with it;
  // after, the pump cuts the connection.
  let pumping = false;
  source.on('error', (error) => {
    if (!pumping) return;
    request.log.warn({ err: error }, 'download cut short: its source failed after the headers were sent');
    res.destroy();
  });
  if (closed) {
    source.destroy();
    report();
    return reply;
  }
  // Until the first chunk, a failing source (an object store that errs) still gets an
  // error response; after it, the status line is gone and a failure can only cut the
  // connection, which a client sees as a short body.
  let first: Buffer | null;
  try {
    first = await firstChunk(source, res);
  } catch (error) {
    report();
    throw notTheFile(error);
  }
  if (closed) {
    source.destroy();
    report();
    return reply;
  }
  // A source that failed after its first chunk but before any byte left: still a 5xx.
  if (source.errored) {
    report();
    throw notTheFile(source.errored);
  }
  reply.hijack();
  pumping = true;
  try {
    res.writeHead(reply.statusCode, reply.getHeaders() as OutgoingHttpHeaders);
  } catch (error) {
    request.log.error({ err: error }, 'download headers could not be written');
    res.destroy();
    return reply;
  }
  pump(
    source,
    res,
    length,
    (bytes) => {
      sent += bytes;
      options.progress?.(sent);
    },
    first,
  );
  return reply;
}

/**
 * Calls `then` once, when the response closes or its connection does, whichever comes
 * first; at once when either is already gone. A response queued behind another on its
 * connection (pipelining) has no socket yet and never emits 'close' when that connection
 * dies, so the request's socket is watched too.
 */
export function whenResponseGone(request: FastifyRequest, reply: FastifyReply, then: () => void): void {
  const res = reply.raw;
  const socket = request.raw.socket;
  let gone = false;
  const onGone = () => {
    if (gone) return;
    gone = true;
    socket.removeListener('close', onGone);
    res.removeListener('close', onGone);
    then();
  };
  res.once('close', onGone);
  socket.once('close', onGone);
  if (res.destroyed || socket.destroyed) onGone();
}

/**
 * A signal aborted once the response is over (whenResponseGone): how a use case that
 * holds something for the response (a free download's slot) learns when to give it back.
 */
export function responseGoneSignal(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  whenResponseGone(request, reply, () => gone.abort());
  return gone.signal;
}

/** The first chunk of a stream (null if it ends first or the response closes), the rest left paused. */
function firstChunk(stream: Readable, res: ServerResponse): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const settle = (then: () => void) => {
      stream.off('data', onData).off('end', onEnd).off('error', onError);
      res.off('close', onEnd);
      then();
    };
    const onData = (chunk: Buffer) => {
      stream.pause();
      settle(() => resolve(chunk));
    };
    const onEnd = () => settle(() => resolve(null));
    const onError = (error: Error) => settle(() => reject(error));
    stream.on('data', onData).on('end', onEnd).on('error', onError);
    res.on('close', onEnd);
  });
}

/**
 * Writes a stream to the response with a callback per write: that callback is both the
 * measure of bytes sent (the write reached the kernel) and the moment the chunk's memory
 * is free, so a recycling source reads into it again (issue 9: no Buffer per chunk, no
 * collection per 64 MB). The source pauses while the socket is full; the response's end
 * or failure destroys it (the caller's whenResponseGone), its failure cuts the response
 * (the caller's 'error' listener on the source). It adds no 'close' listener to the
 * response: a pipeline into it adds seven, and with the caller's own they passed Node's
 * ten (a MaxListenersExceededWarning per folder ZIP, issue 23). `first` is a chunk read
 * ahead (sendFile's), null when the source ended before it.
 */
export function pump(source: Readable, res: ServerResponse, length: number, written: (bytes: number) => void, first?: Buffer | null): void {
  const recycle = canRecycle(source) ? (chunk: Buffer) => source.recycle(chunk) : undefined;
  let passed = 0;
  const write = (chunk: Buffer) => {
    passed += chunk.length;
    const roomLeft = res.write(chunk, (error) => {
      if (!error) written(chunk.length);
      recycle?.(chunk);
    });
    if (!roomLeft) source.pause();
  };
  // A source that ends short of the length (a blob cut on disk) must not leave the client
  // waiting for the rest on a connection it would reuse: the connection is cut instead.
  const finish = () => (passed === length ? res.end() : res.destroy());
  if (first) write(first);
  // The source may have ended while its first chunk was on its way here.
  if (first === null || source.readableEnded) {
    finish();
    return;
  }
  source.on('end', finish);
  // Closed without an end or an error (destroyed from outside): nothing more will come.
  source.once('close', () => {
    if (!source.readableEnded) res.destroy();
  });
  res.on('drain', () => source.resume());
  source.on('data', write);
  if (!res.writableNeedDrain) source.resume();
}
