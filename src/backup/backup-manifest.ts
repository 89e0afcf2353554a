import { SHA256_PATTERN } from '../blob/blob-store.js';
import { SQLITE_FILE } from '../db/dialect.js';
import { InputError } from '../domain/errors.js';

/**
 * A backup folder is laid out as a data folder (`filehaven.db`, `blobs/aa/bb/<sha256>`,
 * `secret`) plus this manifest. The manifest is written last: a folder without it is a
 * backup that did not finish, and restore refuses it.
 */
export const MANIFEST_FILE = 'filehaven-backup.json';

/** What the `format` field must say; anything else is not a filehaven backup. */
export const MANIFEST_FORMAT = 'filehaven-backup';

/** The layout version this code writes and reads. */
export const MANIFEST_VERSION = 1;

/** What a backup holds, written beside it as `filehaven-backup.json`. */
export interface BackupManifest {
  /** Always MANIFEST_FORMAT. */
  format: typeof MANIFEST_FORMAT;
  /** Layout version (MANIFEST_VERSION); a newer one is refused rather than half understood. */
  version: number;
  /** When the database snapshot the backup holds was taken, ISO 8601. */
  createdAt: string;
  /** The data folder it was taken from, for people. */
  source: string;
  /** The snapshot's database file: name, size and SHA-256 as written into the backup. */
  database: { file: string; bytes: number; sha256: string };
  /** Live (active or blocked) file rows in the snapshot. */
  files: { live: number };
  /** The blobs live files point at: how many, and their bytes. Every one is in `blobs/`. */
  blobs: { count: number; bytes: number };
  /**
   * `file`: the secret is in the backup as `secret`. `external`: the site takes its secret
   * from `--secret`/FILEHAVEN_SECRET (or the command was not told it), so it is not in the
   * backup and must be kept with it.
   */
  secret: 'file' | 'external';
  /** Database snapshots taken: more than 1 when deletes raced the blob copy (backup-service.ts). */
  snapshots: number;
}

/** The manifest as the file holds it. */
export function serializeManifest(manifest: BackupManifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** Parses and checks a manifest; InputError naming the file and what is wrong. */
export function parseManifest(text: string, file: string): BackupManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InputError(`${file} is not valid JSON: the backup is damaged`);
  }
  const bad = (what: string) => new InputError(`${file} is not a filehaven backup manifest: ${what}`);
  if (!isObject(raw) || raw.format !== MANIFEST_FORMAT) throw bad(`"format" must be "${MANIFEST_FORMAT}"`);
  if (raw.version !== MANIFEST_VERSION) {
    throw new InputError(`${file} has backup format version ${String(raw.version)}; this filehaven reads version ${MANIFEST_VERSION}`);
  }
  const { database, files, blobs } = raw;
  if (typeof raw.createdAt !== 'string' || Number.isNaN(Date.parse(raw.createdAt))) throw bad('"createdAt" must be a date');
  if (
    !isObject(database) ||
    database.file !== SQLITE_FILE ||
    !isCount(database.bytes) ||
    typeof database.sha256 !== 'string' ||
    !SHA256_PATTERN.test(database.sha256)
  ) {
    throw bad(`"database" must name ${SQLITE_FILE} with its bytes and sha256`);
  }
  if (!isObject(files) || !isCount(files.live)) throw bad('"files.live" must be a count');
  if (!isObject(blobs) || !isCount(blobs.count) || !isCount(blobs.bytes)) throw bad('"blobs" must hold count and bytes');
  if (raw.secret !== 'file' && raw.secret !== 'external') throw bad('"secret" must be "file" or "external"');
  if (!isCount(raw.snapshots) || raw.snapshots < 1) throw bad('"snapshots" must be at least 1');
  return {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    createdAt: raw.createdAt,
    source: typeof raw.source === 'string' ? raw.source : '',
    database: { file: SQLITE_FILE, bytes: database.bytes, sha256: database.sha256 },
    files: { live: files.live },
    blobs: { count: blobs.count, bytes: blobs.bytes },
    secret: raw.secret,
    snapshots: raw.snapshots,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
