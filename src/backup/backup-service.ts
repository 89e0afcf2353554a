import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { BlobNotFoundError } from '../blob/blob-store.js';
import { LocalBlobStore } from '../blob/local-blob-store.js';
import { readSecretFile, SECRET_FILE } from '../config/secret-file.js';
import { SQLITE_FILE } from '../db/dialect.js';
import { type DatabaseSnapshot, openSnapshot, snapshotSqlite } from '../db/sqlite-snapshot.js';
import { InputError } from '../domain/errors.js';
import { type Clock, systemClock } from '../domain/ids.js';
import { type BackupManifest, MANIFEST_FILE, MANIFEST_FORMAT, MANIFEST_VERSION, serializeManifest } from './backup-manifest.js';
import { forEachConcurrent } from './concurrent.js';
import { copyVerified, DigestMismatchError, emptyOrMissing, fsyncDir, hashFile, writeFileAtomic } from './durable-files.js';
import { checkSecret } from './secret-check.js';

/*
 * Consistency of a backup taken while the server runs (uploads, copies, deletes, gc):
 *
 * 1. The database is copied first, as one snapshot (sqlite-snapshot.ts). Only its live
 *    file rows decide which blobs the backup needs.
 * 2. A file row is committed only after its blob was renamed into place (blob-lifecycle.ts
 *    publishBlob), so every blob the snapshot references existed when it was taken. A blob
 *    uploaded after the snapshot is not referenced and not copied.
 * 3. Blobs are immutable and named by their digest; each is verified while it is copied.
 * 4. Bytes leave the store only through removeUnreferencedBytes (blob-lifecycle.ts), when
 *    no live row points at the digest: gc never touches a blob the snapshot references. But
 *    a delete (owner, operator, expiry) can commit between the snapshot and the copy and
 *    then remove the bytes, which the snapshot still shows live. Holding the database's
 *    write lock for the whole copy would stop every upload for the backup's duration, so
 *    instead a missing blob makes the backup take a fresh snapshot: the delete committed
 *    before its bytes went, so the new snapshot shows the digest no longer needed. Blobs
 *    already copied are kept (same digest, same bytes), and ones the final snapshot no
 *    longer references are dropped. A digest found missing while live in DAMAGE_STREAK
 *    snapshots in a row is not a race but a damaged data folder: the backup fails, naming
 *    it. A site whose deletes keep racing the copy for MAX_SNAPSHOTS snapshots makes the
 *    backup give up and say so.
 * 5. Everything is built in `<to>/.partial-*`, moved into place, and the manifest written
 *    last: a folder without the manifest is not a backup.
 */

/** Snapshots in a row that must show a digest live while its bytes are missing before it is called damage. */
const DAMAGE_STREAK = 3;
/** Snapshots taken at most, when deletes keep racing the copy. */
const MAX_SNAPSHOTS = 10;
/** Blobs copied at once: enough to overlap one file's fsync with the next one's reads. */
const COPY_CONCURRENCY = 4;
/** Pause before another snapshot, times the attempt: lets an in-flight delete commit. */
const RETRY_PAUSE_MS = 100;
/** Missing digests named in the failure message. */
const NAMED = 3;

export interface BackupOptions {
  /** The site's data folder; its server may be running. Nothing in it is changed. */
  dataDir: string;
  /** The secret given by `--secret`/FILEHAVEN_SECRET, or null when the site keeps `<data>/secret`. */
  secret: string | null;
  /** The backup folder: created, or an existing empty one. */
  to: string;
  /** When the snapshot was taken, for the manifest. */
  clock?: Clock;
  /** Stops the backup; what was written so far is removed. */
  signal?: AbortSignal;
  /**
   * Called after each snapshot and after each blob pass, before the next step goes on:
   * for progress, and for tests that put a delete exactly between two steps.
   */
  onStep?: (step: BackupStep) => Promise<void>;
}

/** A step of createBackup just finished. */
export interface BackupStep {
  /** `snapshot`: the database was copied; `copied`: a pass over its blobs ended. */
  kind: 'snapshot' | 'copied';
  /** Which snapshot, from 1. */
  attempt: number;
  /** After `copied`: blobs found missing (a new snapshot follows when there are any). */
  missing?: number;
}

/** A finished backup. */
export interface BackupReport {
  /** The backup folder, absolute. */
  dir: string;
  /** What was written to its `filehaven-backup.json`. */
  manifest: BackupManifest;
  /** False when the site's secret is external and the command was not given it to check. */
  secretVerified: boolean;
}

