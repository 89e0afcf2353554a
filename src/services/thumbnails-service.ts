import type { Readable } from 'node:stream';
import type { ThumbnailStore } from '../blob/thumbnail-store.js';
import type { MetadataStore } from '../db/repositories/repositories.js';
import { type Clock, ID_PATTERN } from '../domain/ids.js';
import { type FileRecord, FileStatus, isExpired } from '../domain/types.js';
import type { FileBytes } from '../downloads/file-bytes.js';

export interface ThumbnailsServiceDeps {
  thumbs: ThumbnailStore;
  /** Where the file a thumbnail URL names is looked up. */
  store: Pick<MetadataStore, 'files'>;
  /** Opens a file's bytes. */
  downloads: FileBytes;
  /** Expired files have no thumbnail (they behave as deleted). */
  clock: Clock;
  log: (error: unknown, message: string) => void;
  /** Limits; THUMBNAIL_LIMITS unless a test changes them. */
  limits?: Partial<ThumbnailLimits>;
}

/** What a thumbnail may cost (SECURITY.md "Thumbnails"). */
export interface ThumbnailLimits {
  /** Largest file read to make one: the whole file is held (once, no copies) while it is decoded. */
  maxInputBytes: number;
  /** Most pixels an image may declare (sharp's limitInputPixels): refuses decompression bombs before decoding. */
  maxInputPixels: number;
  /** Thumbnails made at once in this process; more wait their turn. */
  concurrency: number;
  /** Requests that may wait for a turn; beyond that, the fallback at once. */
  maxWaiting: number;
}

export const THUMBNAIL_LIMITS: ThumbnailLimits = {
  maxInputBytes: 32 * 1024 * 1024,
  maxInputPixels: 40_000_000,
  concurrency: 2,
  maxWaiting: 32,
};

/** The longest side of a thumbnail, in pixels. */
export const THUMBNAIL_SIZE = 256;
/** Changes when the way thumbnails are made changes, so URLs (and caches) change too. */
export const THUMBNAIL_VERSION = 1;

/** The part of a thumbnail URL that names the content: a new digest (or a new way of making thumbnails) is a new URL. */
export const thumbnailKey = (file: Pick<FileRecord, 'sha256'>) => `${THUMBNAIL_VERSION}-${file.sha256.slice(0, 20)}`;

/** The file a thumbnail URL names, or why it names none. */
export type ThumbnailTarget =
  | { kind: 'file'; file: FileRecord }
  /** No such active file (unknown, deleted or blocked). */
  | { kind: 'missing' }
  /** The file exists but the key is not its current one: an old or made-up URL. */
  | { kind: 'outdated' };

/** A file's thumbnail, or why it has none. */
export type Thumbnail =
  | { kind: 'image'; contentType: 'image/webp'; bytes: Buffer }
  /** No thumbnail: `lasting` when the content can never have one (not an image, too big, refused), else a failure worth trying again later. */
  | { kind: 'none'; lasting: boolean };

/** Decoders allowed, by sharp's format name: raster images browsers show. Never SVG (a document, not pixels) or PDF. */
const FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'avif', 'heif', 'tiff']);

/**
 * Signatures of the allowed formats, checked on the first bytes before anything is
 * handed to the decoder: other files are never decoded at all.
 */
function looksLikeImage(head: Buffer): boolean {
  const at = (offset: number, bytes: number[]) => bytes.every((byte, i) => head[offset + i] === byte);
  const ascii = (offset: number, text: string) => head.subarray(offset, offset + text.length).toString('latin1') === text;
  return (
    at(0, [0xff, 0xd8, 0xff]) || // JPEG
    at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) || // PNG
    ascii(0, 'GIF87a') ||
    ascii(0, 'GIF89a') ||
    (ascii(0, 'RIFF') && ascii(8, 'WEBP')) ||
    (ascii(4, 'ftyp') && ['avif', 'avis', 'heic', 'heix', 'mif1'].includes(head.subarray(8, 12).toString('latin1'))) ||
    at(0, [0x49, 0x49, 0x2a, 0x00]) || // TIFF, little-endian
    at(0, [0x4d, 0x4d, 0x00, 0x2a]) // TIFF, big-endian
  );
}

/** Bytes looksLikeImage reads (the longest signature ends at 12). */
const SIGNATURE_BYTES = 16;

let sharpLoaded: Promise<typeof import('sharp')['default']> | undefined;

/**
 * sharp, loaded on first use and set up once for this process: one libvips thread per
 * image (sharp.concurrency(1)), so two thumbnails take two cores at most and never starve
 * libuv's thread pool (file reads, hashing) on a small server; no operation cache, since
 * each image is decoded once (the cache would only hold memory).
 */
function loadSharp(): Promise<typeof import('sharp')['default']> {
  sharpLoaded ??= import('sharp').then(({ default: sharp }) => {
    sharp.concurrency(1);
    sharp.cache(false);
    return sharp;
  });
  return sharpLoaded;
}

/** The content is not one a thumbnail is made of (not an image, too big, refused by the decoder). */
class NoThumbnail extends Error {
  override name = 'NoThumbnail';
}

