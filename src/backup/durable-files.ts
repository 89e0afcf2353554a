import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InputError } from '../domain/errors.js';

/** Bytes that did not hash to the digest they were copied as. */
export class DigestMismatchError extends Error {
  override name = 'DigestMismatchError';
  constructor(
    /** The SHA-256 the bytes should have had. */
    readonly expected: string,
    /** The SHA-256 they had. */
    readonly actual: string,
    /** How many bytes there were. */
    readonly size: number,
  ) {
    super(`expected SHA-256 ${expected}, got ${actual} (${size} bytes)`);
  }
}

/**
 * Streams `source` into `target` while hashing it, never holding more than a chunk: the
 * bytes go to `<target>.part`, are fsynced, and are renamed to `target` only when their
 * SHA-256 is `expectSha256`. Otherwise the part file is removed and DigestMismatchError
 * thrown, so `target` existing means "copied and verified". Returns the size.
 */
export async function copyVerified(source: Readable, target: string, options: { expectSha256: string; mode?: number; signal?: AbortSignal }): Promise<number> {
  const part = `${target}.part`;
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const sink = createWriteStream(part, { mode: options.mode ?? 0o600 });
  try {
    await pipeline(source, meter, sink, { signal: options.signal });
    // Durable before the rename makes it count as copied. fsync works on the file, not
    // the descriptor, so a second one serves (the stream has closed its own).
    await syncFile(part);
  } catch (error) {
    // A sink destroyed while still opening creates the file later: wait, then remove it.
    if (!sink.closed) await new Promise<void>((resolve) => sink.once('close', () => resolve()));
    await fs.rm(part, { force: true });
    throw error;
  }
  const actual = hash.digest('hex');
  if (actual !== options.expectSha256) {
    await fs.rm(part, { force: true });
    throw new DigestMismatchError(options.expectSha256, actual, size);
  }
  await fs.rename(part, target);
  return size;
}

/** SHA-256 (hex) and size of a file, streamed. */
export async function hashFile(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Writes a small file whole or not at all: a temp file, fsync, rename, fsync of the folder. */
export async function writeFileAtomic(file: string, content: string, mode = 0o600): Promise<void> {
  const temp = `${file}.part`;
  const handle = await fs.open(temp, 'w', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(temp, file);
  await fsyncDir(path.dirname(file));
}

/** fsync of a file's data. */
async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync of a folder makes the renames and creations inside it durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Checks that `dir` is a folder with nothing in it, or does not exist yet (`'missing'`);
 * InputError otherwise, with `purpose` saying what it was for.
 */
export async function emptyOrMissing(dir: string, purpose: string): Promise<'empty' | 'missing'> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    if (code === 'ENOTDIR') throw new InputError(`${dir} is a file, not a folder; ${purpose}`);
    throw error;
  }
  if (names.length > 0) throw new InputError(`${dir} is not empty (${names.length} entries, e.g. "${names.sort()[0]}"); ${purpose}`);
  return 'empty';
}
