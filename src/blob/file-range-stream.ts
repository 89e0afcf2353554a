import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { RecyclableChunks } from './blob-store.js';
import { giveGrowth, inTurn, MIN_READ_BYTES, nextReadSize, takeGrowth } from './read-sizing.js';

/** Chunks a stream keeps for reuse: one being read, one read ahead, one on the socket. */
const POOL_SIZE = 3;
/**
 * Reads grow after this many chunks in a row were taken fast: the first chunk always is
 * (the read ahead starts as soon as it is sent), whatever the reader's speed.
 */
const GROW_AFTER = 2;

/**
 * A file's bytes, or an inclusive range of them, read into buffers that a consumer may
 * hand back with `recycle` once it is done with a chunk (its bytes have left for the
 * socket). A fresh Buffer per read is external memory, and V8 answers every ~64 MB of it
 * with a full collection: at disk speed, a mark-compact every few dozen milliseconds
 * (issue 9). A download that recycles reads into the same few buffers from start to end;
 * a consumer that never recycles (a pipe, a backup) loses nothing, the stream then
 * allocates as any file stream does.
 *
 * Reads are sized to the reader (read-sizing.ts, issue 28): they start at 64 KiB and
 * grow, doubling every other read up to 1 MiB, while the chunks are taken fast; a reader that
 * slows down gets smaller reads again. So a download read at 1 MB/s holds about 192 KiB,
 * and a fast one reads 1 MiB at a time. The stream reads one chunk ahead of its consumer,
 * whatever the size (its high-water mark is one byte), and its reads wait their turn
 * with every other download's (read-sizing.ts inTurn).
 */
export class FileRangeStream extends Readable implements RecyclableChunks {
  private position: number;
  private readonly end: number;
  private readonly pool: ArrayBuffer[] = [];
  /** The memory this stream handed out, so that a foreign buffer is never taken in. */
  private readonly lent = new WeakSet<ArrayBuffer>();
  private closing: Promise<void> | undefined;
  /** Bytes of the next read. */
  private size = MIN_READ_BYTES;
  /** Growth budget this stream holds: POOL_SIZE buffers' worth above MIN_READ_BYTES. */
  private grown = 0;
  /** When the last read was asked for, and how many bytes it brought: how fast the consumer takes them. */
  private lastAsked = 0;
  private lastBytes = 0;
  /** Chunks in a row taken fast enough for bigger reads. */
  private fastChunks = 0;

  constructor(
    private readonly file: FileHandle,
    range?: { start: number; end: number },
  ) {
    // One byte: whatever a chunk's size, the stream reads one chunk ahead, no more.
    super({ highWaterMark: 1 });
    this.position = range?.start ?? 0;
    this.end = range ? range.end + 1 : Infinity;
  }

  recycle(chunk: Buffer): void {
    const memory = chunk.buffer as ArrayBuffer;
    if (!this.lent.has(memory) || this.destroyed) return;
    this.lent.delete(memory);
    // A buffer of another size than the reads now (grown or shrunk meanwhile) goes.
    if (memory.byteLength !== this.size || this.pool.length >= POOL_SIZE) return;
    this.pool.push(memory);
  }

  override _read(): void {
    const now = performance.now();
    if (this.lastBytes > 0) this.adapt(nextReadSize(this.size, this.lastBytes, now - this.lastAsked));
    this.lastAsked = now;
    const wanted = Math.min(this.size, this.end - this.position);
    if (wanted <= 0) {
      this.push(null);
      return;
    }
    const memory = this.pool.pop() ?? Buffer.allocUnsafeSlow(this.size).buffer;
    const target = Buffer.from(memory, 0, wanted);
    inTurn(() => (this.destroyed ? Promise.resolve({ bytesRead: -1 }) : this.file.read(target, 0, wanted, this.position))).then(
      ({ bytesRead }) => {
        if (this.destroyed || bytesRead < 0) return;
        if (bytesRead === 0) {
          this.push(null);
          return;
        }
        this.position += bytesRead;
        this.lastBytes = bytesRead;
        this.lent.add(memory);
        this.push(bytesRead === wanted ? target : target.subarray(0, bytesRead));
      },
      (error: unknown) => this.destroy(error as Error),
    );
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.pool.length = 0;
    this.resize(MIN_READ_BYTES);
    this.closing ??= this.file.close();
    this.closing.then(
      () => done(error),
      (closeError: unknown) => done(error ?? (closeError as Error)),
    );
  }

  /** Shrinks at once; grows once GROW_AFTER chunks in a row asked for it. */
  private adapt(size: number): void {
    if (size <= this.size) {
      this.fastChunks = 0;
      this.resize(size);
    } else if (++this.fastChunks >= GROW_AFTER) {
      this.fastChunks = 0;
      this.resize(size);
    }
  }

  /** Moves to reads of `size` bytes, when the growth budget allows a bigger size. */
  private resize(size: number): void {
    if (size === this.size) return;
    const grown = POOL_SIZE * (size - MIN_READ_BYTES);
    if (grown > this.grown && !takeGrowth(grown - this.grown)) return;
    if (grown < this.grown) giveGrowth(this.grown - grown);
    this.grown = grown;
    this.size = size;
    // The pool's buffers are of the old size: they go (a recycled one of the old size too).
    this.pool.length = 0;
  }
}
