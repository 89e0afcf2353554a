import type { Repositories } from '../db/repositories/repositories.js';
import { DuplicateError, type MetadataStore } from '../db/repositories/repositories.js';
import { ApiError, errors } from '../domain/errors.js';
import { type Clock, ID_PATTERN, type IdSource } from '../domain/ids.js';
import { sanitizeFolderName } from '../domain/names.js';
import { type Account, type FileRecord, FileStatus, type Folder, isExpired } from '../domain/types.js';
import type { ListPosition } from './listing-service.js';
import { assertFree, lockNames, NameTakenError } from './sibling-names.js';

export interface FoldersServiceDeps {
  store: MetadataStore;
  ids: IdSource;
  clock: Clock;
  /**
   * The owner's delete of a file while it is still in a folder, under the blob protocol
   * (FilesService.deleteOwnedIn): what removing a tree does to each file in it.
   */
  files: {
    deleteOwnedIn(caller: Account, id: string, folderId: string, stillWanted?: (repos: Repositories) => Promise<boolean>): Promise<boolean>;
  };
}

/** What removing a folder tree removed: ids of the folders and of the files marked deleted. */
export interface RemovedTree {
  folders: string[];
  files: string[];
}

/** How often a tree removal walks its tree again when something was added to it meanwhile. */
const TREE_ATTEMPTS = 5;
/** Files deleted per read while a tree is removed. */
const TREE_PAGE = 500;

/** Which page of a folder's active files to list. */
export interface FolderPageQuery {
  /** Page size (the caller bounds it: MAX_PAGE_SIZE for the API, the folder page's own size). */
  limit: number;
  /** Continue after this position (the last file of the previous page). */
  after?: ListPosition;
  /** Whether to read the sub-folders too. */
  children: boolean;
}

/** A folder with what one of its pages or feeds shows. */
export interface FolderListing {
  folder: Folder;
  /** This page's active files, newest first (created_at, then id, descending). */
  files: FileRecord[];
  /** Where the next page starts, or null when this page is the last. */
  next: ListPosition | null;
  /** Sub-folders by name; empty when not asked for. */
  children: Folder[];
  /** Number of active files in the folder, all pages together. */
  activeFiles: number;
  /** Total bytes of the active files, all pages together. */
  activeBytes: number;
}

/** Most ids one move may list; a bound on the SQL IN list. */
export const MAX_MOVE_IDS = 1000;

/** Folders and moving files into them (SPEC.md "Folder"; API.md section 7). */
export class FoldersService {
  constructor(private readonly deps: FoldersServiceDeps) {}

