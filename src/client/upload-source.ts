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
    return {
      name: options.name ?? path.basename(input),
      size,
      // Exactly the stated bytes: a file that grows meanwhile must not overrun Content-Length.
      open: () => (size === 0 ? emptyBytes() : createReadStream(input, { start: 0, end: size - 1, highWaterMark: READ_CHUNK })),
    };
  }
  if (options.name === undefined || options.name === '') throw new TypeError('upload(): a name is needed for a Blob or a stream');
  if (input instanceof Blob) {
    const blob = input;
    return { name: options.name, size: blob.size, open: () => blob.stream() as unknown as AsyncIterable<Uint8Array> };
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
  };
}

async function* emptyBytes(): AsyncIterable<Uint8Array> {}
