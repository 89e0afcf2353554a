import { createHash, type Hash } from 'node:crypto';
import { createSHA256, type IHasher } from 'hash-wasm';

/**
 * The SHA-256 of a resumable upload, computed as its bytes arrive, over as many requests,
 * servers and restarts as the upload takes. Two hashers: node:crypto's, about four times
 * as fast, for bytes that arrive in order in one process (NativeDigest, kept between the
 * requests of an upload in LiveDigests); and hash-wasm's, whose state can be saved with
 * the offset it reached (node:crypto's cannot), for an upload that goes on in another
 * process (after a crash, or on another server). docs/resumable-uploads.md has the figures.
 */

/** A running SHA-256 at `offset` bytes. */
export interface RunningDigest {
  /** Bytes hashed so far. */
  readonly offset: number;
  update(chunk: Uint8Array): void;
  /** The hex digest; the digest cannot be updated afterwards. */
  hex(): string;
}

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
export class ResumableDigest implements RunningDigest {
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

/** node:crypto's SHA-256: fast, but its state lives and dies with this process. */
export class NativeDigest implements RunningDigest {
  private readonly hash: Hash = createHash('sha256');
  offset = 0;

  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.offset += chunk.length;
  }

  hex(): string {
    return this.hash.digest('hex');
  }
}

/**
 * The digests of this process's uploads between their requests, each at the offset its
 * last write stored: the next request of the upload that lands here goes on with it
 * rather than with a saved state. An entry is taken out for a write and put back only
 * when the store took exactly the bytes hashed, so an entry never covers bytes the store
 * does not hold. Bounded: the oldest go first (their uploads then resume from a saved
 * state, or by reading their bytes again).
 */
export class LiveDigests {
  private readonly digests = new Map<string, RunningDigest>();

  constructor(private readonly capacity = 1024) {}

  /** The digest of upload `id` at exactly `offset`, taken out; undefined when there is none at that offset. */
  take(id: string, offset: number): RunningDigest | undefined {
    const digest = this.digests.get(id);
    if (!digest) return undefined;
    this.digests.delete(id);
    return digest.offset === offset ? digest : undefined;
  }

  /** Keeps the digest of upload `id` for its next request in this process. */
  put(id: string, digest: RunningDigest): void {
    this.digests.delete(id);
    this.digests.set(id, digest);
    if (this.digests.size > this.capacity) this.digests.delete(this.digests.keys().next().value!);
  }

  /** Forgets upload `id` (stored, ended, expired). */
  drop(id: string): void {
    this.digests.delete(id);
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
