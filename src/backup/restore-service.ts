import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { LocalBlobStore } from '../blob/local-blob-store.js';
import { SECRET_FILE } from '../config/secret-file.js';
import { SQLITE_FILE } from '../db/dialect.js';
import { type DatabaseSnapshot, openSnapshot } from '../db/sqlite-snapshot.js';
import { InputError } from '../domain/errors.js';
import { type BackupManifest, MANIFEST_FILE, parseManifest } from './backup-manifest.js';
import { forEachConcurrent } from './concurrent.js';
import { copyVerified, DigestMismatchError, emptyOrMissing, fsyncDir, writeFileAtomic } from './durable-files.js';
import { checkSecret } from './secret-check.js';

/*
 * A restore never leaves a data folder that looks usable before it is complete: everything
 * is copied into a work folder and verified there (the database's digest against the
 * manifest, every blob's digest against its name, the counts, SQLite's integrity check,
 * every live file's blob present, the secret against the database's fingerprint). Then
 * the work folder, a sibling of the data folder, is renamed to it in one step. When the
 * data folder is a mount point (or its parent is not writable), the work folder sits
 * inside it instead and the parts are moved up with `filehaven.db` last: until that
 * rename the folder holds no database and is no site. On failure everything the restore
 * created is removed again.
 */

/** Blobs copied at once. */
const COPY_CONCURRENCY = 4;

export interface RestoreOptions {
  /** The backup folder (`filehaven backup --to`). */
  from: string;
  /** The data folder to create: absent or empty. */
  dataDir: string;
  /** The secret the restored site will be started with (`--secret`), or null for the backup's own. */
  secret: string | null;
  /** Stops the restore; what was written so far is removed. */
  signal?: AbortSignal;
  /**
   * Called with the verified folder just before it is moved into place (the CLI records
   * the restore in the restored audit log); a failure here undoes the restore.
   */
  beforePublish?: (folder: string, manifest: BackupManifest) => Promise<void>;
}

/** A finished restore. */
export interface RestoreReport {
  /** The restored data folder, absolute. */
  dataDir: string;
  /** The manifest of the backup it came from. */
  manifest: BackupManifest;
  /** False when neither the backup nor the command held the secret, so it could not be checked. */
  secretVerified: boolean;
}

/** Restores a backup into a new data folder, verifying everything before it counts. */
export async function restoreBackup(options: RestoreOptions): Promise<RestoreReport> {
  const from = path.resolve(options.from);
  const dataDir = path.resolve(options.dataDir);
  const manifest = await readManifest(from);
  const found = await emptyOrMissing(dataDir, 'restore only into a new or empty data folder');
  const place = await placeWorkFolder(dataDir, found);
  try {
    const secretVerified = await restoreInto(place.work, from, manifest, options);
    await options.beforePublish?.(place.work, manifest);
    await place.publish();
    return { dataDir, manifest, secretVerified };
  } catch (error) {
    await place.undo();
    throw error;
  }
}

/** Where the restore is built, how it is put in place, how a failed one is removed. */
interface WorkFolder {
  work: string;
  publish(): Promise<void>;
  undo(): Promise<void>;
}

async function placeWorkFolder(dataDir: string, found: 'empty' | 'missing'): Promise<WorkFolder> {
  const parent = path.dirname(dataDir);
  await fs.mkdir(parent, { recursive: true });
  const [own, above] = await Promise.all([found === 'empty' ? fs.stat(dataDir) : null, fs.stat(parent)]);
  if (!own || own.dev === above.dev) {
    const work = await fs.mkdtemp(path.join(parent, `.${path.basename(dataDir)}.restore-`)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EACCES' || error.code === 'EPERM') return null;
      throw error;
    });
    if (work !== null) {
      return {
        work,
        async publish() {
          // rename(2) replaces an empty folder, so the site appears whole or not at all.
          await fs.rename(work, dataDir);
          await fsyncDir(parent);
        },
        undo: () => fs.rm(work, { recursive: true, force: true }),
      };
    }
  }
  await fs.mkdir(dataDir, { recursive: true });
  const work = await fs.mkdtemp(path.join(dataDir, '.restore-'));
  return {
    work,
    publish: () => moveUp(work, dataDir),
    async undo() {
      // Empty or absent before: leave it so.
      for (const name of await fs.readdir(dataDir).catch(() => [])) await fs.rm(path.join(dataDir, name), { recursive: true, force: true });
      if (found === 'missing') await fs.rmdir(dataDir).catch(() => {});
    },
  };
}

async function readManifest(from: string): Promise<BackupManifest> {
  const file = path.join(from, MANIFEST_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const exists = await fs.stat(from).then(
      (s) => s.isDirectory(),
      () => false,
    );
    throw new InputError(
      exists ? `no backup at ${from}: ${MANIFEST_FILE} is missing (a backup that did not finish has none)` : `no backup at ${from}: there is no such folder`,
    );
  }
  return parseManifest(text, file);
}

