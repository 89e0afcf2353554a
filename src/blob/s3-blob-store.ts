import { createHash, randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  ListPartsCommand,
  type ListPartsCommandOutput,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import {
  BlobNotFoundError,
  BlobStorageError,
  type BlobStore,
  BlobStoreUnavailableError,
  BlobTooLargeError,
  type ByteRange,
  type StagedBlob,
  type StagedInfo,
  type StoredBlobInfo,
} from './blob-store.js';
import { S3MultipartUpload } from './s3-multipart-upload.js';
import { PartBufferPool } from './s3-part-buffer-pool.js';

/** Options of an S3BlobStore. */
export interface S3BlobStoreOptions {
  /** The bucket (--s3-bucket); it must exist, the store never creates it. */
  bucket: string;
  /** Start of every object name the store writes or lists (--s3-prefix): '' or ending with '/'. */
  prefix: string;
  /** The client, as createS3Client builds it. */
  client: S3Client;
  /** Bytes per multipart part, at least 5 MiB (S3's minimum); a shorter upload is one PutObject. */
  partSize: number;
  /** Parts of one upload sent at once; also the spare part buffers all uploads share. */
  queueSize: number;
  /** Names per listing request (ListObjectsV2, ListMultipartUploads, ListParts); S3's 1000 unless a test wants pages. */
  listPageSize?: number;
}

/** Attempts per request (the SDK's standard retry), so a dead endpoint fails in seconds. */
const MAX_ATTEMPTS = 3;
/** Time to open a connection; an endpoint that drops packets fails instead of hanging. */
const CONNECTION_TIMEOUT_MS = 3_000;
/**
 * Connections to S3 at once (the SDK's default is 50): a download holds one for as long as
 * its client reads, so a thousand slow readers would queue every other request behind 50
 * (issue 28: headers 5.6 s late with 200 slow downloads).
 */
const MAX_SOCKETS = 1024;
/** The whole of init's check, retries included: a server refusing to start should say why soon. */
const INIT_TIMEOUT_MS = 10_000;
/** Object names the store makes: 128 random bits in hex, never anything from a request. */
const ID = /^[0-9a-f]{32}$/;
/**
 * The key of a blob a resumable upload wrote (s3-resumable-storage.ts): the
 * finished upload's object `<prefix>uploads/<32 hex>` becomes the blob where it is.
 */
const RESUMABLE_KEY = /^uploads\/[0-9a-f]{32}$/;
/** Where resumable uploads live, under the prefix. */
export const RESUMABLE_FOLDER = 'uploads/';
/** A listStaged handle: the object's id and the base64url upload id, so deleteStaged rebuilds both. */
const STAGED_HANDLE = /^([0-9a-f]{32})\.([A-Za-z0-9_-]{1,2048})$/;

/**
 * The S3Client of a store: credentials from the SDK's standard chain (AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY, profiles, instance roles), never from our flags. `checksums:
 * 'when_required'` keeps stream bodies out of aws-chunked framing with trailing CRC32,
 * which radosgw and many S3-compatible servers refuse (411 MissingContentLength).
 */
export function createS3Client(options: S3ClientOptions): S3Client {
  return new S3Client(s3ClientConfig(options));
}

/** How the store's client is set up (createS3Client). */
export interface S3ClientOptions {
  endpoint?: string;
  region?: string;
  forcePathStyle: boolean;
  checksums: 'when_required' | 'when_supported';
}

/** The configuration createS3Client uses, for a library that makes its own client (@tus/s3-store). */
export function s3ClientConfig(options: S3ClientOptions): S3ClientConfig {
  const checksums = options.checksums === 'when_required' ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED';
  return {
    endpoint: options.endpoint,
    // S3-compatible servers mostly ignore the region but the signature needs one; on AWS
    // without --s3-region the SDK's chain (AWS_REGION, profile) decides.
    region: options.region ?? (options.endpoint ? 'us-east-1' : undefined),
    forcePathStyle: options.forcePathStyle,
    requestChecksumCalculation: checksums,
    responseChecksumValidation: checksums,
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      httpAgent: { maxSockets: MAX_SOCKETS },
      httpsAgent: { maxSockets: MAX_SOCKETS },
    },
  };
}

/**
 * Blobs as objects `<prefix>blobs/<32 random hex>` in one bucket. An upload is written once,
 * under a fresh random name, and stays there: its key is that name, and the blob row records
 * digest -> key, so publishing is an existence check, never a copy of the bytes. Uploads are
 * multipart uploads (S3MultipartUpload; one PutObject for a file of one part); an unfinished
 * one (a crash, a stalled client) is what listStaged shows and gc aborts, and a finished one
 * that no row names is an orphan object gc finds through listBlobs.
 *
 * Memory: each upload has one buffer of partSize, and all uploads share queueSize spare ones
 * (PartBufferPool), so one upload alone has queueSize parts in flight and one filling, and
 * N uploads hold at most N + queueSize parts; when an upload has no free buffer its source
 * is not read. Nothing else holds a file's bytes; reads stream.
 */