/**
 * Thumbnails of image files (docs/web.md "Thumbnails"): made once per content digest with
 * sharp (a bounded WebP of at most THUMBNAIL_SIZE pixels a side, EXIF orientation
 * applied, metadata dropped), stored in the ThumbnailStore and served from there after.
 * Content that can have none (not an image by its first bytes, larger than the limit, an
 * image declaring too many pixels, one the decoder refuses) is remembered with an empty
 * marker, so it is never tried again; a storage failure is not remembered.
 */
export class ThumbnailsService {
  private readonly limits: ThumbnailLimits;
  /** Thumbnails being made, by digest: concurrent requests for one share the work. */
  private readonly inFlight = new Map<string, Promise<Thumbnail>>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly deps: ThumbnailsServiceDeps) {
    this.limits = { ...THUMBNAIL_LIMITS, ...deps.limits };
  }

  /**
   * The active file a thumbnail URL (`/thumb/<id>/<key>`) names: blocked, deleted and
   * expired files have none, and a key other than the file's current one names nothing.
   */
  async target(id: string, key: string): Promise<ThumbnailTarget> {
    const file = ID_PATTERN.test(id) ? await this.deps.store.files.byId(id) : null;
    if (!file || file.status !== FileStatus.Active || isExpired(file, this.deps.clock())) return { kind: 'missing' };
    if (key !== thumbnailKey(file)) return { kind: 'outdated' };
    return { kind: 'file', file };
  }

  /** The thumbnail of a file's content (the caller decides who may see the file). */
  async of(file: FileRecord): Promise<Thumbnail> {
    let pending = this.inFlight.get(file.sha256);
    if (!pending) {
      pending = this.storedOrMade(file).finally(() => this.inFlight.delete(file.sha256));
      this.inFlight.set(file.sha256, pending);
    }
    return pending;
  }

  private async storedOrMade(file: FileRecord): Promise<Thumbnail> {
    try {
      const stored = await this.deps.thumbs.get(file.sha256);
      if (stored) return stored.length > 0 ? { kind: 'image', contentType: 'image/webp', bytes: stored } : { kind: 'none', lasting: true };
      // Too big is decided by the size alone: nothing to read, nothing to remember.
      if (file.size > this.limits.maxInputBytes) return { kind: 'none', lasting: true };
      if (this.running >= this.limits.concurrency && this.waiting.length >= this.limits.maxWaiting) return { kind: 'none', lasting: false };
      await this.turn();
      let bytes: Buffer;
      try {
        bytes = await this.make(file);
      } catch (error) {
        if (!(error instanceof NoThumbnail)) throw error;
        bytes = Buffer.alloc(0);
      } finally {
        this.done();
      }
      await this.deps.thumbs.put(file.sha256, bytes);
      return bytes.length > 0 ? { kind: 'image', contentType: 'image/webp', bytes } : { kind: 'none', lasting: true };
    } catch (error) {
      this.deps.log(error, `thumbnail of ${file.id} failed`);
      return { kind: 'none', lasting: false };
    }
  }

  /** The WebP thumbnail of the file's bytes; NoThumbnail when the content can have none. */
  private async make(file: FileRecord): Promise<Buffer> {
    const sharp = await loadSharp();
    const input = await this.readImage(await this.deps.downloads.open(file), file.size);
    try {
      const image = sharp(input, { limitInputPixels: this.limits.maxInputPixels, failOn: 'error', sequentialRead: true });
      const { format } = await image.metadata();
      if (!FORMATS.has(format)) throw new NoThumbnail(`not a thumbnail format: ${format}`);
      return await image.rotate().resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 75 }).toBuffer();
    } catch (error) {
      // Anything the decoder says about the input (corrupt, truncated, too many pixels) is
      // about the content, which will not change: remembered, never retried.
      if (error instanceof NoThumbnail) throw error;
      throw new NoThumbnail(error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * The file's bytes, read into one buffer of the file's size (checked against
   * maxInputBytes before): each chunk is copied once into it and let go, so a job holds
   * the file once, never chunks and their concatenation. The signature is checked as soon
   * as 16 bytes are in, whatever the chunk sizes: a stream that does not start like an
   * image is left there. Stored bytes longer than the file's size are a storage fault
   * (not remembered), never a larger buffer.
   */
  private async readImage(source: Readable, size: number): Promise<Buffer> {
    const whole = Buffer.allocUnsafe(size);
    let length = 0;
    let checked = false;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        if (length + chunk.length > size) throw new Error(`the stored bytes are longer than the file's ${size} bytes`);
        chunk.copy(whole, length);
        length += chunk.length;
        if (!checked && length >= SIGNATURE_BYTES) {
          checked = true;
          if (!looksLikeImage(whole.subarray(0, SIGNATURE_BYTES))) throw new NoThumbnail('not an image');
        }
      }
    } finally {
      source.destroy();
    }
    const read = whole.subarray(0, length);
    if (!checked && !looksLikeImage(read)) throw new NoThumbnail('not an image');
    return read;
  }

  private async turn(): Promise<void> {
    if (this.running < this.limits.concurrency) {
      this.running += 1;
      return;
    }
    // The slot is handed over by done(): running stays the same.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private done(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}