/** Copies and verifies database, secret and blobs into `work`; true when the secret was checked. */
async function restoreInto(work: string, from: string, manifest: BackupManifest, options: RestoreOptions): Promise<boolean> {
  await copyDatabase(from, work, manifest, options.signal);
  const kept = manifest.secret === 'file' ? await copySecret(from, work) : null;
  const target = new LocalBlobStore(work);
  await fs.mkdir(target.blobDir);
  const copied = await copyBlobs(new LocalBlobStore(from), target, options.signal);

  let snapshot: DatabaseSnapshot | undefined;
  try {
    snapshot = openSnapshot(path.join(work, SQLITE_FILE));
    const problems = await snapshot.integrityProblems();
    if (problems.length > 0) throw new InputError(`the backup's database fails SQLite's integrity check: ${problems.slice(0, 3).join('; ')}`);
    const live = await snapshot.liveFileCount();
    if (live !== manifest.files.live)
      throw new InputError(`the backup's database holds ${live} live files, its manifest says ${manifest.files.live}: the backup is damaged`);
    let absent: string | undefined;
    for await (const { sha256 } of snapshot.liveBlobs()) {
      // Leaving the loop ends the query: the connection is free for filesUsing again.
      if (!(await target.has(sha256))) {
        absent = sha256;
        break;
      }
    }
    if (absent !== undefined) {
      throw new InputError(
        `blob ${absent} is not in the backup, though live files use it (${(await snapshot.filesUsing(absent, 3)).join(', ')}): the backup is damaged`,
      );
    }
    // After the check above, so that a missing blob is named rather than counted.
    if (copied.count !== manifest.blobs.count || copied.bytes !== manifest.blobs.bytes) {
      throw new InputError(
        `the backup holds ${copied.count} blobs (${copied.bytes} bytes), its manifest lists ${manifest.blobs.count} (${manifest.blobs.bytes} bytes): the backup is damaged`,
      );
    }
    // The secret the restored server will use: the one given, else the backup's.
    if (options.secret !== null) await checkSecret(snapshot, options.secret, '--secret/FILEHAVEN_SECRET');
    else if (kept !== null) await checkSecret(snapshot, kept, path.join(from, SECRET_FILE));
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`the backup's database cannot be read: ${(error as Error).message}`);
  } finally {
    await snapshot?.close();
  }
  for (const dir of copied.dirs) await fsyncDir(dir);
  await fsyncDir(work);
  return options.secret !== null || kept !== null;
}

async function copyDatabase(from: string, work: string, manifest: BackupManifest, signal?: AbortSignal): Promise<void> {
  const source = path.join(from, SQLITE_FILE);
  try {
    await copyVerified(createReadStream(source), path.join(work, SQLITE_FILE), { expectSha256: manifest.database.sha256, signal });
  } catch (error) {
    if (error instanceof DigestMismatchError) {
      throw new InputError(
        `the backup's database ${source} does not match its manifest (SHA-256 ${error.actual}, the manifest says ${error.expected}): the backup is damaged`,
      );
    }
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError(`the backup has no database: ${source} is missing`);
    throw error;
  }
}

async function copySecret(from: string, work: string): Promise<string> {
  const source = path.join(from, SECRET_FILE);
  let text: string;
  try {
    text = await fs.readFile(source, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError(`the backup's secret ${source} is missing, though its manifest lists it`);
    throw error;
  }
  await writeFileAtomic(path.join(work, SECRET_FILE), text, 0o600);
  return text.trim();
}

/** Copies every blob, verifying each against its name: how many, their bytes, the folders to fsync. */
async function copyBlobs(source: LocalBlobStore, target: LocalBlobStore, signal?: AbortSignal): Promise<{ count: number; bytes: number; dirs: Set<string> }> {
  const dirs = new Set<string>([target.blobDir]);
  let count = 0;
  let bytes = 0;
  await forEachConcurrent(source.listBlobs(), COPY_CONCURRENCY, async ({ key: sha256 }) => {
    signal?.throwIfAborted();
    const destination = target.blobPath(sha256);
    const bucket = path.dirname(destination);
    await fs.mkdir(bucket, { recursive: true });
    dirs.add(bucket).add(path.dirname(bucket));
    try {
      // Awaited before adding: `bytes += await` would add to a value read before the wait.
      const size = await copyVerified(await source.read(sha256), destination, { expectSha256: sha256, signal });
      bytes += size;
    } catch (error) {
      if (!(error instanceof DigestMismatchError)) throw error;
      throw new InputError(`blob ${sha256} in the backup is damaged: its ${error.size} bytes have SHA-256 ${error.actual}`);
    }
    count += 1;
  });
  return { count, bytes, dirs };
}

/** Moves the verified parts up into the data folder, the database last. */
async function moveUp(work: string, dataDir: string): Promise<void> {
  const names = await fs.readdir(work);
  // A connection that used WAL may leave `-wal`/`-shm` beside the database: they go first.
  const companions = names.filter((name) => name.startsWith(`${SQLITE_FILE}-`));
  for (const name of ['blobs', SECRET_FILE, ...companions, SQLITE_FILE]) {
    if (names.includes(name)) await fs.rename(path.join(work, name), path.join(dataDir, name));
  }
  await fsyncDir(dataDir);
  // Nothing of the site is left in it; a leftover folder must not undo the restore.
  await fs.rm(work, { recursive: true, force: true }).catch(() => {});
}