export class S3BlobStore implements BlobStore {
  /**
   * The bucket, prefix and client, for the stores kept beside the blobs (thumbnails): they
   * share this client (its connections, its settings) instead of building another.
   */
  readonly location: { readonly bucket: string; readonly prefix: string; readonly client: S3Client };
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly base: string;
  private readonly client: S3Client;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly spareBuffers: PartBufferPool;
  private readonly pageSize: number | undefined;

  constructor(options: S3BlobStoreOptions) {
    if (options.prefix !== '' && (!options.prefix.endsWith('/') || options.prefix.startsWith('/'))) {
      throw new Error(`S3 prefix must be '' or end with '/' (and not start with one): ${options.prefix}`);
    }
    // S3's smallest part, checked at start rather than at the first upload.
    if (!Number.isInteger(options.partSize) || options.partSize < 5 * 1024 * 1024) throw new Error(`S3 part size must be at least 5 MiB: ${options.partSize}`);
    if (!Number.isInteger(options.queueSize) || options.queueSize < 1) throw new Error(`S3 queue size must be at least 1: ${options.queueSize}`);
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.base = `${options.prefix}blobs/`;
    this.client = options.client;
    this.partSize = options.partSize;
    this.queueSize = options.queueSize;
    this.spareBuffers = new PartBufferPool(options.partSize, options.queueSize);
    this.pageSize = options.listPageSize;
    this.location = { bucket: options.bucket, prefix: options.prefix, client: options.client };
  }