/** What one snapshot's blob pass found. */
interface CopyPass {
  count: number;
  bytes: number;
  /** Blobs the snapshot references that the store no longer has. */
  missing: number;
  /** Their digests. */
  missingDigests: string[];
}

/** Backs up a (running) site on the embedded default: SQLite snapshot, blobs, secret. */
export async function createBackup(options: BackupOptions): Promise<BackupReport> {
  const dataDir = path.resolve(options.dataDir);
  const to = path.resolve(options.to);
  const database = path.join(dataDir, SQLITE_FILE);
  if (
    !(await fs.stat(database).then(
      (s) => s.isFile(),
      () => false,
    ))
  ) {
    throw new InputError(`no filehaven database at ${database}: is --data the site's data folder?`);
  }
  const found = await emptyOrMissing(to, 'back up into a new or empty folder');
  // The backup holds password hashes, sealed keys and the secret: private to its owner.
  await fs.mkdir(to, { recursive: true, mode: 0o700 });
  const work = await fs.mkdtemp(path.join(to, '.partial-'));
  try {
    const built = await build(options, dataDir, database, work);
    const manifest: BackupManifest = {
      format: MANIFEST_FORMAT,
      version: MANIFEST_VERSION,
      createdAt: new Date(built.takenAt).toISOString(),
      source: dataDir,
      database: { file: SQLITE_FILE, ...(await hashFile(path.join(work, SQLITE_FILE))) },
      files: { live: built.liveFiles },
      blobs: { count: built.pass.count, bytes: built.pass.bytes },
      secret: built.secret,
      snapshots: built.snapshots,
    };
    await publish(work, to, built.dirs);
    await writeFileAtomic(path.join(to, MANIFEST_FILE), serializeManifest(manifest));
    return { dir: to, manifest, secretVerified: built.secretVerified };
  } catch (error) {
    // The folder was empty or absent: leave it so, or a retry would be refused.
    for (const name of [path.basename(work), SQLITE_FILE, 'blobs', SECRET_FILE, MANIFEST_FILE, `${MANIFEST_FILE}.part`]) {
      await fs.rm(path.join(to, name), { recursive: true, force: true });
    }
    if (found === 'missing') await fs.rmdir(to).catch(() => {});
    throw error;
  }
}

/** Snapshots and blob passes until one pass finds every blob; then the secret. */
async function build(options: BackupOptions, dataDir: string, database: string, work: string) {
  const clock = options.clock ?? systemClock;
  // Reading only: init() is never called, so nothing is created in the data folder.
  const source = new LocalBlobStore(dataDir);
  const target = new LocalBlobStore(work);
  await fs.mkdir(target.blobDir);
  const snapshotFile = path.join(work, SQLITE_FILE);
  const dirs = new Set<string>([target.blobDir]);
  // For each missing digest, how many snapshots in a row showed it live without its bytes.
  let streaks = new Map<string, number>();
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    await fs.rm(snapshotFile, { force: true });
    const takenAt = clock();
    await snapshotSqlite(database, snapshotFile);
    await fs.chmod(snapshotFile, 0o600);
    const snapshot = openSnapshot(snapshotFile);
    try {
      await options.onStep?.({ kind: 'snapshot', attempt });
      const pass = await copyLiveBlobs(snapshot, source, target, dirs, options.signal);
      await options.onStep?.({ kind: 'copied', attempt, missing: pass.missing });
      if (pass.missing === 0) {
        const secret = await backUpSecret(snapshot, dataDir, options.secret, work);
        if (attempt > 1) await dropUnreferenced(snapshot, target);
        return { takenAt, pass, dirs, snapshots: attempt, liveFiles: await snapshot.liveFileCount(), ...secret };
      }
      streaks = new Map(pass.missingDigests.map((sha256) => [sha256, (streaks.get(sha256) ?? 0) + 1]));
      const damaged = [...streaks].filter(([, streak]) => streak >= DAMAGE_STREAK).map(([sha256]) => sha256);
      if (damaged.length > 0) throw await missingBlobsError(snapshot, source, damaged);
      if (attempt === MAX_SNAPSHOTS) {
        throw new InputError(
          `deletes kept removing blobs faster than the backup could copy them (${MAX_SNAPSHOTS} snapshots); nothing was backed up, try again when the site is quieter`,
        );
      }
    } finally {
      await snapshot.close();
    }
    await sleep(RETRY_PAUSE_MS * attempt, undefined, { signal: options.signal });
  }
}

