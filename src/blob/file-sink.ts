import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';

/**
 * Bytes a FileSink holds: the write on the disk and the chunks waiting for it. Not smaller
 * (issue 9): an upload's socket chunks are Node's own fresh Buffers, which live on until
 * V8's next collection, and 512 KiB batches cost uploads about 6% for a few MB.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;

export interface FileSinkOptions {
  /** Opens the file, before the first write. */
  open: () => Promise<FileHandle>;
  /** Where the first byte goes; the writes follow one another from there. */
  position: number;
  /** fsync before the stream finishes, so an acknowledged write is durable. */
  sync: boolean;
  /** Turns a failure of the file itself (open, write, fsync, close) into the caller's error. */
  failure: (step: 'open' | 'write' | 'fsync' | 'close', cause: unknown) => Error;
}

/**
 * A file as a Writable that writes in batches: chunks that arrive while a write is on the
 * disk wait here and go down together in the next one (_writev), a few large writes
 * rather than one per 64 KiB socket chunk. The write on the disk and those waiting make
 * at most WRITE_BATCH_BYTES and one more chunk. The file is closed when the stream ends
 * however it ends; `written` counts the bytes the disk took.
 */
export class FileSink extends Writable {
  private file: FileHandle | undefined;
  private position: number;
  /** Bytes written so far. */
  written = 0;

  constructor(private readonly options: FileSinkOptions) {
    super({ highWaterMark: WRITE_BATCH_BYTES });
    this.position = options.position;
  }

  override _construct(done: (error?: Error | null) => void): void {
    this.options.open().then(
      (file) => {
        this.file = file;
        done();
      },
      (error: unknown) => done(this.options.failure('open', error)),
    );
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.writeAll([chunk], done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: (error?: Error | null) => void): void {
    this.writeAll(
      chunks.map((entry) => entry.chunk),
      done,
    );
  }

  override _final(done: (error?: Error | null) => void): void {
    if (!this.options.sync) {
      done();
      return;
    }
    this.file!.sync().then(
      () => done(),
      (error: unknown) => done(this.options.failure('fsync', error)),
    );
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    const file = this.file;
    this.file = undefined;
    if (!file) {
      done(error);
      return;
    }
    file.close().then(
      () => done(error),
      (closeError: unknown) => done(error ?? this.options.failure('close', closeError)),
    );
  }

  private writeAll(chunks: Buffer[], done: (error?: Error | null) => void): void {
    writeFully(this.file!, chunks, this.position).then(
      (bytes) => {
        this.position += bytes;
        this.written += bytes;
        done();
      },
      (error: unknown) => done(this.options.failure('write', error)),
    );
  }
}

/** Writes all of `chunks` at `position`, in one writev when the disk takes it all; the bytes written. */
async function writeFully(file: FileHandle, chunks: Buffer[], position: number): Promise<number> {
  const left = [...chunks];
  let total = 0;
  while (left.length > 0) {
    let { bytesWritten } = await file.writev(left, position + total);
    total += bytesWritten;
    // A write may take fewer bytes than asked: go on from where it stopped.
    while (left.length > 0 && bytesWritten >= left[0]!.length) bytesWritten -= left.shift()!.length;
    if (bytesWritten > 0) left[0] = left[0]!.subarray(bytesWritten);
  }
  return total;
}
