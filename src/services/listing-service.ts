import type { BrowsePosition, FileSortKey, MetadataStore } from '../db/repositories/repositories.js';
import { errors } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import { type Account, type FileRecord, FileStatus, type Folder } from '../domain/types.js';
import type { FoldersService } from './folders-service.js';

export interface ListingServiceDeps {
  store: MetadataStore;
  /** Ownership checks of the folder filters (errorFolderNotFound, errorPermissionDenied). */
  folders: FoldersService;
  /** Files expired now are left out of every listing (they behave as deleted, issue 25). */
  clock: Clock;
}

/** Page size when none is asked for. */
export const DEFAULT_PAGE_SIZE = 50;
/** Largest page a caller may ask for. */
export const MAX_PAGE_SIZE = 500;

/** A position in a newest-first listing: the last item of the previous page. */
export interface ListPosition {
  /** Creation time of that item, epoch ms. */
  createdAt: number;
  /** Its id, the tie-break between equal times. */
  id: string;
}

/** One page of a listing. */
export interface Page<T> {
  /** The items, newest first. */
  items: T[];
  /** Where the next page starts, or null when this page is the last. */
  next: ListPosition | null;
}

/** What `GET /files` asks for. */
export interface FileListQuery {
  /** States to list: active and/or blocked (deleted files are gone for the API, API.md 4). */
  states: FileStatus[];
  /** A folder id of the caller, null for the root, undefined for every folder. */
  folder?: string | null;
  /** Page size, 1 to MAX_PAGE_SIZE. */
  limit: number;
  /** Continue after this position. */
  after?: ListPosition;
}

/** What `GET /folders` asks for. */
export interface FolderListQuery {
  /** A parent folder id of the caller, null for top-level folders, undefined for all. */
  parent?: string | null;
  /** Page size, 1 to MAX_PAGE_SIZE. */
  limit: number;
  /** Continue after this position. */
  after?: ListPosition;
}

/** What My files asks for: a page of the caller's files in a chosen order, optionally searched by name. */
export interface FileBrowseQuery {
  /** States to list (active and/or blocked). */
  states: FileStatus[];
  /** A folder id of the caller, null for the top, undefined for every folder. */
  folder?: string | null;
  /** Text the names must contain (case-insensitive); empty or undefined for all. */
  search?: string;
  /** Sort key and direction. */
  sort: FileSortKey;
  descending: boolean;
  /** Page size, 1 to MAX_PAGE_SIZE. */
  limit: number;
  /** Continue after this position (the last file of the previous page in the same order). */
  after?: BrowsePosition;
}

/** Longest search text: a name is at most 255 bytes. */
export const MAX_SEARCH_LENGTH = 255;

/** A folder with the totals its entry shows. */
export interface FolderSummary {
  folder: Folder;
  /** Number of active files directly in the folder. */
  activeFiles: number;
  /** Their total size in bytes. */
  activeBytes: number;
}

/**
 * The caller's files and folders, page by page (listing extensions of the API). Pages are
 * keyset pages on (created_at, id), newest first: an upload between two pages lands
 * before the first page's position and so can neither shift nor repeat what follows.
 */
export class ListingService {
  constructor(private readonly deps: ListingServiceDeps) {}

  /** A page of the caller's files. */
  async files(caller: Account, query: FileListQuery): Promise<Page<FileRecord>> {
    checkLimit(query.limit);
    if (query.states.length === 0 || query.states.includes(FileStatus.Deleted)) {
      throw errors.badRequest('status must list A (active) and/or B (blocked)');
    }
    const folderId = typeof query.folder === 'string' ? (await this.deps.folders.owned(caller, query.folder)).id : query.folder;
    // One row more than asked tells whether a next page exists without another query.
    const rows = await this.deps.store.files.list({
      ownerId: caller.id,
      states: query.states,
      folderId,
      before: query.after,
      liveAt: this.deps.clock(),
      limit: query.limit + 1,
    });
    return paged(rows, query.limit);
  }

  /**
   * A page of the caller's files for My files: sorted by name, size or date either way,
   * keyset-paged on (key, id) like `files` (a file uploaded or renamed between two pages
   * can neither shift nor repeat what follows), searched by name.
   */
  async browse(caller: Account, query: FileBrowseQuery): Promise<{ items: FileRecord[]; next: BrowsePosition | null }> {
    checkLimit(query.limit);
    if (query.states.length === 0 || query.states.includes(FileStatus.Deleted)) {
      throw errors.badRequest('status must list A (active) and/or B (blocked)');
    }
    const search = query.search?.trim() ?? '';
    if (search.length > MAX_SEARCH_LENGTH) throw errors.badRequest(`Search for at most ${MAX_SEARCH_LENGTH} characters.`);
    const folderId = typeof query.folder === 'string' ? (await this.deps.folders.owned(caller, query.folder)).id : query.folder;
    const rows = await this.deps.store.files.browse({
      ownerId: caller.id,
      states: query.states,
      folderId,
      nameContains: search === '' ? undefined : search,
      sort: query.sort,
      descending: query.descending,
      after: query.after,
      liveAt: this.deps.clock(),
      limit: query.limit + 1,
    });
    const items = rows.slice(0, query.limit);
    const last = items.at(-1);
    const key = (file: FileRecord) => (query.sort === 'name' ? file.name : query.sort === 'size' ? file.size : file.createdAt);
    return { items, next: rows.length > query.limit && last ? { key: key(last), id: last.id } : null };
  }

  /** A page of the caller's folders with their active file counts and bytes. */
  async folders(caller: Account, query: FolderListQuery): Promise<Page<FolderSummary>> {
    checkLimit(query.limit);
    const parentId = typeof query.parent === 'string' ? (await this.deps.folders.owned(caller, query.parent)).id : query.parent;
    const rows = await this.deps.store.folders.list({ ownerId: caller.id, parentId, before: query.after, limit: query.limit + 1 });
    const page = paged(rows, query.limit);
    // One grouped query for the whole page, not one per folder.
    const totals = await this.deps.store.folders.activeTotals(
      page.items.map((folder) => folder.id),
      this.deps.clock(),
    );
    return {
      items: page.items.map((folder) => {
        const total = totals.get(folder.id);
        return { folder, activeFiles: total?.files ?? 0, activeBytes: total?.bytes ?? 0 };
      }),
      next: page.next,
    };
  }
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw errors.badRequest(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  }
}

/** Cuts the extra row off and turns the last kept item into the next position. */
function paged<T extends { createdAt: number; id: string }>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}
