import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { RecyclableChunks } from './blob-store.js';

/** Chunks a stream keeps for reuse: one being read, one read ahead, one on the socket. */
const POOL_SIZE = 3;

/**
 * A file's bytes, or an inclusive range of them, read `chunkSize` at a time into buffers
 * that a consumer may hand back with `recycle` once it is done with a chunk (its bytes
 * have left for the socket). A fresh Buffer per read is external memory, and V8 answers
 * every ~64 MB of it with a full collection: at disk speed, a mark-compact every few
 * dozen milliseconds (issue 9). A download that recycles reads into the same few buffers
 * from start to end; a consumer that never recycles (a pipe, a backup) loses nothing,
 * the stream then allocates as any file stream does.
 */
export class FileRangeStream extends Readable implements RecyclableChunks {
  private position: number;
  private readonly end: number;
  private readonly pool: ArrayBuffer[] = [];
  /** The memory this stream handed out, so that a foreign buffer is never taken in. */
  private readonly lent = new WeakSet<ArrayBuffer>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly file: FileHandle,
    private readonly chunkSize: number,
    range?: { start: number; end: number },
  ) {
    super({ highWaterMark: chunkSize });
    this.position = range?.start ?? 0;
    this.end = range ? range.end + 1 : Infinity;
  }

  recycle(chunk: Buffer): void {
    const memory = chunk.buffer as ArrayBuffer;
    if (!this.lent.has(memory) || this.destroyed || this.pool.length >= POOL_SIZE) return;
    this.lent.delete(memory);
    this.pool.push(memory);
  }

  override _read(): void {
    const wanted = Math.min(this.chunkSize, this.end - this.position);
    if (wanted <= 0) {
      this.push(null);
      return;
    }
    const memory = this.pool.pop() ?? Buffer.allocUnsafeSlow(this.chunkSize).buffer;
    const target = Buffer.from(memory, 0, wanted);
    this.file.read(target, 0, wanted, this.position).then(
      ({ bytesRead }) => {
        if (this.destroyed) return;
        if (bytesRead === 0) {
          this.push(null);
          return;
        }
        this.position += bytesRead;
        this.lent.add(memory);
        this.push(bytesRead === wanted ? target : target.subarray(0, bytesRead));
      },
      (error: unknown) => this.destroy(error as Error),
    );
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.pool.length = 0;
    this.closing ??= this.file.close();
    this.closing.then(
      () => done(error),
      (closeError: unknown) => done(error ?? (closeError as Error)),
    );
  }
}
