import type { BrowsePosition, FileSortKey } from '../../db/repositories/repositories.js';
import { errors } from '../../domain/errors.js';
import { ID_PATTERN } from '../../domain/ids.js';
import { MY_FILES_PATH, type NoteKey } from './my-files-paths.js';

/** The orders of the list, as the `sort` parameter spells them; the first is the default. */
export const SORTS = {
  'date-desc': { label: 'Newest first', key: 'date', descending: true },
  'date-asc': { label: 'Oldest first', key: 'date', descending: false },
  'name-asc': { label: 'Name A–Z', key: 'name', descending: false },
  'name-desc': { label: 'Name Z–A', key: 'name', descending: true },
  'size-desc': { label: 'Largest first', key: 'size', descending: true },
  'size-asc': { label: 'Smallest first', key: 'size', descending: false },
} as const satisfies Record<string, { label: string; key: FileSortKey; descending: boolean }>;
export type SortOption = keyof typeof SORTS;
export const DEFAULT_SORT: SortOption = 'date-desc';

/** List or grid of thumbnails; remembered in a cookie (works without JavaScript). */
export type ViewMode = 'list' | 'grid';
export const VIEW_COOKIE = 'fh_files_view';

/** What a list of My files shows: a folder (null: every file), a search, an order. */
export interface ListState {
  folder: string | null;
  /** Search text, '' for none. */
  q: string;
  sort: SortOption;
}

export const isSort = (value: string): value is SortOption => Object.hasOwn(SORTS, value);

/** The URL of a list; defaults are left out, so the plain list stays /my/files. */
export function listUrl(state: ListState, extra: { cursor?: string; note?: NoteKey; view?: ViewMode } = {}): string {
  const params = new URLSearchParams();
  if (state.folder) params.set('folder', state.folder);
  if (state.q !== '') params.set('q', state.q);
  if (state.sort !== DEFAULT_SORT) params.set('sort', state.sort);
  if (extra.cursor) params.set('cursor', extra.cursor);
  if (extra.view) params.set('view', extra.view);
  if (extra.note) params.set('note', extra.note);
  const query = params.toString();
  return query === '' ? MY_FILES_PATH : `${MY_FILES_PATH}?${query}`;
}

/**
 * A form's `back` field (the list it was sent from) read back as a list state; anything
 * else is null. Only the known parameters are kept, so the redirect stays on My files.
 */
export function backState(back: string | undefined): ListState | null {
  if (back === undefined || !back.startsWith(`${MY_FILES_PATH}`)) return null;
  let url: URL;
  try {
    url = new URL(back, 'http://x');
  } catch {
    return null;
  }
  if (url.pathname !== MY_FILES_PATH) return null;
  const folder = url.searchParams.get('folder');
  const sort = url.searchParams.get('sort') ?? DEFAULT_SORT;
  return {
    folder: folder !== null && ID_PATTERN.test(folder) ? folder : null,
    q: (url.searchParams.get('q') ?? '').slice(0, 255),
    sort: isSort(sort) ? sort : DEFAULT_SORT,
  };
}

/** Far longer than any cursor written here (a 255-byte name and an id). */
const MAX_CURSOR_LENGTH = 512;

/**
 * The `cursor` of the list's next link: the sort it belongs to, then the keyset position
 * (the last file's id and sort key), base64url. As the API's cursors, unsigned: the owner
 * filter applies on every page, so an edited cursor only moves within the caller's list.
 */
export function encodeBrowseCursor(sort: SortOption, position: BrowsePosition): string {
  return Buffer.from(`${sort}:${position.id}:${position.key}`, 'utf8').toString('base64url');
}

/** Reads a cursor back; one of another sort, or not written here, is errorBadRequest (400). */
export function decodeBrowseCursor(sort: SortOption, cursor: string): BrowsePosition {
  const bad = () => errors.badRequest('cursor is not valid; use the next link of the previous page');
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (Buffer.from(text, 'utf8').toString('base64url') !== cursor) throw bad();
  const match = /^([a-z]+-[a-z]+):([^:]*):([\s\S]*)$/.exec(text);
  if (!match || match[1] !== sort || !ID_PATTERN.test(match[2]!)) throw bad();
  const key = match[3]!;
  if (SORTS[sort].key === 'name') return { key, id: match[2]! };
  if (!/^(0|[1-9][0-9]{0,15})$/.test(key) || !Number.isSafeInteger(Number(key))) throw bad();
  return { key: Number(key), id: match[2]! };
}
