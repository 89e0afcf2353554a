import { type BlobStore, SHA256_PATTERN } from '../blob/blob-store.js';
import type { MetadataStore, Repositories } from '../db/repositories/repositories.js';
import { errors, InputError } from '../domain/errors.js';
import { type FileExpiryRules, fileExpiresAt, parseExpiresIn } from '../domain/expiry.js';
import { type Clock, ID_PATTERN, type IdSource } from '../domain/ids.js';
import { sanitizeFileName } from '../domain/names.js';
import { type Account, type FileRecord, FileStatus, isExpired } from '../domain/types.js';
import { constantTimeEqual } from '../security/secrets.js';
import { dropUnreferencedBlobRow, removeUnnamedBytes } from './blob-lifecycle.js';
import { blacklistedNamePattern } from './moderation-service.js';
import { type CreatedFile, createFileRow, deleteHashOf } from './new-file-row.js';
import { assertFree, lockNames } from './sibling-names.js';

export interface FilesServiceDeps {
  store: MetadataStore;
  blobs: BlobStore;
  ids: IdSource;
  clock: Clock;
  /** The operator's file expiry settings: a copy's default, the cap of a change. */
  fileExpiry: FileExpiryRules;
  /** Where unexpected storage failures are reported. */
  log: (error: unknown, message: string) => void;
}

export type { CreatedFile } from './new-file-row.js';

/**
 * A file's life after its upload (SPEC.md "File"; API.md sections 4, 7): lookups, copies,
 * renames, blocking, and the three ways it ends (its owner's delete, its delete link, the
 * operator's), which share one deletion under the blob protocol. Uploads are uploads/'s,
 * download counts downloads/'s.
 */
export class FilesService {
  constructor(private readonly deps: FilesServiceDeps) {}

  /** A file visible to API calls: unknown, malformed and deleted ids are errorFileNotFound. */
  async visible(id: string): Promise<FileRecord> {
    const file = await this.live(id);
    if (!file) throw errors.fileNotFound();
    return file;
  }

  /**
   * The file with this id, blocked ones included (their pages say so); null when unknown,
   * deleted or expired. Everything that resolves a live file by id goes through here (or
   * `visible`): an expired file behaves as deleted from its expiry on, whether or not gc
   * has marked it yet (issue 25).
   */
  async live(id: string): Promise<FileRecord | null> {
    const file = ID_PATTERN.test(id) ? await this.deps.store.files.byId(id) : null;
    return file && isLive(file, this.deps.clock()) ? file : null;
  }

