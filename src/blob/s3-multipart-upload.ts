import { Writable } from 'node:stream';
import {
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

/** Where and how an S3MultipartUpload writes. */
export interface S3MultipartUploadOptions {
  /** The client every request goes through. */
  client: S3Client;
  /** The bucket of the object. */
  bucket: string;
  /** The object's full name. */
  key: string;
  /** Bytes per part (S3: at least 5 MiB); the size of every buffer of the pool. */
  partSize: number;
  /** UploadPart requests sent at once. */
  queueSize: number;
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
 * Memory is a pool of at most queueSize + 1 buffers of partSize, reused for the whole
 * upload: incoming chunks are copied in and released at once, each part is sent as a view
 * of its buffer, and the buffer goes back to the pool when its UploadPart has finished.
 * When every buffer is busy (or the first part waits for CreateMultipartUpload) the write
 * callback waits, so the writer (pipeline) stops reading its source: memory is bounded
 * whatever the speeds of the client and of S3.
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
  /** Buffers of partSize that are free; `allocated` counts those made so far, free or not. */
  private readonly pool: Buffer[] = [];
  private allocated = 0;
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
          this.waiter = () => this.fill(chunk, offset, done);
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
      }
      const copied = chunk.copy(current.buffer, current.filled, offset, Math.min(chunk.length, offset + current.buffer.length - current.filled));
      current.filled += copied;
      offset += copied;
    }
    done();
  }

  /** A free buffer: from the pool, newly made while fewer than queueSize + 1 exist, else none. */
  private takeBuffer(): Buffer | undefined {
    const pooled = this.pool.pop();
    if (pooled) return pooled;
    if (this.allocated >= this.options.queueSize + 1) return undefined;
    this.allocated += 1;
    // The first buffer starts small, as most files are; the others are whole parts. Only
    // the filled start of a buffer is ever sent, so its contents need no clearing.
    return Buffer.allocUnsafeSlow(this.allocated === 1 ? Math.min(FIRST_BUFFER, this.options.partSize) : this.options.partSize);
  }

  private giveBack(buffer: Buffer): void {
    if (this.stopped) return;
    this.pool.push(buffer);
    this.resume();
  }

  /** Goes on with the write that waited for a buffer or for the upload id. */
  private resume(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  /** Drops every buffer this upload holds (not those of requests on the way). */
  private release(): void {
    this.pool.length = 0;
    this.ready.length = 0;
    this.current = undefined;
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
      this.request(
        client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: part.number, Body: body, ContentLength: part.length })),
        ({ ETag }) => {
          this.inFlight -= 1;
          this.completed.push({ PartNumber: part.number, ETag });
          this.giveBack(part.buffer);
          this.pump();
        },
      );
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
