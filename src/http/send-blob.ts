import { create as contentDisposition } from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fresh from 'fresh';
import rangeParser from 'range-parser';
import { Readable, Transform } from 'node:stream';
import type { ByteRange } from '../blob/blob-store.js';
import type { FileRecord } from '../domain/types.js';

export interface SendFileOptions {
  file: FileRecord;
  /** Opens the bytes (all, or an inclusive range). */
  open: (range?: ByteRange) => Promise<Readable>;
  /**
   * Called with the body length before any body byte is sent; may throw to refuse
   * (premium traffic, API.md 6). Not called for HEAD, 304 or 416.
   */
  beforeBody?: (length: number) => Promise<void>;
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
  // Bytes passed on to the response, and of those the ones known to have left the process:
  // what the response still buffers (its own and its socket's) has not.
  let passed = 0;
  let sent = 0;
  const measure = () => {
    sent = Math.max(sent, passed - reply.raw.writableLength);
    return sent;
  };
  let stream: Readable | undefined;
  let armed = false;
  let closed = false;
  let reported = false;
  // A client that closes its end once it has everything (curl does) can make the response
  // close before its 'finish': its FIN arrives while the buffers are still whole, so that
  // is when to look at what left. (A reset drops them unseen: the last look stands.)
  const socket = request.raw.socket;
  socket.once('end', measure);
  const report = () => {
    socket.removeListener('end', measure);
    if (reported || !armed) return;
    reported = true;
    stream?.destroy();
    // A response that finished flushed every byte; one cut short lost what it buffered.
    options.afterBody?.(flushed ? passed : sent, length);
  };
  // 'finish' also fires for a response whose client reset the connection (Node drops the
  // socket's buffer then): only a socket that is whole, or that was closed after flushing
  // its own writes (a client that closed once it had every byte: Node ends the socket and
  // destroys it at its 'finish'), let every byte leave.
  let flushed = false;
  reply.raw.once('finish', () => {
    flushed = !socket.errored && (!socket.destroyed || socket.writableFinished);
  });
  reply.raw.once('close', () => {
    closed = true;
    report();
  });
  // A client that left before this point (during authorisation) fired 'close' already:
  // without this, its reservation would be taken and never given back.
  // (The request's socket, not the response's: a pipelined response has none until the
  // answers before it are sent.)
  if (reply.raw.destroyed || socket.destroyed) closed = true;

  try {
    await options.beforeBody?.(length);
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
  if (closed) {
    stream.destroy();
    report();
    return reply;
  }
  const progress = options.progress;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      // Measured before the chunk joins the buffers: backpressure lets a chunk in only as
      // the client drains them, so this runs as the download moves.
      const moved = measure();
      progress?.(moved);
      passed += chunk.length;
      done(null, chunk);
    },
  });
  // pipe() does not destroy the source when the destination goes: report() does, on close.
  stream.on('error', (error) => meter.destroy(error));
  return reply.send(stream.pipe(meter));
}
