import { createSHA256, type IHasher } from 'hash-wasm';

/**
 * The SHA-256 of a resumable upload, computed as its bytes arrive, over as many requests,
 * servers and restarts as the upload takes: the hash's state is saved with the offset it
 * has reached (hash-wasm can save and load a state; node:crypto cannot), so the digest of
 * a finished upload needs no second read of its bytes. Measured on this machine:
 * docs/resumable-uploads.md has the figures.
 */

/** A saved hash state: the SHA-256 of bytes [0, at) can be continued from `state`. */
export interface DigestCheckpoint {
  /** Bytes hashed. */
  at: number;
  /** hash-wasm's saved state, base64. */
  state: string;
}

/**
 * Checkpoints kept per upload. The newest may be ahead of the bytes that reached storage
 * when a server dies (hashed, still in a buffer, or S3 parts still being sent, a few at a
 * time); an older one then still fits.
 */
export const KEPT_CHECKPOINTS = 8;

/** A running SHA-256 that can be saved and resumed. */
export class ResumableDigest {
  private constructor(
    private readonly hasher: IHasher,
    /** Bytes hashed so far. */
    public offset: number,
  ) {}

  /** A digest of nothing yet. */
  static async fresh(): Promise<ResumableDigest> {
    const hasher = await createSHA256();
    hasher.init();
    return new ResumableDigest(hasher, 0);
  }

  /** A digest continuing from a checkpoint; null when the state is unreadable. */
  static async resume(checkpoint: DigestCheckpoint): Promise<ResumableDigest | null> {
    const hasher = await createSHA256();
    try {
      hasher.load(Buffer.from(checkpoint.state, 'base64'));
    } catch {
      return null;
    }
    return new ResumableDigest(hasher, checkpoint.at);
  }

  update(chunk: Uint8Array): void {
    this.hasher.update(chunk);
    this.offset += chunk.length;
  }

  /** The state now, to save. */
  checkpoint(): DigestCheckpoint {
    return { at: this.offset, state: Buffer.from(this.hasher.save()).toString('base64') };
  }

  /** The hex digest; the digest cannot be updated afterwards. */
  hex(): string {
    return this.hasher.digest('hex');
  }
}

/** The checkpoints of a row; anything malformed reads as none (the digest then reads the bytes again). */
export function parseCheckpoints(json: string): DigestCheckpoint[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return value.filter(
    (item): item is DigestCheckpoint =>
      typeof item === 'object' && item !== null && Number.isSafeInteger(item.at) && item.at >= 0 && typeof item.state === 'string',
  );
}

/** The checkpoints to save: `latest` added, newest last, at most KEPT_CHECKPOINTS, none past `latest`. */
export function withCheckpoint(list: DigestCheckpoint[], latest: DigestCheckpoint): DigestCheckpoint[] {
  return [...list.filter((item) => item.at < latest.at), latest].slice(-KEPT_CHECKPOINTS);
}

/** The furthest checkpoint the stored bytes cover (`at` ≤ `stored`), or null. */
export function bestCheckpoint(list: DigestCheckpoint[], stored: number): DigestCheckpoint | null {
  let best: DigestCheckpoint | null = null;
  for (const item of list) if (item.at <= stored && (best === null || item.at > best.at)) best = item;
  return best;
}
