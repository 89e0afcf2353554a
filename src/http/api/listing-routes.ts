import type { FastifyReply, FastifyRequest } from 'fastify';
import { sqlDateTime } from '../../domain/dates.js';
import { errors } from '../../domain/errors.js';
import { type FileRecord, FileStatus, isFileStatus } from '../../domain/types.js';
import { DEFAULT_PAGE_SIZE, type FolderSummary, type ListPosition, MAX_PAGE_SIZE } from '../../services/listing-service.js';
import { entryEl, linkEl, textEl, type XmlElement } from '../atom.js';
import type { HttpContext } from '../context.js';
import { requireAccount } from '../plugins/api-auth.js';
import { requestPath, sendAtom } from '../plugins/atom-reply.js';
import type { Handler } from '../plugins/method-dispatch.js';
import { type CursorKind, decodeCursor, encodeCursor } from './page-cursor.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'listing'>;

/**
 * The listing extensions: `GET /files` (title `File list`) and `GET /folders` (title
 * `Folder list`), the caller's own files and folders, newest first, page by page. Feed
 * shape as API.md 3 (self link after the entries); a next page is announced by a
 * feed-level `<link rel="next" href="..."/>` right after the self link.
 *
 * Query parameters, each at most once:
 * - `limit`: 1 to 500, default 50;
 * - `cursor`: from the previous page's next link;
 * - files: `status` (`A`, `B` or `A,B`; default `A,B`; deleted files are gone for the API,
 *   API.md 4), `folder` (`root` or one of the caller's folder ids);
 * - folders: `parent` (`root` or one of the caller's folder ids).
 */

/** A query parameter given at most once; undefined when absent. */
export function queryParam(request: FastifyRequest, name: string): string | undefined {
  const query = request.query;
  if (typeof query !== 'object' || query === null) return undefined;
  const value = (query as Record<string, unknown>)[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw errors.badRequest(`${name} must be given at most once`);
  return value;
}

/** `limit`: a whole number from 1 to MAX_PAGE_SIZE (400 otherwise). */
export function pageSize(request: FastifyRequest): number {
  const raw = queryParam(request, 'limit');
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const limit = /^[0-9]{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE_SIZE)) throw errors.badRequest(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  return limit;
}

/** `folder` or `parent`: `root` is null, anything else a folder id checked by the service. */
function folderParam(request: FastifyRequest, name: string): string | null | undefined {
  const raw = queryParam(request, name);
  if (raw === undefined) return undefined;
  if (raw === '') throw errors.badRequest(`${name} must be root or a folder id`);
  return raw === 'root' ? null : raw;
}

/** `status`: a comma list of A and B (either case); default both. */
function statuses(request: FastifyRequest): FileStatus[] {
  const raw = queryParam(request, 'status');
  if (raw === undefined) return [FileStatus.Active, FileStatus.Blocked];
  const letters = raw.split(',').map((part) => part.trim().toUpperCase());
  if (!letters.every((letter) => isFileStatus(letter) && letter !== FileStatus.Deleted)) {
    throw errors.badRequest('status must list A (active) and/or B (blocked), separated by commas');
  }
  return [FileStatus.Active, FileStatus.Blocked].filter((state) => letters.includes(state));
}

/** The `<link rel="next"/>` of a page that has a successor: the same filters, plus the cursor. */
export function nextLinks(request: FastifyRequest, kind: CursorKind, filters: Array<[string, string | undefined]>, next: ListPosition | null): XmlElement[] {
  if (!next) return [];
  const params = new URLSearchParams();
  for (const [name, value] of filters) if (value !== undefined) params.set(name, value);
  params.set('cursor', encodeCursor(kind, next));
  return [linkEl(['rel', 'next'], ['href', `${requestPath(request)}?${params.toString()}`])];
}

/** `GET /files`: the caller's files (listing extension). */
export function listFilesHandler(context: Context): Handler {
  const { services, links } = context;
  const { listing } = services;

  const fileEntry = (file: FileRecord): XmlElement =>
    entryEl(
      textEl('id', file.id),
      textEl('title', file.name),
      textEl('ed:size', file.size),
      textEl('ed:status', file.status),
      textEl('ed:folder', file.folderId ?? ''),
      textEl('ed:created', sqlDateTime(file.createdAt)),
      linkEl(['title', 'download_link'], ['href', links.download(file)], ['rel', 'enclosure'], ['length', file.size]),
    );

  return async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const states = statuses(request);
    const folder = folderParam(request, 'folder');
    const limit = pageSize(request);
    const cursor = queryParam(request, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor('files', cursor);
    const page = await listing.files(account, { states, folder, limit, after });
    const filters: Array<[string, string | undefined]> = [
      ['status', queryParam(request, 'status') === undefined ? undefined : states.join(',')],
      ['folder', queryParam(request, 'folder')],
      ['limit', queryParam(request, 'limit') === undefined ? undefined : String(limit)],
    ];
    return sendAtom(context, request, reply, 200, 'File list', page.items.map(fileEntry), nextLinks(request, 'files', filters, page.next));
  };
}

/** `GET /folders`: the caller's folders with their active file counts and bytes (listing extension). */
export function listFoldersHandler(context: Context): Handler {
  const { services, links } = context;
  const { listing } = services;

  const folderEntry = ({ folder, activeFiles, activeBytes }: FolderSummary): XmlElement =>
    entryEl(
      textEl('id', folder.id),
      textEl('title', folder.name),
      textEl('ed:parent', folder.parentId ?? ''),
      linkEl(['title', 'folder_link'], ['href', links.folder(folder)], ['rel', 'enclosure'], ['length', activeBytes]),
      textEl('ed:files', activeFiles),
    );

  return async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const parent = folderParam(request, 'parent');
    const limit = pageSize(request);
    const cursor = queryParam(request, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor('folders', cursor);
    const page = await listing.folders(account, { parent, limit, after });
    const filters: Array<[string, string | undefined]> = [
      ['parent', queryParam(request, 'parent')],
      ['limit', queryParam(request, 'limit') === undefined ? undefined : String(limit)],
    ];
    return sendAtom(context, request, reply, 200, 'Folder list', page.items.map(folderEntry), nextLinks(request, 'folders', filters, page.next));
  };
}