  /**
   * The owner changes a file's expiry (`PUT /files/<id>;expiry`): `expires_in` seconds from
   * now, `0` = never (refused, like anything past it, under the operator's cap).
   * errorWrongParameters for a bad or missing value; another account's file is
   * errorPermissionDenied, an unknown, deleted or expired one errorFileNotFound.
   */
  async setExpiry(caller: Account, id: string, rawExpiresIn: string | undefined): Promise<FileRecord> {
    const file = await this.visible(id);
    if (file.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    const asked = parseExpiresIn(rawExpiresIn, { zeroMeansNever: true });
    if (asked.kind === 'absent') throw errors.wrongParameters('expires_in is required (seconds, 0 = never)');
    const now = this.deps.clock();
    const expiresAt = fileExpiresAt(asked, this.deps.fileExpiry, now);
    // Conditional on the row being live and unexpired now: an expiry that passed meanwhile stays passed.
    if (!(await this.deps.store.files.setExpiry(file.id, expiresAt, now))) throw errors.fileNotFound();
    return { ...file, expiresAt };
  }

  /** Copies any active file into the caller's root; no bytes are duplicated (API.md 7). */
  async copy(caller: Account, id: string): Promise<CreatedFile> {
    const source = await this.visible(id);
    if (source.status !== FileStatus.Active) throw errors.permissionDenied('Blocked files cannot be copied');
    // A copy is a new file of the caller's, which names no expiry: the server's default (never the source's).
    const fields = { ownerId: caller.id, name: source.name, sha256: source.sha256, size: source.size };
    return createFileRow(this.deps, fields, async (repos, row, at) => {
      // Under the digest's lock the source cannot lose its last reference meanwhile, so a
      // concurrent delete cannot remove the bytes under the copy.
      await repos.locks.blob(source.sha256);
      const now = await repos.files.byId(source.id);
      if (!now || !isLive(now, at)) throw errors.fileNotFound();
      if (now.status !== FileStatus.Active) throw errors.permissionDenied('Blocked files cannot be copied');
      return { file: await repos.files.create({ ...row, expiresAt: fileExpiresAt({ kind: 'absent' }, this.deps.fileExpiry, at) }) };
    });
  }

  /**
   * Copies one of the caller's own active files into one of its folders (null: the top)
   * under `name`, in one step: WebDAV's COPY (issue 27). No bytes are duplicated, as for
   * `copy`; the folder is locked like an upload's (a removal either committed before,
   * errorFolderNotFound, or waits and sees the copy). The caller has checked the name.
   */
  async copyInto(caller: Account, id: string, folderId: string | null, name: string): Promise<CreatedFile> {
    const source = await this.visible(id);
    if (source.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    if (source.status !== FileStatus.Active) throw errors.permissionDenied('Blocked files cannot be copied');
    const fields = { ownerId: caller.id, name, sha256: source.sha256, size: source.size };
    return createFileRow(this.deps, fields, async (repos, row, at) => {
      // The digest's lock first, then the folder's: the order every upload takes them in.
      await repos.locks.blob(source.sha256);
      const now = await repos.files.byId(source.id);
      if (!now || !isLive(now, at)) throw errors.fileNotFound();
      if (now.status !== FileStatus.Active) throw errors.permissionDenied('Blocked files cannot be copied');
      if (folderId !== null) await lockOwnedFolder(repos, caller.id, folderId);
      const expiresAt = fileExpiresAt({ kind: 'absent' }, this.deps.fileExpiry, at);
      return { file: await repos.files.create({ ...row, folderId, expiresAt }) };
    });
  }

  /**
   * Moves one of the caller's live files into one of its folders (null: the top) and
   * gives it `name`, in one transaction: WebDAV's MOVE (issue 27), which never leaves a
   * file moved but not renamed. Namesakes are allowed, as for a move (SPEC.md); WebDAV
   * has cleared the destination's name itself. The folder is locked as for `FoldersService.move`.
   */
  async place(caller: Account, id: string, folderId: string | null, name: string): Promise<FileRecord> {
    const file = await this.visible(id);
    if (file.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    return this.deps.store.transaction(async (repos) => {
      if (folderId !== null) await lockOwnedFolder(repos, caller.id, folderId);
      const at = this.deps.clock();
      if ((await repos.files.moveOwned([file.id], caller.id, folderId, at)) !== 1) throw errors.fileNotFound();
      if (!(await repos.files.rename(file.id, name, at))) throw errors.fileNotFound();
      return { ...file, folderId, name };
    });
  }

  /** The owner deletes a file (A/B → D). */
  async deleteOwned(caller: Account, id: string): Promise<FileRecord> {
    const file = await this.visible(id);
    if (file.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    await this.markDeleted(file);
    return { ...file, status: FileStatus.Deleted };
  }

  /**
   * The owner's delete of a file as part of removing `folderId` (WebDAV's DELETE of a
   * collection): only while the file is still in that folder, so a file moved out meanwhile
   * (a MOVE answered 201) stays. `stillWanted` runs in the delete's transaction, after
   * the digest's lock and before the row changes: false keeps the file (its folder left
   * the tree being removed). False when it was not deleted here.
   */
  async deleteOwnedIn(caller: Account, id: string, folderId: string, stillWanted?: (repos: Repositories) => Promise<boolean>): Promise<boolean> {
    const file = await this.visible(id);
    if (file.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    return this.markDeleted(file, folderId, stillWanted);
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
        const at = this.deps.clock();
        const scope = { ownerId: caller.id, folderId, exceptId: file.id, liveAt: at };
        await lockNames(repos, scope);
        const now = await repos.files.byId(file.id);
        if (!now || !isLive(now, at)) throw errors.fileNotFound();
        // Moved since it was read: its names are another lock's; go again under that one.
        if (now.folderId !== folderId) return { moved: now };
        if (now.name === name) return { renamed: now };
        await assertFree(repos, 'file', scope, name);
        await repos.files.rename(now.id, name, at);
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
    if (!file || hash === null || !isLive(file, this.deps.clock())) return null;
    return constantTimeEqual(hash, deleteHashOf(secret)) ? file : null;
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
   * In the transaction that creates the file replacing `file` (WebDAV PUT onto its path,
   * issue 27): marks it deleted in the same commit, so the path names the new file or the
   * old one, never both or neither. Only the row changes here: this transaction holds the
   * new digest's lock, not the old one's (and taking it now could deadlock against a
   * transaction that takes them the other way round), and nothing is removed under a
   * digest without its lock. After the commit, `releaseReplaced` does the rest of a delete.
   * False when the file was gone already.
   */
  async retireWithin(repos: Repositories, file: FileRecord, at: number): Promise<boolean> {
    return repos.files.setStatus(file.id, [FileStatus.Active, FileStatus.Blocked], FileStatus.Deleted, at);
  }

  /**
   * After `retireWithin`'s commit: the second step of a delete (markDeleted), under the old
   * digest's lock: its blob row goes if no live file points at it any more, then its bytes.
   * A failure leaves unreferenced bytes, which gc removes.
   */
  async releaseReplaced(file: FileRecord): Promise<void> {
    const droppedKey = await this.deps.store.transaction(async (repos) => {
      await repos.locks.blob(file.sha256);
      return dropUnreferencedBlobRow(repos, file.sha256);
    });
    await this.removeBytes(file, droppedKey);
  }

  /**
   * Marks deleted, then removes the bytes if this was the digest's last live row (two
   * transactions: services/blob-lifecycle.ts says why); false if already deleted. A crash
   * between the two leaves unreferenced bytes, which gc removes.
   */
  private async markDeleted(file: FileRecord, inFolder?: string, stillWanted?: (repos: Repositories) => Promise<boolean>): Promise<boolean> {
    const { changed, droppedKey } = await this.deps.store.transaction(async (repos) => {
      // The digest's lock first, before any row lock, as every transaction takes them.
      await repos.locks.blob(file.sha256);
      if (stillWanted && !(await stillWanted(repos))) return { changed: false, droppedKey: null };
      const changed = await repos.files.setStatus(file.id, [FileStatus.Active, FileStatus.Blocked], FileStatus.Deleted, this.deps.clock(), inFolder);
      return { changed, droppedKey: changed ? await dropUnreferencedBlobRow(repos, file.sha256) : null };
    });
    await this.removeBytes(file, droppedKey);
    return changed;
  }

  /**
   * After a delete's commit: the bytes under the blob row it dropped (none when `droppedKey`
   * is null). The delete is done and answered either way: bytes left behind by a failure
   * here are gc's.
   */
  private async removeBytes(file: FileRecord, droppedKey: string | null): Promise<void> {
    if (droppedKey === null) return;
    await removeUnnamedBytes(this.deps.store, this.deps.blobs, droppedKey).catch((error: unknown) =>
      this.deps.log(error, `removing the bytes of ${file.sha256} failed; gc will collect them`),
    );
  }
}

/** Locks a folder of `ownerId` against its removal (then seen gone: errorFolderNotFound). */
async function lockOwnedFolder(repos: Repositories, ownerId: number, folderId: string): Promise<void> {
  await repos.locks.folder(folderId);
  const folder = await repos.folders.byId(folderId);
  if (!folder || folder.ownerId !== ownerId) throw errors.folderNotFound();
}

/** Not deleted, and not expired at `now`: what every lookup of a live file asks. */
function isLive(file: FileRecord, now: number): boolean {
  return file.status !== FileStatus.Deleted && !isExpired(file, now);
}

function normalizeDigest(sha256: string): string {
  const digest = sha256.trim().toLowerCase();
  if (!SHA256_PATTERN.test(digest)) throw new InputError(`"${sha256}" is not a SHA-256 digest (64 hex characters)`);
  return digest;
}
