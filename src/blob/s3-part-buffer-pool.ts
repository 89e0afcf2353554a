/**
 * The spare part buffers shared by every upload of one S3 store. Each upload fills a buffer
 * of its own (S3MultipartUpload makes it, small first); a buffer beyond that one, to fill a
 * part while others are in flight, is borrowed here, and at most `spare` are lent at once
 * across all uploads. So N uploads hold at most (N + spare) parts, not N × (queueSize + 1),
 * and a slow or stalled client cannot starve the others: its own buffer is always there, and
 * what it borrows comes back as soon as its parts are sent.
 *
 * Returned buffers are reused (a fresh part-sized buffer per part would be external memory
 * V8 collects late) while some upload uses the pool, and dropped when the last one ends, so
 * an idle server holds none.
 */
export class PartBufferPool {
  readonly partSize: number;
  readonly spare: number;
  private readonly free: Buffer[] = [];
  private lent = 0;
  private users = 0;
  /** Uploads waiting for a spare buffer, first come first served. */
  private readonly waiting: Array<(buffer: Buffer) => void> = [];

  constructor(partSize: number, spare: number) {
    this.partSize = partSize;
    this.spare = spare;
  }

  /** Buffers lent now (for tests). */
  get lentCount(): number {
    return this.lent;
  }

  /** An upload starts borrowing; `close` when it will borrow no more. */
  open(): void {
    this.users += 1;
  }

  close(): void {
    this.users -= 1;
    if (this.users === 0) this.free.length = 0;
  }

  /** A spare buffer, or undefined when `spare` are lent already. */
  borrow(): Buffer | undefined {
    if (this.lent >= this.spare || this.waiting.length > 0) return undefined;
    this.lent += 1;
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.partSize);
  }

  /** Calls `wake` with a buffer once one comes back, unless the returned function cancels it first. */
  wait(wake: (buffer: Buffer) => void): () => void {
    this.waiting.push(wake);
    return () => {
      const index = this.waiting.indexOf(wake);
      if (index >= 0) this.waiting.splice(index, 1);
    };
  }

  /** A borrowed buffer back, free to be reused: the first waiter gets it. */
  giveBack(buffer: Buffer): void {
    const next = this.waiting.shift();
    if (next) {
      next(buffer);
      return;
    }
    this.lent -= 1;
    if (this.users > 0) this.free.push(buffer);
  }

  /** A borrowed buffer that a failed request may still read: never reused, its place is lent again. */
  forfeit(): void {
    const next = this.waiting.shift();
    if (next) {
      next(Buffer.allocUnsafeSlow(this.partSize));
      return;
    }
    this.lent -= 1;
  }
}
