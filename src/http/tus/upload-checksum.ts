import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, errors } from '../../domain/errors.js';

/** tus's checksum extension: the algorithms a PATCH may name in Upload-Checksum. */
export const CHECKSUM_ALGORITHMS = ['md5', 'sha1', 'sha256'] as const;

/** tus: the status of a body whose checksum does not match. */
const CHECKSUM_MISMATCH = 460;

/**
 * The most a PATCH with Upload-Checksum may carry: it is spooled to a temporary file before
 * it is stored, so it is bounded (clients that send checksums send chunks).
 */
export const CHECKSUMMED_BODY_LIMIT = 256 * 1024 * 1024;

/** A request body spooled to a temporary file and found to match its Upload-Checksum. */
export interface VerifiedBody {
  size: number;
  /** The bytes, once; the file goes when `discard` is called. */
  open(): Readable;
  discard(): Promise<void>;
}

/**
 * Checks a PATCH body against its `Upload-Checksum: <algorithm> <base64 digest>` before any
 * of it reaches the upload (tus: a mismatched chunk must not be stored): the body streams
 * to a temporary file while it is hashed, so memory stays flat; on a match the upload is
 * written from that file. A request without the header never takes this detour. Refuses
 * an unknown algorithm, a malformed digest, a body past `maxBytes` (413) and a mismatch
 * (460), keeping nothing.
 */
export async function verifyChecksum(body: Readable, header: string, maxBytes: number): Promise<VerifiedBody> {
  const match = /^\s*([a-z0-9-]+)\s+([A-Za-z0-9+/]+={0,2})\s*$/.exec(header);
  if (!match) throw errors.uploadMalformed('Upload-Checksum must be "<algorithm> <base64 digest>"');
  const algorithm = match[1] as (typeof CHECKSUM_ALGORITHMS)[number];
  if (!CHECKSUM_ALGORITHMS.includes(algorithm))
    throw new ApiError('errorUploadFaild', 400, `Upload failed: checksum algorithm ${match[1]} is not supported (${CHECKSUM_ALGORITHMS.join(', ')})`);
  const expected = Buffer.from(match[2]!, 'base64');
  const file = path.join(tmpdir(), `filehaven-chunk-${randomBytes(12).toString('hex')}`);
  const hash = createHash(algorithm);
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new ApiError('errorFileSize', 413, "Upload failed: the request carries more bytes than the upload's length"));
      if (size > CHECKSUMMED_BODY_LIMIT)
        return done(
          new ApiError(
            'errorUploadFaild',
            413,
            `Upload failed: a PATCH with Upload-Checksum carries at most ${CHECKSUMMED_BODY_LIMIT} bytes; send smaller chunks`,
          ),
        );
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const opened: Readable[] = [];
  const discard = async () => {
    // A body tus never read (a refusal under its lock) still holds its descriptor.
    for (const stream of opened) stream.destroy();
    await fs.rm(file, { force: true });
  };
  try {
    await pipeline(body, meter, createWriteStream(file, { mode: 0o600 }));
  } catch (error) {
    await discard();
    throw error;
  }
  if (!hash.digest().equals(expected)) {
    await discard();
    throw new ApiError(
      'errorUploadFaild',
      CHECKSUM_MISMATCH,
      `Upload failed: the ${algorithm} checksum of the body does not match Upload-Checksum; nothing of it was stored`,
    );
  }
  return {
    size,
    open: () => {
      const stream = createReadStream(file);
      opened.push(stream);
      return stream;
    },
    discard,
  };
}
