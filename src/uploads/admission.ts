import type { BlobStore, StagedBlob } from '../blob/blob-store.js';
import { DatabaseBusyError } from '../db/dialect.js';
import type { Repositories } from '../db/repositories/repositories.js';
import { ApiError, errors } from '../domain/errors.js';
import { type ExpiresIn, type FileExpiryRules, fileExpiresAt } from '../domain/expiry.js';
import { sanitizeFileName } from '../domain/names.js';
import type { FileRecord } from '../domain/types.js';
import { abandonStagedBlob, admitStagedBlob } from '../services/blob-lifecycle.js';
import { blacklistedNamePattern } from '../services/moderation-service.js';
import { type CreatedFile, createFileRow, type NewFileRowDeps } from '../services/new-file-row.js';
import type { UploadFolder } from './upload-input.js';

export interface AdmissionDeps extends NewFileRowDeps {
  blobs: BlobStore;
  /** The operator's file expiry settings (the default, the cap). */
  fileExpiry: FileExpiryRules;
  /** Where unexpected storage failures are reported. */
  log: (error: unknown, message: string) => void;
}

/** How staged bytes are admitted as a file. */
export interface AdmitOptions {
  folder: UploadFolder | null;
  /** The expiry asked for (checked against the cap again, from the row's creation time). */
  expiresIn: ExpiresIn;
  /** Runs in the file's transaction, after its row (UploadInput.within, the volume's settlement). */
  within?: (repos: Repositories, file: FileRecord) => Promise<void>;
  /**
   * A failure that is not a refusal (the database or the store down) leaves the staged
   * bytes to the caller, who can store them again. Refusals drop them either way.
   */
  keepStagedOnFailure: boolean;
  /** An empty file is a file (WebDAV, issue 27); else errorEmptyFile (API.md 8). */
  allowEmpty?: boolean;
}

/**
 * Turns staged bytes into an active file of `ownerId`: an empty file, a blacklisted
 * digest or name are refused (API.md 8); then one transaction, in the blob protocol
 * (services/blob-lifecycle.ts), writes the row in its folder, runs `within` and publishes
 * the bytes unless the digest is stored already (dedup: the staged copy is then dropped).
 * The staged bytes are consumed either way (but see keepStagedOnFailure); a failure that
 * is no refusal is logged and answered errorUploadFaild.
 */
export async function admitUpload(
  deps: AdmissionDeps,
  ownerId: number,
  staged: StagedBlob,
  rawName: string | undefined,
  options: AdmitOptions,
): Promise<CreatedFile> {
  try {
    if (staged.size === 0 && !options.allowEmpty) throw errors.emptyFile();
    // A blacklisted digest is refused in the file's transaction (insertUploadedFile), under
    // the digest's lock: a check here as well only cost every upload a query (issue 28).
    const name = sanitizeFileName(rawName);
    // Name patterns (API.md 8) match the name as it would be stored.
    if ((await blacklistedNamePattern(deps.store.blacklist, name)) !== null) throw errors.blacklisted();
    return await insertUploadedFile(deps, ownerId, name, staged, options);
  } catch (error) {
    if (error instanceof ApiError || !options.keepStagedOnFailure) await abandonStagedBlob(deps.store, deps.blobs, staged);
    // Every database connection in use: the error handler's 503 with Retry-After, not a 500.
    if (error instanceof ApiError || error instanceof DatabaseBusyError) throw error;
    deps.log(error, 'storing an upload failed');
    throw errors.uploadStorage();
  }
}

/** The file row of an upload, in the blob protocol's transaction with the publication of its bytes. */
async function insertUploadedFile(deps: AdmissionDeps, ownerId: number, name: string, staged: StagedBlob, options: AdmitOptions): Promise<CreatedFile> {
  const { file, duplicate, deleteSecret } = await createFileRow(deps, { ownerId, name, sha256: staged.sha256, size: staged.size }, async (repos, row, now) => {
    const { result, duplicate } = await admitStagedBlob(repos, deps.blobs, staged, now, async () => {
      // Under the digest's lock: a `blacklist add --block-existing` either committed
      // before (seen here) or runs after this commit (and blocks this row).
      if (await repos.blacklist.has(staged.sha256)) throw errors.blacklisted();
      const folderId = options.folder ? await lockedFolder(repos, ownerId, options.folder) : null;
      // From the row's own time, so "expires_in=60" means 60 s after the file exists.
      const expiresAt = fileExpiresAt(options.expiresIn, deps.fileExpiry, now);
      const file = await repos.files.create({ ...row, folderId, expiresAt });
      await options.within?.(repos, file);
      return file;
    });
    return { file: result, duplicate };
  });
  // The digest was stored already: this upload's own copy is not needed.
  if (duplicate) await deps.blobs.discard(staged).catch((error: unknown) => deps.log(error, 'dropping a duplicate upload failed; gc will collect it'));
  return { file, deleteSecret };
}

/**
 * The folder an upload goes to, locked against its removal (a removal either committed
 * before, and is seen here, or waits and then finds this file): the folder when it is
 * still the owner's, else errorFolderNotFound or the top level, as the upload asked.
 */
async function lockedFolder(repos: Repositories, ownerId: number, folder: UploadFolder): Promise<string | null> {
  await repos.locks.folder(folder.id);
  const row = await repos.folders.byId(folder.id);
  if (row && row.ownerId === ownerId) return row.id;
  if (folder.ifGone === 'refuse') throw errors.folderNotFound();
  return null;
}