  /**
   * Creates a folder of `owner`, optionally inside one of its folders. With `uniqueName`
   * (the web's form) a sibling folder of the same name is a NameTakenError, checked under
   * the parent's (or the top level's) lock; the API's POST /folders keeps allowing it.
   */
  async create(owner: Account, rawName: string | undefined, parentId?: string, { uniqueName = false } = {}): Promise<Folder> {
    const parent = parentId ? await this.owned(owner, parentId) : null;
    const name = sanitizeFolderName(rawName);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deps.store.transaction(async (repos) => {
          const scope = { ownerId: owner.id, folderId: parent?.id ?? null };
          // The parent's lock orders this against a removal of the parent (as a move into
          // it is) and against other checks of the names in it.
          if (parent || uniqueName) await lockNames(repos, scope);
          if (parent && (await repos.folders.byId(parent.id)) === null) throw errors.folderNotFound();
          if (uniqueName) await assertFree(repos, 'folder', scope, name);
          return repos.folders.create({
            id: this.deps.ids.folderId(),
            ownerId: owner.id,
            parentId: parent?.id ?? null,
            name,
            createdAt: this.deps.clock(),
          });
        });
      } catch (error) {
        if (attempt < 5 && error instanceof DuplicateError) continue;
        // The parent was removed since the check above: the insert hit its foreign key.
        if (parent && !(error instanceof DuplicateError) && !(error instanceof NameTakenError) && (await this.deps.store.folders.byId(parent.id)) === null) {
          throw errors.folderNotFound();
        }
        throw error;
      }
    }
  }

  /** A folder, for anyone (public folder page); errorFolderNotFound otherwise. */
  async find(id: string): Promise<Folder> {
    const folder = ID_PATTERN.test(id) ? await this.deps.store.folders.byId(id) : null;
    if (!folder) throw errors.folderNotFound();
    return folder;
  }

  /** A folder of `caller`; errorPermissionDenied when it is another account's. */
  async owned(caller: Account, id: string): Promise<Folder> {
    const folder = await this.find(id);
    if (folder.ownerId !== caller.id) throw errors.permissionDenied('The folder belongs to another account');
    return folder;
  }

  /**
   * One page of a folder's active files, newest first, with the folder's totals. Pages are
   * keyset pages on (created_at, id), as for GET /files, and the totals are one COUNT and
   * SUM: a folder of any size costs one page of rows, never all of them.
   */
  async listing(folder: Folder, query: FolderPageQuery): Promise<FolderListing> {
    const now = this.deps.clock();
    const [rows, children, totals] = await Promise.all([
      // One row more than asked tells whether a next page exists.
      this.deps.store.files.list({ folderId: folder.id, states: [FileStatus.Active], before: query.after, liveAt: now, limit: query.limit + 1 }),
      query.children ? this.deps.store.folders.children(folder.id) : Promise.resolve([]),
      this.deps.store.folders.activeTotals([folder.id], now),
    ]);
    const files = rows.slice(0, query.limit);
    const last = files.at(-1);
    const next = rows.length > query.limit && last ? { createdAt: last.createdAt, id: last.id } : null;
    const total = totals.get(folder.id) ?? { files: 0, bytes: 0 };
    return { folder, files, next, children, activeFiles: total.files, activeBytes: total.bytes };
  }

  /** Active files and their bytes in each of these folders (not counting sub-folders). */
  async totals(folders: Folder[]): Promise<Map<string, { files: number; bytes: number }>> {
    return folders.length === 0
      ? new Map()
      : this.deps.store.folders.activeTotals(
          folders.map((folder) => folder.id),
          this.deps.clock(),
        );
  }

  /**
   * The folders above `folder`, outermost first (breadcrumbs); the walk stops at a cycle or
   * 32 levels. Folders in `known` (a page that listed them already) are not read again.
   */
  async ancestors(folder: Folder, known: ReadonlyMap<string, Folder> = new Map()): Promise<Folder[]> {
    const chain: Folder[] = [];
    const seen = new Set([folder.id]);
    let parentId = folder.parentId;
    while (parentId !== null && !seen.has(parentId) && chain.length < 32) {
      seen.add(parentId);
      const parent = known.get(parentId) ?? (await this.deps.store.folders.byId(parentId));
      if (!parent) break;
      chain.unshift(parent);
      parentId = parent.parentId;
    }
    return chain;
  }

  /** Removes an empty folder of `caller` (no live files, no sub-folders). */
  async remove(caller: Account, id: string): Promise<Folder> {
    const folder = await this.owned(caller, id);
    await this.deps.store.transaction(async (repos) => {
      // Under the folder's lock no file moves in and no sub-folder is created meanwhile,
      // so the emptiness seen below still holds at DELETE.
      await repos.locks.folder(folder.id);
      // Expired files behave as deleted: they leave with the deleted ones, to the top, for gc.
      const now = this.deps.clock();
      await repos.files.detachDeleted(folder.id, now);
      // One live file is enough to refuse: never read them all.
      const [live, children] = await Promise.all([
        repos.files.list({ folderId: folder.id, states: [FileStatus.Active, FileStatus.Blocked], liveAt: now, limit: 1 }),
        repos.folders.children(folder.id),
      ]);
      if (live.length > 0 || children.length > 0) throw errors.folderNotEmpty();
      await repos.folders.remove(folder.id);
    });
    return folder;
  }

  /**
   * Removes a folder of `caller` with everything under it (WebDAV's DELETE, issue 27):
   * folder by folder, innermost first, each one's live files are deleted as the owner's
   * deletes are (the blob protocol, one file at a time: their digest locks come before any
   * folder lock, so never inside the folder's transaction), then the folder goes as
   * `remove` removes an empty one, under its lock. A file uploaded or moved into a folder
   * meanwhile is seen by `remove` (errorFolderNotEmpty): the walk starts again and deletes
   * it, and after TREE_ATTEMPTS walks the removal fails with what is left kept whole.
   */
  async removeTree(caller: Account, id: string): Promise<RemovedTree> {
    const top = await this.owned(caller, id);
    const removed: RemovedTree = { folders: [], files: [] };
    for (let attempt = 1; ; attempt++) {
      try {
        for (const folder of await this.subtree(top)) {
          // Moved out of the tree since it was listed (a MOVE answered already): it stays.
          if (!(await this.stillUnder(folder, top))) continue;
          await this.deleteFilesIn(caller, folder, top, removed.files);
          // Again before the folder itself goes: a move after its last file was deleted
          // keeps it (the move of an empty folder between this check and the removal can
          // still lose it, a window of one statement; docs/webdav.md).
          if (!(await this.stillUnder(folder, top))) continue;
          await this.remove(caller, folder.id);
          removed.folders.push(folder.id);
        }
        return removed;
      } catch (error) {
        if (attempt < TREE_ATTEMPTS && error instanceof ApiError && error.code === 'errorFolderNotEmpty') continue;
        throw error;
      }
    }
  }

  /** Whether `folder` is `top` or still lies below it (its parents read now, through `repos` when given). */
  private async stillUnder(folder: Folder, top: Folder, repos: Repositories = this.deps.store): Promise<boolean> {
    let at: Folder | null = await repos.folders.byId(folder.id);
    for (let depth = 0; at && depth < 256; depth++) {
      if (at.id === top.id) return true;
      at = at.parentId === null ? null : await repos.folders.byId(at.parentId);
    }
    return false;
  }

  /** A folder and every folder under it, each after all of its own sub-folders (innermost first). */
  private async subtree(top: Folder): Promise<Folder[]> {
    const order: Folder[] = [top];
    const seen = new Set([top.id]);
    for (let index = 0; index < order.length; index++) {
      for (const child of await this.deps.store.folders.children(order[index]!.id)) {
        if (seen.has(child.id)) continue;
        seen.add(child.id);
        order.push(child);
      }
    }
    // Breadth-first reversed: every folder comes after everything below it.
    return order.reverse();
  }

  /** Deletes the live files of a folder, a page at a time; ids of those deleted go to `deleted`. */
  private async deleteFilesIn(caller: Account, folder: Folder, top: Folder, deleted: string[]): Promise<void> {
    for (;;) {
      const page = await this.deps.store.files.list({
        folderId: folder.id,
        states: [FileStatus.Active, FileStatus.Blocked],
        liveAt: this.deps.clock(),
        limit: TREE_PAGE,
      });
      if (page.length === 0) return;
      let progress = false;
      for (const file of page) {
        try {
          // Only while it is still in this folder: a file moved out meanwhile stays.
          // And only while its folder is still in the tree being removed, checked under the
          // account's tree lock, which a folder's MOVE (relocate) holds too: a folder moved
          // out keeps every file.
          const inTree = async (repos: Repositories) => {
            await repos.locks.davTree(caller.id);
            return this.stillUnder(folder, top, repos);
          };
          if (await this.deps.files.deleteOwnedIn(caller, file.id, folder.id, inTree)) deleted.push(file.id);
          progress = true;
        } catch (error) {
          // Deleted (or expired) meanwhile: gone either way.
          if (!(error instanceof ApiError && error.code === 'errorFileNotFound')) throw error;
          progress = true;
        }
      }
      if (!progress) return;
    }
  }

  /**
   * Gives a folder of `caller` a new parent (null: the top) and a new name in one step
   * (WebDAV's MOVE of a collection, issue 27). Under the account's WebDAV tree lock no two
   * moves interleave, so the check that the new parent is not the folder itself or below it
   * still holds at the write; the new parent's lock orders the move against its removal.
   * A cycle is errorBadRequest; a folder gone is errorFolderNotFound. Sibling names may
   * repeat, as the API allows (the tree shows namesakes with their ids).
   */
  async relocate(caller: Account, id: string, parentId: string | null, rawName: string): Promise<Folder> {
    const folder = await this.owned(caller, id);
    if (parentId !== null) await this.owned(caller, parentId);
    const name = sanitizeFolderName(rawName);
    return this.deps.store.transaction(async (repos) => {
      // Inner locks first (the new parent's), then the account-wide one.
      await lockNames(repos, { ownerId: caller.id, folderId: parentId });
      await repos.locks.davTree(caller.id);
      for (let at = parentId, steps = 0; at !== null; steps++) {
        if (at === folder.id) throw errors.badRequest('A folder cannot be moved into itself or one of its own sub-folders');
        const step = await repos.folders.byId(at);
        if (!step || step.ownerId !== caller.id || steps > 10_000) throw errors.folderNotFound();
        at = step.parentId;
      }
      if (!(await repos.folders.relocate(folder.id, parentId, name))) throw errors.folderNotFound();
      return { ...folder, parentId, name };
    });
  }

  /**
   * The owner renames a folder; the name must not be a sibling folder's (NameTakenError),
   * checked under the parent's (or the top level's) lock, like create's.
   */
  async rename(caller: Account, id: string, rawName: string): Promise<Folder> {
    let folder = await this.owned(caller, id);
    if (rawName.trim() === '') throw errors.badRequest('Give the folder a name.');
    const name = sanitizeFolderName(rawName);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const parentId = folder.parentId;
      const outcome = await this.deps.store.transaction(async (repos) => {
        const scope = { ownerId: caller.id, folderId: parentId, exceptId: folder.id };
        await lockNames(repos, scope);
        const now = await repos.folders.byId(folder.id);
        if (!now) throw errors.folderNotFound();
        // Moved up since it was read (its parent was left): go again under the new parent's lock.
        if (now.parentId !== parentId) return { moved: now };
        if (now.name === name) return { renamed: now };
        await assertFree(repos, 'folder', scope, name);
        await repos.folders.rename(now.id, name);
        return { renamed: { ...now, name } };
      });
      if (outcome.renamed) return outcome.renamed;
      folder = outcome.moved!;
    }
    throw errors.badRequest('The folder keeps moving; try again.');
  }

  /**
   * Leaves a folder: its live files and its sub-folders move to its parent (the top for a
   * top-level folder), and the folder stays, empty. A sub-folder whose name a folder there
   * carries already (the left folder itself among them) is a NameTakenError and nothing
   * moves. Locks go inner folder first, then the parent's names, as everywhere.
   */
  async leave(caller: Account, id: string): Promise<{ folder: Folder; files: number; folders: number }> {
    let folder = await this.owned(caller, id);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const parentId = folder.parentId;
      const outcome = await this.deps.store.transaction(async (repos) => {
        // The folder's own lock: nothing moves in or is created in it meanwhile.
        await repos.locks.folder(folder.id);
        const scope = { ownerId: caller.id, folderId: parentId };
        await lockNames(repos, scope);
        const now = await repos.folders.byId(folder.id);
        if (!now) throw errors.folderNotFound();
        if (now.parentId !== parentId) return { moved: now };
        const children = await repos.folders.children(now.id);
        const taken = await repos.folders.namesTaken(
          scope,
          children.map((child) => child.name),
        );
        const clash = children.find((child) => taken.has(child.name));
        if (clash) throw new NameTakenError(clash.name, null, 'folder');
        const folders = await repos.folders.moveChildren(now.id, parentId);
        const files = await repos.files.moveAll(now.id, parentId);
        return { left: { folder: now, files, folders } };
      });
      if (outcome.left) return outcome.left;
      folder = outcome.moved!;
    }
    throw errors.badRequest('The folder keeps moving; try again.');
  }

  /** Moves one of the caller's live files out of its folder, back to the top. */
  async moveToTop(caller: Account, fileId: string): Promise<FileRecord> {
    const now = this.deps.clock();
    const file = ID_PATTERN.test(fileId) ? await this.deps.store.files.byId(fileId) : null;
    if (!file || file.status === FileStatus.Deleted || isExpired(file, now)) throw errors.fileNotFound();
    if (file.ownerId !== caller.id) throw errors.permissionDenied('The file belongs to another account');
    // The same conditional UPDATE as a move: only the owner's live file moves.
    if ((await this.deps.store.files.moveOwned([file.id], caller.id, null, now)) !== 1) throw errors.fileNotFound();
    return { ...file, folderId: null };
  }

  /**
   * Moves files into a folder, all or nothing: every id must be well-formed, listed once,
   * exist, be not deleted and belong to the caller (API.md section 7).
   */
  async move(caller: Account, folderId: string, fileIds: string[]): Promise<{ folder: Folder; moved: number; activeBytes: number }> {
    const folder = await this.owned(caller, folderId);
    if (fileIds.length === 0) throw errors.folderFilesAddFailed('No files were listed');
    if (fileIds.length > MAX_MOVE_IDS) throw errors.folderFilesAddFailed(`At most ${MAX_MOVE_IDS} files can be moved at once`);
    if (new Set(fileIds).size !== fileIds.length) throw errors.folderFilesAddFailed('A file is listed more than once');
    if (!fileIds.every((id) => ID_PATTERN.test(id))) throw errors.folderFilesAddFailed('A file id is malformed');
    try {
      // The conditional UPDATE moves only the caller's live files; if it moved fewer
      // than listed, the transaction rolls back and nothing moves.
      await this.deps.store.transaction(async (repos) => {
        // Under the folder's lock, a removal of the folder either committed before (seen
        // here: errorFolderNotFound) or waits and then sees these files (not empty).
        await repos.locks.folder(folder.id);
        if ((await repos.folders.byId(folder.id)) === null) throw errors.folderNotFound();
        const moved = await repos.files.moveOwned(fileIds, caller.id, folder.id, this.deps.clock());
        if (moved !== fileIds.length) throw errors.folderFilesAddFailed('');
      });
    } catch (error) {
      if (error instanceof ApiError && error.code === 'errorFolderFilesAddFailed') {
        throw errors.folderFilesAddFailed(await this.whyNotMovable(caller, fileIds));
      }
      // A folder removed meanwhile makes the UPDATE itself fail on the foreign key.
      if (!(error instanceof ApiError) && (await this.deps.store.folders.byId(folder.id)) === null) throw errors.folderNotFound();
      throw error;
    }
    return { folder, moved: fileIds.length, activeBytes: await this.deps.store.files.folderActiveBytes(folder.id, this.deps.clock()) };
  }

  private async whyNotMovable(caller: Account, fileIds: string[]): Promise<string> {
    const found = new Map((await this.deps.store.files.byIds(fileIds)).map((f) => [f.id, f]));
    const now = this.deps.clock();
    for (const id of fileIds) {
      const file = found.get(id);
      if (!file || file.status === FileStatus.Deleted || isExpired(file, now)) return `File ${id} does not exist or is deleted`;
      if (file.ownerId !== caller.id) return `File ${id} belongs to another account`;
    }
    return 'Files were not added to the folder';
  }
}