  async init(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(INIT_TIMEOUT_MS) });
    } catch (error) {
      throw new BlobStoreUnavailableError(await this.unavailableReason(error));
    }
  }

  /** The start's check again: HeadBucket changes nothing. */
  check(): Promise<void> {
    return this.init();
  }

  async stage(source: Readable, options: { maxBytes: number; signal?: AbortSignal }): Promise<StagedBlob> {
    const { maxBytes, signal } = options;
    const id = randomBytes(16).toString('hex');
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new BlobTooLargeError(maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const upload = new S3MultipartUpload({
      client: this.client,
      bucket: this.bucket,
      key: this.objectName(id),
      partSize: this.partSize,
      queueSize: this.queueSize,
      spareBuffers: this.spareBuffers,
    });
    // The upload ends (finish) once the object exists. A failure of the source, the meter or
    // the signal destroys it (pipeline does); a failed request of its own destroys it
    // itself, at once, so a stalled client is not waited for, and the pipeline destroys the
    // source (the request).
    let fed: { error: unknown } | undefined;
    try {
      await pipeline(source, meter, upload, { signal });
    } catch (error) {
      fed = { error };
    }
    // Requests on the way when it failed are not signalled (one landing after the clean-up
    // would leave an object or a part behind): the cost is waiting for at most queueSize parts.
    await upload.settled();
    if (upload.storageFailure || fed || signal?.aborted) {
      // Whatever failed, nothing stays: the multipart upload, or an object that was completed after all.
      const leftover = await this.removeUpload(id, upload.uploadId, upload.mayHaveObject);
      // Should S3 also refuse the abort that follows a client's failure, the S3 failure is
      // what gets reported: a server fault, and gc's to finish.
      const storageFailure = upload.storageFailure ?? leftover;
      if (storageFailure) throw new BlobStorageError('upload', storageFailure.error);
      if (fed) throw fed.error;
      // Aborted after the last byte arrived, while the upload finished.
      throw Object.assign(new Error('The operation was aborted', { cause: signal?.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
    }
    // CompleteMultipartUpload's ETag is empty on radosgw, so nothing here relies on it.
    return { sha256: hash.digest('hex'), size, handle: id };
  }

  keyFor(staged: StagedBlob): string {
    return this.checkId(staged.handle);
  }

  /**
   * A finished resumable upload (the object `<prefix>uploads/<id>`) as a staged blob: it
   * is published where it is, as an upload staged here would be, never copied.
   */
  adoptResumable(uploadId: string, digest: { sha256: string; size: number }): StagedBlob {
    return { sha256: digest.sha256, size: digest.size, handle: this.checkId(`${RESUMABLE_FOLDER}${uploadId}`) };
  }

  async publish(staged: StagedBlob): Promise<string> {
    const key = this.keyFor(staged);
    // The upload already wrote the object under its key: publishing checks it is still
    // there (gc may have taken an abandoned one).
    if (!(await this.has(key))) throw new BlobNotFoundError(key);
    return key;
  }

  async discard(staged: StagedBlob): Promise<void> {
    await this.delete(this.keyFor(staged));
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const name = this.objectName(key);
    let response: GetObjectCommandOutput;
    try {
      // RFC 9110 §14.1.2: inclusive first-last positions, as ByteRange is.
      response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: name, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
    } catch (error) {
      if (errorName(error) === 'NoSuchKey') throw new BlobNotFoundError(key);
      throw new BlobStorageError('read', error);
    }
    const body = response.Body;
    if (!(body instanceof Readable)) {
      // Not on Node; never leave a response unread.
      (body as { destroy?: () => void } | undefined)?.destroy?.();
      throw new BlobStorageError('read', new Error('the S3 response body is not a Node stream'));
    }
    // The body is the HTTP response itself (or the SDK's checksum stream over it, which
    // destroys it in turn): a caller that destroys it early frees the socket rather than
    // leaving it parked with unread bytes.
    return body;
  }

  async has(key: string): Promise<boolean> {
    // A key this store could never have made (a digest, from the local store) names nothing
    // here, as the local store answers for a key not shaped like a digest.
    if (!ID.test(key) && !RESUMABLE_KEY.test(key)) return false;
    const name = this.objectName(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: name }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw new BlobStorageError('head', error);
    }
  }

  async delete(key: string): Promise<void> {
    const name = this.objectName(key);
    try {
      // S3 answers 204 for a name that is not there.
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: name }));
    } catch (error) {
      throw new BlobStorageError('delete', error);
    }
  }

  async *listBlobs(): AsyncIterable<StoredBlobInfo> {
    // Paged by hand, as every listing here: the SDK's paginators follow the next-marker
    // whether or not the page says it is truncated, and radosgw always sends one
    // (ListParts loops forever on it).
    let token: string | undefined;
    for (let more = true; more; ) {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.base, ContinuationToken: token, MaxKeys: this.pageSize }));
      } catch (error) {
        throw new BlobStorageError('list', error);
      }
      for (const object of page.Contents ?? []) {
        const id = this.idOf(object.Key);
        if (id === null || object.Size === undefined) continue;
        yield { key: id, size: object.Size, modifiedAt: object.LastModified?.getTime() ?? 0 };
      }
      token = page.NextContinuationToken;
      more = truncated(page.IsTruncated, token);
    }
    // Finished resumable uploads are blobs too (adoptResumable); their `.info` and `.part`
    // records are not, and are left to the resumable store.
    const folder = `${this.prefix}${RESUMABLE_FOLDER}`;
    token = undefined;
    for (let more = true; more; ) {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: folder, ContinuationToken: token, MaxKeys: this.pageSize }));
      } catch (error) {
        throw new BlobStorageError('list', error);
      }
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(this.prefix.length);
        if (key === undefined || !RESUMABLE_KEY.test(key) || object.Size === undefined) continue;
        yield { key, size: object.Size, modifiedAt: object.LastModified?.getTime() ?? 0 };
      }
      token = page.NextContinuationToken;
      more = truncated(page.IsTruncated, token);
    }
  }

  async *listStaged(): AsyncIterable<StagedInfo> {
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (let more = true; more; ) {
      let page: ListMultipartUploadsCommandOutput;
      try {
        page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.base,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
            MaxUploads: this.pageSize,
          }),
        );
      } catch (error) {
        throw new BlobStorageError('list', error);
      }
      for (const upload of page.Uploads ?? []) {
        const id = this.idOf(upload.Key);
        if (id === null || !upload.UploadId) continue;
        const modifiedAt = await this.lastWrite(upload.Key!, upload.UploadId, upload.Initiated?.getTime() ?? 0);
        if (modifiedAt === null) continue;
        yield { handle: `${id}.${Buffer.from(upload.UploadId, 'utf8').toString('base64url')}`, modifiedAt };
      }
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
      more = truncated(page.IsTruncated, keyMarker);
    }
  }

  async deleteStaged(handle: string): Promise<void> {
    const match = STAGED_HANDLE.exec(handle);
    const uploadId = match ? Buffer.from(match[2]!, 'base64url').toString('utf8') : '';
    // The decoded id must be what listStaged encoded: canonical base64url of printable text.
    if (!match || !/^[\x21-\x7e]+$/.test(uploadId) || Buffer.from(uploadId, 'utf8').toString('base64url') !== match[2]) {
      throw new Error(`not a staged handle: ${handle}`);
    }
    await this.abortUpload(this.objectName(match[1]!), uploadId);
  }

  /**
   * When an unfinished upload last moved: the latest of its start and its parts' writes, so
   * a slow upload in progress stays fresh part by part. null when it went away meanwhile.
   */
  private async lastWrite(name: string, uploadId: string, initiated: number): Promise<number | null> {
    let latest = initiated;
    let marker: string | undefined;
    for (let more = true; more; ) {
      let page: ListPartsCommandOutput;
      try {
        page = await this.client.send(
          new ListPartsCommand({ Bucket: this.bucket, Key: name, UploadId: uploadId, PartNumberMarker: marker, MaxParts: this.pageSize }),
        );
      } catch (error) {
        // radosgw answers NoSuchKey where AWS says NoSuchUpload.
        if (isMissing(error)) return null;
        throw new BlobStorageError('list', error);
      }
      for (const part of page.Parts ?? []) latest = Math.max(latest, part.LastModified?.getTime() ?? 0);
      marker = page.NextPartNumberMarker;
      more = truncated(page.IsTruncated, marker);
    }
    return latest;
  }

  /**
   * Removes every trace of a failed upload: its multipart upload, and its object when a
   * request that creates one was sent. What cannot be removed now, gc finds later; a
   * refused abort is returned, for stage to report.
   */
  private async removeUpload(id: string, uploadId: string | undefined, mayHaveObject: boolean): Promise<{ error: unknown } | undefined> {
    const name = this.objectName(id);
    const [aborted] = await Promise.all([
      uploadId
        ? this.abortUpload(name, uploadId).then(
            () => undefined,
            (error: unknown) => ({ error }),
          )
        : undefined,
      mayHaveObject ? this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: name })).catch(() => {}) : undefined,
    ]);
    return aborted;
  }

  private async abortUpload(name: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: name, UploadId: uploadId }));
    } catch (error) {
      if (isMissing(error)) return;
      throw new BlobStorageError('abort', error);
    }
  }

  /** The object name of a key, validated so no name is ever built from raw input. */
  private objectName(key: string): string {
    return RESUMABLE_KEY.test(key) ? this.prefix + key : this.base + this.checkId(key);
  }

  private checkId(key: string): string {
    if (!ID.test(key) && !RESUMABLE_KEY.test(key)) throw new Error(`not an S3 blob key: ${key}`);
    return key;
  }

  /** The id of an object name shaped `<prefix>blobs/<32 hex>`, else null (left alone). */
  private idOf(name: string | undefined): string | null {
    if (!name?.startsWith(this.base)) return null;
    const id = name.slice(this.base.length);
    return ID.test(id) ? id : null;
  }

  /** One line naming the setting to fix (init runs at start, before any log is set up). */
  private async unavailableReason(error: unknown): Promise<string> {
    const status = statusOf(error);
    const name = errorName(error);
    const bucket = `S3 bucket "${this.bucket}"`;
    if (name === 'CredentialsProviderError') return `no S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile)`;
    if (status === 404 || name === 'NoSuchBucket') return `${bucket} does not exist (--s3-bucket)`;
    if (status === 401 || status === 403) return `${bucket} refused these credentials (HTTP ${status}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
    if (status === 301 || status === 307 || name === 'PermanentRedirect') return `${bucket} is in another region (--s3-region)`;
    if (status === undefined) {
      const endpoint = await this.endpointText();
      const code = (error as { code?: unknown } | null)?.code;
      const why =
        name === 'AbortError' || name === 'TimeoutError' ? `no answer within ${INIT_TIMEOUT_MS / 1000} s` : typeof code === 'string' ? code : oneLine(error);
      return `S3 endpoint ${endpoint} is unreachable (--s3-endpoint): ${why}`;
    }
    return `${bucket} cannot be used (HTTP ${status} ${name}): ${oneLine(error)}`;
  }

  private async endpointText(): Promise<string> {
    try {
      const endpoint = await this.client.config.endpoint?.();
      if (endpoint) return `${endpoint.protocol}//${endpoint.hostname}${endpoint.port ? `:${endpoint.port}` : ''}${endpoint.path === '/' ? '' : endpoint.path}`;
    } catch {
      // Only for the message.
    }
    return '(AWS default)';
  }
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'Error';
}

/** A missing object or upload: HEAD says NotFound (no body), the others NoSuchKey/NoSuchUpload. */
function isMissing(error: unknown): boolean {
  const name = errorName(error);
  return name === 'NotFound' || name === 'NoSuchKey' || name === 'NoSuchUpload';
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** Whether a listing goes on: truncated, with a marker to go on from (else it would loop). */
function truncated(isTruncated: boolean | undefined, marker: string | undefined): boolean {
  if (isTruncated !== true) return false;
  if (!marker) throw new BlobStorageError('list', new Error('a truncated S3 listing gave no marker to continue from'));
  return true;
}
