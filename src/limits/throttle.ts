import { performance } from 'node:perf_hooks';
import { Transform, type TransformCallback } from 'node:stream';

/** Largest piece passed on at once, so a slow cap trickles instead of bursting whole chunks. */
const MAX_SLICE = 16 * 1024;
/** Time a stalled reader may make up at full speed once it reads again. */
const MAX_CATCH_UP_MS = 500;

/**
 * A Transform that passes bytes on at no more than `bytesPerSecond` on average: the slice
 * that starts at byte n leaves no earlier than n / bytesPerSecond after the first. It
 * holds one chunk at a time and waits while downstream is full, so memory stays flat
 * whatever the size of the file; a destroyed stream stops its timer at once.
 */
export class Throttle extends Transform {
  private readonly slice: number;
  private start = -1;
  private sent = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly bytesPerSecond: number) {
    super();
    if (!(bytesPerSecond > 0)) throw new RangeError('bytesPerSecond must be > 0');
    // About a tenth of a second per slice.
    this.slice = Math.max(1, Math.min(MAX_SLICE, Math.floor(bytesPerSecond / 10)));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.pass(chunk, 0, callback);
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    clearTimeout(this.timer);
    callback(error);
  }

  private pass(chunk: Buffer, offset: number, callback: TransformCallback): void {
    while (offset < chunk.length) {
      if (this.destroyed) return;
      const now = performance.now();
      if (this.start < 0) this.start = now;
      let due = this.start + (this.sent * 1000) / this.bytesPerSecond;
      if (now - due > MAX_CATCH_UP_MS) {
        // The reader stalled: forget the time it did not use beyond the allowance.
        this.start += now - due - MAX_CATCH_UP_MS;
        due = now - MAX_CATCH_UP_MS;
      }
      if (due > now) {
        this.timer = setTimeout(() => this.pass(chunk, offset, callback), due - now);
        return;
      }
      const piece = chunk.subarray(offset, offset + this.slice);
      offset += piece.length;
      this.sent += piece.length;
      this.push(piece);
    }
    callback();
  }
}
