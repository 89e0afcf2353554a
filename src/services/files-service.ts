import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { BlobStorageError, type BlobStore, BlobTooLargeError, SHA256_PATTERN, type StagedBlob } from '../blob/blob-store.js';
import { DuplicateError, type MetadataStore, type Repositories } from '../db/repositories/repositories.js';
import { ApiError, errors, InputError } from '../domain/errors.js';
import { type Clock, ID_PATTERN, type IdSource } from '../domain/ids.js';
import { sanitizeFileName } from '../domain/names.js';
import { type Account, type FileRecord, FileStatus } from '../domain/types.js';
import { constantTimeEqual } from '../security/secrets.js';
import { abandonStagedBlob, admitStagedBlob, dropUnreferencedBlobRow, removeUnnamedBytes } from './blob-lifecycle.js';
import { blacklistedNamePattern } from './moderation-service.js';
import { assertFree, lockNames } from './sibling-names.js';

export interface FilesServiceDeps {
  store: MetadataStore;
  blobs: BlobStore;
  ids: IdSource;
  clock: Clock;
  /** Largest accepted file in bytes. */
  maxFileSize: number;
  /** Where unexpected storage failures are reported. */
  log: (error: unknown, message: string) => void;
}

/** Where a stored upload goes, and what else its transaction writes. */
export interface StoreOptions {
  /** A folder of the owner to put the file in; the root when it is gone by then. */
  folderId?: string | null;
  /** Runs in the transaction that creates the file row (a resumable upload marks itself stored). */
  within?: (repos: Repositories, file: FileRecord) => Promise<void>;
  /**
   * A failure that is not a refusal (the database or the store down) leaves the staged
   * bytes to the caller, who can store them again (a resumable upload: its bytes are
   * precious). Refusals (empty, blacklisted) drop them either way.
   */
  keepStagedOnFailure?: boolean;
}

/** A freshly created file with the one-time delete secret. */
export interface CreatedFile {
  file: FileRecord;
  deleteSecret: string;
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
const ID_ATTEMPTS = 5;
const DAY_MS = 86_400_000;

/** Uploads, copies, lookups, deletes, moderation (SPEC.md "File"; API.md sections 4, 7). */
export class FilesService {
  constructor(private readonly deps: FilesServiceDeps) {}

  /**
   * Streams an upload into staging; errorFileSize past the limit (nothing kept), and a
   * failure of the storage itself is logged and answered 500 errorUploadFaild (API.md 3).
   * Other stream failures (client gone, malformed body) are rethrown for the caller to map.
   */
  async receive(source: Readable, signal?: AbortSignal): Promise<StagedBlob> {
    try {
      return await this.deps.blobs.stage(source, { maxBytes: this.deps.maxFileSize, signal });
    } catch (error) {
      if (error instanceof BlobTooLargeError) throw errors.fileSize(this.deps.maxFileSize);
      if (error instanceof BlobStorageError) {
        this.deps.log(error, 'staging an upload failed');
        throw errors.uploadStorage();
      }
      throw error;
    }
  }

  /** Drops a staged upload that will not be stored. */
  async discard(staged: StagedBlob): Promise<void> {
    await this.deps.blobs.discard(staged);
  }

  /** Turns a staged upload into an active file of `owner`; the staged blob is consumed either way (but see keepStagedOnFailure). */
  async store(owner: Account, staged: StagedBlob, rawName: string | undefined, options: StoreOptions = {}): Promise<CreatedFile> {
    try {
      if (staged.size === 0) throw errors.emptyFile();
      if (await this.deps.store.blacklist.has(staged.sha256)) throw errors.blacklisted();
      const name = sanitizeFileName(rawName);
      // Name patterns (API.md 8) match the name as it would be stored.
      if ((await blacklistedNamePattern(this.deps.store.blacklist, name)) !== null) throw errors.blacklisted();
      return await this.insertFile(owner.id, name, staged.sha256, staged.size, staged, undefined, options);
    } catch (error) {
      if (error instanceof ApiError || !options.keepStagedOnFailure) await abandonStagedBlob(this.deps.store, this.deps.blobs, staged);
      if (error instanceof ApiError) throw error;
      this.deps.log(error, 'storing an upload failed');
      throw errors.uploadStorage();
    }
  }