/** Copies every blob the snapshot's live files use and is not yet in the backup. */
async function copyLiveBlobs(
  snapshot: DatabaseSnapshot,
  source: LocalBlobStore,
  target: LocalBlobStore,
  dirs: Set<string>,
  signal?: AbortSignal,
): Promise<CopyPass> {
  const pass: CopyPass = { count: 0, bytes: 0, missing: 0, missingDigests: [] };
  await forEachConcurrent(snapshot.liveBlobs(), COPY_CONCURRENCY, async ({ sha256 }) => {
    signal?.throwIfAborted();
    const destination = target.blobPath(sha256);
    // Copied (and verified) by an earlier pass: copyVerified renames only verified bytes.
    const present = await fs.stat(destination).catch(() => null);
    if (present) {
      pass.count += 1;
      pass.bytes += present.size;
      return;
    }
    // Before the read, so no failure can come between opening the blob and consuming it.
    const bucket = path.dirname(destination);
    await fs.mkdir(bucket, { recursive: true });
    dirs.add(bucket).add(path.dirname(bucket));
    let stream: Readable;
    try {
      stream = await source.read(sha256);
    } catch (error) {
      if (!(error instanceof BlobNotFoundError)) throw error;
      pass.missing += 1;
      pass.missingDigests.push(sha256);
      return;
    }
    try {
      // Awaited before adding: `+= await` would add to a value read before the wait.
      const size = await copyVerified(stream, destination, { expectSha256: sha256, signal });
      pass.bytes += size;
    } catch (error) {
      if (!(error instanceof DigestMismatchError)) throw error;
      throw new InputError(`blob ${sha256} in ${source.blobDir} is damaged: its ${error.size} bytes have SHA-256 ${error.actual}; nothing was backed up`);
    }
    pass.count += 1;
  });
  return pass;
}

/** The secret file into the backup (mode 0600), after checking it opens the snapshot's keys. */
async function backUpSecret(
  snapshot: DatabaseSnapshot,
  dataDir: string,
  given: string | null,
  work: string,
): Promise<{ secret: 'file' | 'external'; secretVerified: boolean }> {
  if (given !== null) {
    await checkSecret(snapshot, given, '--secret/FILEHAVEN_SECRET');
    return { secret: 'external', secretVerified: true };
  }
  const kept = await readSecretFile(dataDir);
  // The server was given its secret some other way, and this command was not.
  if (kept === null) return { secret: 'external', secretVerified: false };
  await checkSecret(snapshot, kept, path.join(dataDir, SECRET_FILE));
  await writeFileAtomic(path.join(work, SECRET_FILE), `${kept}\n`, 0o600);
  return { secret: 'file', secretVerified: true };
}

/** Drops blobs copied for an earlier snapshot that the final one no longer references. */
async function dropUnreferenced(snapshot: DatabaseSnapshot, target: LocalBlobStore): Promise<void> {
  for await (const blob of target.listBlobs()) {
    if (!(await snapshot.isLive(blob.key))) await target.delete(blob.key);
  }
}

async function missingBlobsError(snapshot: DatabaseSnapshot, source: LocalBlobStore, damaged: string[]): Promise<InputError> {
  // Workers finish out of order: name the smallest digests, as a sorted listing would.
  const first = [...damaged].sort().slice(0, NAMED);
  const named = await Promise.all(first.map(async (sha256) => `${sha256} (files ${(await snapshot.filesUsing(sha256, 3)).join(', ')})`));
  const more = damaged.length > named.length ? ` and ${damaged.length - named.length} more` : '';
  const one = damaged.length === 1;
  return new InputError(
    `${one ? 'a blob' : `${damaged.length} blobs`} that live files use ${one ? 'is' : 'are'} missing from ${source.blobDir}: ${named.join('; ')}${more}. ` +
      `${DAMAGE_STREAK} snapshots in a row showed ${one ? 'it' : 'them'} live without ${one ? 'its' : 'their'} bytes, so no delete is racing the backup: the data folder is damaged`,
  );
}

/** Moves the finished parts from the work folder into the backup folder, durably. */
async function publish(work: string, to: string, dirs: Set<string>): Promise<void> {
  for (const dir of dirs) await fsyncDir(dir);
  await fsyncDir(work);
  for (const name of ['blobs', SECRET_FILE, SQLITE_FILE]) {
    await fs.rename(path.join(work, name), path.join(to, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT' || name !== SECRET_FILE) throw error;
    });
  }
  await fsyncDir(to);
  await fs.rm(work, { recursive: true, force: true });
}
