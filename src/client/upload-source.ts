import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** The bytes of one upload, however the caller holds them. */
export interface UploadSource {
  /** The file name sent to the server. */
  name: string;
  /** Size in bytes when known: then the request declares it (Content-Length), so the server can refuse an oversized or over-volume upload before reading it. */
  size: number | undefined;
  /** The bytes from the first, read as they are sent (never all in memory). Called once. */
  open(): AsyncIterable<Uint8Array>;
  /**
   * The bytes from `start` up to `end` (exclusive), as often as asked: a file or a Blob
   * can be read again from any byte, which a resumable upload needs to send the rest
   * after a cut. Undefined for a stream, which is read once.
   */
  readRange: ((start: number, end: number) => AsyncIterable<Uint8Array>) | undefined;
  /**
   * What tells this file apart on this machine from one run to the next: its absolute
   * path, size and modification time. Only a file path has one; a later process can
   * resume only such an upload (a Blob or a stream is gone with its process).
   */
  localIdentity: string | undefined;
}

/** What `upload()` accepts: a file path, a Blob (`fs.openAsBlob`), or a stream of bytes. */
export type UploadInput = string | Blob | Readable | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Chunks read from disk: big enough to keep the socket busy, small enough to stay flat. */
const READ_CHUNK = 256 * 1024;

/** An UploadSource for an input; a stream needs its `name` given, and its `size` for a declared length. */
export async function uploadSource(input: UploadInput, options: { name?: string; size?: number }): Promise<UploadSource> {
  if (typeof input === 'string') {
    const info = await stat(input);
    if (!info.isFile()) throw new TypeError(`${input} is not a regular file`);
    const size = info.size;
    // Exactly the stated bytes: a file that grows meanwhile must not overrun Content-Length.
    const readRange = (start: number, end: number) => fileBytes(input, start, Math.min(end, size));
    return {
      name: options.name ?? path.basename(input),
      size,
      open: () => readRange(0, size),
      readRange,
      localIdentity: `file:${path.resolve(input)} size:${size} mtime:${info.mtimeMs}`,
    };
  }
  if (options.name === undefined || options.name === '') throw new TypeError('upload(): a name is needed for a Blob or a stream');
  if (input instanceof Blob) {
    const blob = input;
    const readRange = (start: number, end: number) => blob.slice(start, end).stream() as unknown as AsyncIterable<Uint8Array>;
    return { name: options.name, size: blob.size, open: () => readRange(0, blob.size), readRange, localIdentity: undefined };
  }
  const stream = input as AsyncIterable<Uint8Array>;
  let opened = false;
  return {
    name: options.name,
    size: options.size,
    open: () => {
      if (opened) throw new TypeError('upload(): a stream can be sent only once');
      opened = true;
      return stream;
    },
    readRange: undefined,
    localIdentity: undefined,
  };
}

/**
 * Bytes `start` to `end` (exclusive) of a file. The file is opened at the first read,
 * not before: a range asked for and never read (a request that failed first) holds no
 * descriptor.
 */
async function* fileBytes(file: string, start: number, end: number): AsyncIterable<Uint8Array> {
  if (end <= start) return;
  yield* createReadStream(file, { start, end: end - 1, highWaterMark: READ_CHUNK });
}