  /** A file visible to API calls: unknown, malformed and deleted ids are errorFileNotFound. */
  async visible(id: string): Promise<FileRecord> {
    const file = await this.live(id);
    if (!file) throw errors.fileNotFound();
    return file;
  }

  /** The file with this id, blocked ones included (their pages say so); null when unknown or deleted. */
  async live(id: string): Promise<FileRecord | null> {
    const file = ID_PATTERN.test(id) ? await this.deps.store.files.byId(id) : null;
    return file && file.status !== FileStatus.Deleted ? file : null;
  }

  /** Copies any active file into the caller's root; no bytes are duplicated (API.md 7). */
  async copy(caller: Account, id: string): Promise<CreatedFile> {
    const source = await this.visible(id);
    if (source.status !== FileStatus.Active) throw errors.permissionDenied('Blocked files cannot be copied');
    return this.insertFile(caller.id, source.name, source.sha256, source.size, null, source.id);
  }

  /** The owner deletes a file (A/B → D). */
  async deleteOwned(caller: Account, id: string): Promise<FileRecord> {
    const file = await this.visible(id);
    if (file.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    await this.markDeleted(file);
    return { ...file, status: FileStatus.Deleted };
  }

  /**
   * The owner renames a file. The name is cleaned and checked against the name blacklist
   * as an upload's is (API.md 2, 8), and must not be another live file's name in the same
   * folder (NameTakenError with a free "name (2)"): checked and written under the folder's
   * (or the top level's) name lock, so two renames racing for one name cannot both win.
   * Uploads, copies and moves may still repeat names (SPEC.md); only renames keep them apart.
   */
  async rename(caller: Account, id: string, rawName: string): Promise<FileRecord> {
    let file = await this.visible(id);
    if (file.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    if (rawName.trim() === '') throw errors.badRequest('Give the file a name.');
    const name = sanitizeFileName(rawName);
    if ((await blacklistedNamePattern(this.deps.store.blacklist, name)) !== null) throw errors.blacklisted();
    for (let attempt = 1; attempt <= 5; attempt++) {
      const folderId = file.folderId;
      const renamed = await this.deps.store.transaction(async (repos) => {
        const scope = { ownerId: caller.id, folderId, exceptId: file.id };
        await lockNames(repos, scope);
        const now = await repos.files.byId(file.id);
        if (!now || now.status === FileStatus.Deleted) throw errors.fileNotFound();
        // Moved since it was read: its names are another lock's; go again under that one.
        if (now.folderId !== folderId) return { moved: now };
        if (now.name === name) return { renamed: now };
        await assertFree(repos, 'file', scope, name);
        await repos.files.rename(now.id, name);
        return { renamed: { ...now, name } };
      });
      if (renamed.renamed) return renamed.renamed;
      file = renamed.moved!;
    }
    throw errors.badRequest('The file keeps moving; try again.');
  }

  /** The file a delete link points at, if the secret is right; null otherwise. */
  async byDeleteSecret(id: string, secret: string): Promise<FileRecord | null> {
    if (!ID_PATTERN.test(id) || !/^[0-9a-f]{32}$/.test(secret)) return null;
    const [file, hash] = await Promise.all([this.deps.store.files.byId(id), this.deps.store.files.deleteHash(id)]);
    if (!file || hash === null || file.status === FileStatus.Deleted) return null;
    return constantTimeEqual(hash, sha256Hex(secret)) ? file : null;
  }

  /** Deletes through a delete link; false when the link is wrong or the file already gone. */
  async deleteWithSecret(id: string, secret: string): Promise<boolean> {
    const file = await this.byDeleteSecret(id, secret);
    if (!file) return false;
    return this.markDeleted(file);
  }

  /** Operator: A → B. */
  async block(id: string): Promise<FileRecord> {
    return this.transition(id, [FileStatus.Active], FileStatus.Blocked, 'only an active file can be blocked');
  }

  /** Operator: B → A. */
  async unblock(id: string): Promise<FileRecord> {
    return this.transition(id, [FileStatus.Blocked], FileStatus.Active, 'only a blocked file can be unblocked');
  }

  /** Operator: A/B → D, final. */
  async operatorDelete(id: string): Promise<FileRecord> {
    const file = await this.operatorLookup(id);
    if (file.status === FileStatus.Deleted) throw new InputError(`file ${id} is already deleted`);
    await this.markDeleted(file);
    return { ...file, status: FileStatus.Deleted };
  }

  /**
   * Operator: adds a digest to the blacklist; with `blockExisting`, also blocks every
   * active file with that digest (A → B). Returns how many files were blocked.
   */
  async blacklistAdd(sha256: string, reason = '', blockExisting = false): Promise<number> {
    const digest = normalizeDigest(sha256);
    return this.deps.store.transaction(async (repos) => {
      // Under the digest's lock, an upload of it either committed (and is blocked here)
      // or checks the blacklist after this commit (and is refused).
      await repos.locks.blob(digest);
      await repos.blacklist.add(digest, reason, this.deps.clock());
      return blockExisting ? repos.files.blockByDigest(digest, this.deps.clock()) : 0;
    });
  }

  /** Operator: removes a digest from the blacklist. */
  async blacklistRemove(sha256: string): Promise<void> {
    if (!(await this.deps.store.blacklist.remove(normalizeDigest(sha256)))) {
      throw new InputError(`${sha256} is not in the blacklist`);
    }
  }

  /** Operator: the blacklist. */
  blacklist() {
    return this.deps.store.blacklist.list();
  }

  /** Counts a download start (for `files info` and expiry). */
  async recordDownload(id: string): Promise<void> {
    await this.deps.store.files.recordDownload(id, this.deps.clock());
  }

  /**
   * Adds the body bytes a download actually sent: to the file's total (for `filehaven
   * stats`) and to today's (the console's chart), in one transaction so the two agree.
   */
  async recordBytesServed(id: string, bytes: number): Promise<void> {
    if (bytes <= 0) return;
    const day = Math.floor(this.deps.clock() / DAY_MS);
    await this.deps.store.transaction(async (repos) => {
      await repos.files.addBytesServed(id, bytes);
      // Last: the day's row is the one every download wants, so it is held the shortest.
      await repos.servedDays.add(day, bytes);
    });
  }

  private async transition(id: string, from: FileStatus[], to: FileStatus, why: string): Promise<FileRecord> {
    const file = await this.operatorLookup(id);
    if (!(await this.deps.store.files.setStatus(id, from, to, this.deps.clock()))) {
      throw new InputError(`${why}; file ${id} is ${file.status}`);
    }
    return { ...file, status: to };
  }

  private async operatorLookup(id: string): Promise<FileRecord> {
    const file = ID_PATTERN.test(id) ? await this.deps.store.files.byId(id) : null;
    if (!file) throw new InputError(`no file with id "${id}"`);
    return file;
  }

  /**
   * Marks deleted, then removes the bytes if this was the digest's last live row (two
   * transactions: services/blob-lifecycle.ts says why); false if already deleted. A crash
   * between the two leaves unreferenced bytes, which gc removes.
   */
  private async markDeleted(file: FileRecord): Promise<boolean> {
    const { changed, droppedKey } = await this.deps.store.transaction(async (repos) => {
      // The digest's lock first, before any row lock, as every transaction takes them.
      await repos.locks.blob(file.sha256);
      const changed = await repos.files.setStatus(file.id, [FileStatus.Active, FileStatus.Blocked], FileStatus.Deleted, this.deps.clock());
      return { changed, droppedKey: changed ? await dropUnreferencedBlobRow(repos, file.sha256) : null };
    });
    if (droppedKey !== null) {
      // The delete is done and answered either way: bytes left behind by a failure here are gc's.
      await removeUnnamedBytes(this.deps.store, this.deps.blobs, droppedKey).catch((error: unknown) =>
        this.deps.log(error, `removing the bytes of ${file.sha256} failed; gc will collect them`),
      );
    }
    return changed;
  }

  /**
   * Inserts a file row for a digest, in the blob protocol's transaction. For an upload the
   * staged bytes are published; for a copy the source must still be active when the
   * digest is locked, so a concurrent delete cannot remove the bytes under the copy.
   */
  private async insertFile(
    ownerId: number,
    name: string,
    sha256: string,
    size: number,
    staged: StagedBlob | null,
    copyOf?: string,
    options: StoreOptions = {},
  ): Promise<CreatedFile> {
    const deleteSecret = this.deps.ids.deleteSecret();
    for (let attempt = 1; ; attempt++) {
      const now = this.deps.clock();
      const row = {
        id: this.deps.ids.fileId(),
        ownerId,
        folderId: null,
        name,
        size,
        sha256,
        deleteHash: sha256Hex(deleteSecret),
        createdAt: now,
      };
      try {
        const { file, duplicate } = await this.deps.store.transaction(async (repos) => {
          if (staged) {
            return admitStagedBlob(repos, this.deps.blobs, staged, now, async () => {
              // Checked again under the digest's lock: a `blacklist add --block-existing`
              // either committed before (seen here) or runs after this commit (and
              // blocks this row); store()'s first check alone left a gap.
              if (await repos.blacklist.has(sha256)) throw errors.blacklisted();
              const folderId = options.folderId ? await ownedFolder(repos, ownerId, options.folderId) : null;
              const file = await repos.files.create({ ...row, folderId });
              await options.within?.(repos, file);
              return file;
            }).then(({ result, duplicate }) => ({ file: result, duplicate }));
          }
          // Under the digest's lock the source cannot lose its last reference meanwhile.
          await repos.locks.blob(sha256);
          const source = await repos.files.byId(copyOf!);
          if (!source || source.status === FileStatus.Deleted) throw errors.fileNotFound();
          if (source.status !== FileStatus.Active) throw errors.permissionDenied('Blocked files cannot be copied');
          return { file: await repos.files.create(row), duplicate: false };
        });
        // The digest was stored already: this upload's own copy is not needed.
        if (duplicate && staged)
          await this.deps.blobs.discard(staged).catch((error: unknown) => this.deps.log(error, 'dropping a duplicate upload failed; gc will collect it'));
        return { file, deleteSecret };
      } catch (error) {
        // A random id collided: try another (36^10 ids make this vanishingly rare).
        if (error instanceof DuplicateError && attempt < ID_ATTEMPTS) continue;
        throw error;
      }
    }
  }
}

/**
 * The folder an upload goes to, locked against its removal, when it is still the owner's;
 * null (the root) otherwise: a resumable upload named its folder hours ago, and its bytes
 * matter more than where they land.
 */
async function ownedFolder(repos: Repositories, ownerId: number, folderId: string): Promise<string | null> {
  await repos.locks.folder(folderId);
  const folder = await repos.folders.byId(folderId);
  return folder && folder.ownerId === ownerId ? folder.id : null;
}

function normalizeDigest(sha256: string): string {
  const digest = sha256.trim().toLowerCase();
  if (!SHA256_PATTERN.test(digest)) throw new InputError(`"${sha256}" is not a SHA-256 digest (64 hex characters)`);
  return digest;
}
