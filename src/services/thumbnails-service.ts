import type { Readable } from 'node:stream';
import type { ThumbnailStore } from '../blob/thumbnail-store.js';
import type { FileRecord } from '../domain/types.js';
import type { DownloadsService } from './downloads-service.js';

export interface ThumbnailsServiceDeps {
  thumbs: ThumbnailStore;
  /** Opens a file's bytes. */
  downloads: Pick<DownloadsService, 'open'>;
  log: (error: unknown, message: string) => void;
  /** Limits; THUMBNAIL_LIMITS unless a test changes them. */
  limits?: Partial<ThumbnailLimits>;
}

/** What a thumbnail may cost (SECURITY.md "Thumbnails"). */
export interface ThumbnailLimits {
  /** Largest file read to make one: the whole file is held while it is decoded. */
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

/** The content is not one a thumbnail is made of (not an image, too big, refused by the decoder). */
class NoThumbnail extends Error {
  override name = 'NoThumbnail';
}

/**
 * Thumbnails of image files (README "Thumbnails"): made once per content digest with
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
    const input = await this.readImage(await this.deps.downloads.open(file));
    const { default: sharp } = await import('sharp');
    try {
      const image = sharp(input, { limitInputPixels: this.limits.maxInputPixels, failOn: 'error', sequentialRead: true });
      const { format } = await image.metadata();
      if (!FORMATS.has(format)) throw new NoThumbnail(`not a thumbnail format: ${format}`);
      return await image
        .rotate()
        .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 75 })
        .toBuffer();
    } catch (error) {
      // Anything the decoder says about the input (corrupt, truncated, too many pixels) is
      // about the content, which will not change: remembered, never retried.
      if (error instanceof NoThumbnail) throw error;
      throw new NoThumbnail(error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * The file's bytes, read only as far as needed: a stream that does not start like an
   * image is left after its first chunk. Bounded by maxInputBytes (the file's size was
   * checked, and the count is checked again in case the stored bytes differ).
   */
  private async readImage(source: Readable): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let length = 0;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        chunks.push(Buffer.from(chunk));
        length += chunk.length;
        if (length > this.limits.maxInputBytes) throw new NoThumbnail('too large');
        if (chunks.length === 1 && length >= 16 && !looksLikeImage(chunks[0]!)) throw new NoThumbnail('not an image');
      }
    } finally {
      source.destroy();
    }
    const whole = Buffer.concat(chunks, length);
    if (!looksLikeImage(whole)) throw new NoThumbnail('not an image');
    return whole;
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
