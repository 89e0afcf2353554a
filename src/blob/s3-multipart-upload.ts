import { Writable } from 'node:stream';
import {
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { PartBufferPool } from './s3-part-buffer-pool.js';

/** Where and how an S3MultipartUpload writes. */
export interface S3MultipartUploadOptions {
  /** The client every request goes through. */
  client: S3Client;
  /** The bucket of the object. */
  bucket: string;
  /** The object's full name. */
  key: string;
  /** Bytes per part (S3: at least 5 MiB); the size of every buffer. */
  partSize: number;
  /** UploadPart requests sent at once. */
  queueSize: number;
  /** Where buffers beyond the upload's own are borrowed, shared by the store's uploads (of partSize). */
  spareBuffers: PartBufferPool;
}

/** S3's most parts per multipart upload. */
const MAX_PARTS = 10_000;
/**
 * The first buffer starts at FIRST_BUFFER and grows fourfold until GROWN_BUFFER, then to
 * partSize: a small file costs about its size rather than a part, and a large one leaves
 * at most 1.3 MiB of garbage behind (doubling up to partSize would leave a part's worth).
 */
const FIRST_BUFFER = 64 * 1024;
const GROWN_BUFFER = 1024 * 1024;

/**
 * A Writable that stores what is written as one S3 object: one PutObject when it all fits
 * in a part, else a multipart upload with up to queueSize UploadParts at once, completed
 * in part order when the stream ends (the finish event means the object exists).
 *
 * Memory is one buffer of its own (grown to partSize) and up to queueSize more borrowed
 * from the store's PartBufferPool, shared by all its uploads: incoming chunks are copied in
 * and released at once, each part is sent as a view of its buffer, and the buffer goes back
 * (to this upload, or to the shared pool) when its UploadPart has finished. When no buffer
 * is free (or the first part waits for CreateMultipartUpload) the write callback waits, so
 * the writer (pipeline) stops reading its source: memory is bounded whatever the speeds of
 * the client and of S3, and whatever the number of uploads. The own buffer means an upload
 * always moves on, one part at a time, however many others hold the spare ones.
 * lib-storage's chunker instead concatenates each part into a fresh buffer, which V8 only
 * collects after tens of MiB more external memory (its fresh memory per part).
 *
 * Failures: the first failed request (after the SDK's retries) is `storageFailure` and
 * destroys the stream with its error, so a pipeline stops at once even while its source
 * stalls. After any failure or destroy no new request starts; the requests already on
 * the way are not signalled, since one that lands after a clean-up would leave an object
 * or a part behind (AWS: parts in progress may succeed after an abort). `settled()` waits
 * for them; what to remove then is `uploadId` and `mayHaveObject`.
 */
export class S3MultipartUpload extends Writable {
  /** The first request of this upload that failed for good, unless the stream was destroyed first. */
  storageFailure: { error: unknown } | undefined;
  /** The multipart upload's id once CreateMultipartUpload answered. */
  uploadId: string | undefined;
  /** Whether a request that creates the object (PutObject, CompleteMultipartUpload) was sent. */
  mayHaveObject = false;

  private readonly options: S3MultipartUploadOptions;
  /** This upload's own buffer, once made (it grows until partSize, replaced each time). */
  private own: Buffer | undefined;
  /** Buffers held and free: the own one when back, spare ones delivered while waiting. */
  private readonly free: Buffer[] = [];
  /** Spare buffers this upload holds, wherever they are (free, filled, ready, in flight). */
  private readonly borrowed = new Set<Buffer>();
  /** Cancels the wait for a spare buffer, while one is registered. */
  private cancelWait: (() => void) | undefined;
  /** Whether the shared pool was opened (it is closed once, at release). */
  private poolState: 'unused' | 'open' | 'closed' = 'unused';
  /** The buffer being filled, and how much of it is. */
  private current: { buffer: Buffer; filled: number } | undefined;
  /** Full parts waiting for a free slot or for the upload id. */
  private readonly ready: Array<{ number: number; buffer: Buffer; length: number }> = [];
  private partsDispatched = 0;
  private inFlight = 0;
  private readonly completed: CompletedPart[] = [];
  private creating = false;
  /** A write waiting for a buffer to come back to the pool, or for the upload id. */
  private waiter: (() => void) | undefined;
  /** final()'s callback, once every part is dispatched. */
  private finishing: ((error?: Error | null) => void) | undefined;
  /** Set at the first failure or destroy: nothing new is sent. */
  private stopped = false;
  /** Every request not yet settled. */
  private readonly requests = new Set<Promise<unknown>>();

  constructor(options: S3MultipartUploadOptions) {
    super();
    this.options = options;
  }

  /** Resolves when no request of this upload is on the way (none starts after a failure). */
  async settled(): Promise<void> {
    while (this.requests.size > 0) await Promise.allSettled([...this.requests]);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.fill(chunk, 0, done);
  }

  override _final(done: (error?: Error | null) => void): void {
    const { client, bucket, key } = this.options;
    if (this.partsDispatched === 0) {
      // All of it fits in one part: one request, as a small file should cost.
      const body = this.current ? this.current.buffer.subarray(0, this.current.filled) : Buffer.alloc(0);
      this.mayHaveObject = true;
      this.request(client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.length })), () => {
        this.release();
        done();
      });
      return;
    }
    // A part is dispatched only once a byte past it arrives, so the last one is never empty.
    if (this.current) this.dispatch(this.current.buffer, this.current.filled);
    this.current = undefined;
    this.finishing = done;
    this.pump();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.stopped = true;
    // A write waiting for a buffer is dropped with the stream; the buffers go to the collector
    // (those in flight once their requests settle).
    this.waiter = undefined;
    this.release();
    done(error);
  }

  /** Copies `chunk` from `offset` into the pool, waiting for a free buffer when none is. */
  private fill(chunk: Buffer, offset: number, done: (error?: Error | null) => void): void {
    const { partSize } = this.options;
    while (offset < chunk.length) {
      if (this.current && this.current.filled === partSize) {
        this.dispatch(this.current.buffer, partSize);
        this.current = undefined;
        if (this.stopped) return;
        if (this.uploadId === undefined) {
          // Nothing more is read until S3 has accepted the multipart upload: a store that
          // refuses fails before the client sends more, and what was read is on its way.
          this.waiter = () => this.fill(chunk, offset, done);
          return;
        }
      }
      if (!this.current) {
        const buffer = this.takeBuffer();
        if (!buffer) {
          this.waitForBuffer(() => this.fill(chunk, offset, done));
          return;
        }
        this.current = { buffer, filled: 0 };
      }
      const current = this.current;
      if (current.filled === current.buffer.length) {
        // Only the first buffer is ever short: grow it.
        const grown = Buffer.allocUnsafeSlow(current.buffer.length < GROWN_BUFFER ? Math.min(partSize, current.buffer.length * 4) : partSize);
        current.buffer.copy(grown, 0, 0, current.filled);
        current.buffer = grown;
        this.own = grown;
      }
      const copied = chunk.copy(current.buffer, current.filled, offset, Math.min(chunk.length, offset + current.buffer.length - current.filled));
      current.filled += copied;
      offset += copied;
    }
    done();
  }

  /**
   * A free buffer: one held, the own one when not made yet, else a spare one borrowed while
   * this upload holds fewer than queueSize of them; none when the shared pool has none.
   */
  private takeBuffer(): Buffer | undefined {
    const held = this.free.pop();
    if (held) return held;
    if (!this.own) {
      // It starts small, as most files are. Only the filled start of a buffer is ever sent,
      // so no buffer needs clearing.
      this.own = Buffer.allocUnsafeSlow(Math.min(FIRST_BUFFER, this.options.partSize));
      return this.own;
    }
    if (!this.mayBorrow()) return undefined;
    const spare = this.options.spareBuffers.borrow();
    if (spare) this.borrowed.add(spare);
    return spare;
  }

  private mayBorrow(): boolean {
    if (this.borrowed.size >= this.options.queueSize || this.poolState === 'closed') return false;
    if (this.poolState === 'unused') {
      this.options.spareBuffers.open();
      this.poolState = 'open';
    }
    return true;
  }

  /** Waits for the own buffer to come back, or for a spare one from the shared pool. */
  private waitForBuffer(then: () => void): void {
    this.waiter = then;
    if (this.cancelWait || !this.mayBorrow()) return;
    this.cancelWait = this.options.spareBuffers.wait((spare) => {
      this.cancelWait = undefined;
      this.borrowed.add(spare);
      this.free.push(spare);
      if (this.stopped) this.release();
      else this.resume();
    });
  }

  /** A part's buffer once its UploadPart settled: reused after a success, never after a failure (the request may still read it). */
  private partSettled(buffer: Buffer, succeeded: boolean): void {
    if (this.borrowed.delete(buffer)) {
      if (succeeded) this.options.spareBuffers.giveBack(buffer);
      else this.options.spareBuffers.forfeit();
    } else if (succeeded && !this.stopped) {
      const filling = this.current?.buffer;
      if (filling && this.borrowed.delete(filling)) {
        // The one being filled becomes the own one and the own one goes back: a client that
        // stalls mid-part then holds one buffer, not a spare the other uploads wait for.
        this.own = filling;
        this.options.spareBuffers.giveBack(buffer);
      } else {
        this.free.push(buffer);
      }
    }
    if (!this.stopped) this.resume();
  }

  /** Goes on with the write that waited for a buffer or for the upload id. */
  private resume(): void {
    this.cancelWait?.();
    this.cancelWait = undefined;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  /**
   * Drops every buffer this upload holds, the spare ones back to the shared pool (those of
   * requests on the way go back when they settle), and stops borrowing.
   */
  private release(): void {
    this.cancelWait?.();
    this.cancelWait = undefined;
    const held = [...this.free, ...this.ready.map((part) => part.buffer)];
    if (this.current) held.push(this.current.buffer);
    this.free.length = 0;
    this.ready.length = 0;
    this.current = undefined;
    for (const buffer of held) {
      if (this.borrowed.delete(buffer)) this.options.spareBuffers.giveBack(buffer);
    }
    if (this.poolState === 'open') this.options.spareBuffers.close();
    this.poolState = 'closed';
  }

  private dispatch(buffer: Buffer, length: number): void {
    if (this.partsDispatched === MAX_PARTS) {
      this.fail(new Error(`an upload of more than ${MAX_PARTS} parts of ${this.options.partSize} bytes: raise the S3 part size`));
      return;
    }
    this.partsDispatched += 1;
    this.ready.push({ number: this.partsDispatched, buffer, length });
    this.pump();
  }

  /** Starts what can start: the multipart upload, parts while slots are free, the completion. */
  private pump(): void {
    if (this.stopped) return;
    const { client, bucket, key, queueSize } = this.options;
    if (this.uploadId === undefined) {
      if (this.creating) return;
      this.creating = true;
      const created = client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key })).then((answer) => {
        // Recorded even when the upload stopped meanwhile: it is what the clean-up aborts.
        this.uploadId = answer.UploadId;
        if (!answer.UploadId) throw new Error('CreateMultipartUpload answered no UploadId');
      });
      this.request(created, () => {
        this.pump();
        this.resume();
      });
      return;
    }
    const uploadId = this.uploadId;
    while (this.inFlight < queueSize && this.ready.length > 0) {
      const part = this.ready.shift()!;
      this.inFlight += 1;
      const body = part.buffer.subarray(0, part.length);
      const sent = client.send(
        new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: part.number, Body: body, ContentLength: part.length }),
      );
      // The buffer goes back however the request ends, also after a stop: a spare one is the pool's.
      const settled = sent.then(
        (answer) => {
          this.partSettled(part.buffer, true);
          return answer;
        },
        (error: unknown) => {
          this.partSettled(part.buffer, false);
          throw error;
        },
      );
      this.request(settled, ({ ETag }) => {
        this.inFlight -= 1;
        this.completed.push({ PartNumber: part.number, ETag });
        this.pump();
      });
    }
    const finishing = this.finishing;
    if (finishing && this.inFlight === 0 && this.ready.length === 0) {
      this.finishing = undefined;
      this.mayHaveObject = true;
      const parts = [...this.completed].sort((a, b) => a.PartNumber! - b.PartNumber!);
      this.request(client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } })), () => {
        this.release();
        finishing();
      });
    }
  }

  /** Tracks a request until it settles; a failure fails the upload, a success runs `then` unless stopped. */
  private request<T>(sent: Promise<T>, then: (result: T) => void): void {
    const tracked = sent.then(
      (result) => {
        if (!this.stopped) then(result);
      },
      (error: unknown) => this.fail(error),
    );
    this.requests.add(tracked);
    void tracked.finally(() => this.requests.delete(tracked));
  }

  private fail(error: unknown): void {
    if (this.stopped || this.destroyed) return;
    this.storageFailure = { error };
    this.stopped = true;
    this.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}
