import type { FastifyInstance, FastifyReply } from 'fastify';
import { errors } from '../../domain/errors.js';
import { FileStatus, type Folder } from '../../domain/types.js';
import { type FolderSummary, MAX_PAGE_SIZE, MAX_SEARCH_LENGTH } from '../../services/listing-service.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { folderZipPath } from './folder-zip.js';
import { humanSize } from './format.js';
import { sendPage } from './layout.js';
import { registerMyFilesActions } from './my-files-actions.js';
import { registerMyFolderActions } from './my-files-folder-actions.js';
import { fileEntries, type ListView } from './my-files-list.js';
import {
  MY_FILES_PATH,
  MY_FOLDER_DELETE_PATH,
  MY_FOLDER_LEAVE_PATH,
  MY_FOLDER_RENAME_PATH,
  MY_FOLDERS_PATH,
  myFilesUrl,
  NOTES,
  type NoteKey,
} from './my-files-paths.js';
import { DEFAULT_SORT, decodeBrowseCursor, encodeBrowseCursor, isSort, type ListState, listUrl, SORTS, VIEW_COOKIE, type ViewMode } from './my-files-query.js';
import { signInUrl } from './return-path.js';
import { CSRF_FIELD, redirectTo } from './session-plugin.js';
import { registerUploadScripts, UPLOAD_PAGE_CSP, UPLOAD_SCRIPTS, uploadForm } from './upload-form.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'config' | 'files' | 'folders' | 'listing' | 'sessions' | 'uploads'>;

/** Files per page of the list. */
export const MY_FILES_PAGE_SIZE = 50;
/** Deepest folder chain the breadcrumb walks (folders cannot form cycles; this is a guard). */
const MAX_DEPTH = 32;

/** A query parameter given at most once; a repeated one is a 400. */
function queryParam(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown>)[name];
  if (value === undefined || typeof value === 'string') return value;
  throw errors.badRequest(`${name} must be given at most once`);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * "My files" of a signed-in account (/my/files, /my/files?folder=<id>): the upload form,
 * the folders (each with its ZIP; a folder's page renames, leaves and deletes it), the files
 * page by page, searched by name (`q`), in an order (`sort`), as a list or a grid of
 * thumbnails (`view`, remembered), with a move, rename and delete form each. Every form
 * works without JavaScript; the my-files script (browser/my-files.ts) adds drag
 * and drop, one upload per file with a progress bar (files over 4 MiB resumable, through
 * tus-js-client and /uploads), and copy buttons.
 */
export function registerMyFiles(app: FastifyInstance, context: Context): void {
  const { services, links } = context;
  const { listing } = services;
  const { fileItem, fileTile } = fileEntries(links);

  registerUploadScripts(app);

  /** A folder's name with its parents' ("Photos / 2026"), for the move menus. */
  const pathName = (folder: Folder, known: Map<string, Folder>): string => {
    const names = [folder.name];
    for (let parent = folder.parentId ? known.get(folder.parentId) : undefined; parent && names.length < MAX_DEPTH; ) {
      names.unshift(parent.name);
      parent = parent.parentId ? known.get(parent.parentId) : undefined;
    }
    return names.join(' / ');
  };

  const allowConnect = async (_request: unknown, reply: FastifyReply) => {
    reply.header('Content-Security-Policy', UPLOAD_PAGE_CSP);
  };

  app.get(MY_FILES_PATH, { config: { web: true }, onSend: allowConnect }, async (request, reply) => {
    const session = request.webSession;
    if (!session) return redirectTo(reply, signInUrl(request.url));
    const account = session.account;
    const folderId = queryParam(request.query, 'folder');
    const cursor = queryParam(request.query, 'cursor');
    const note = queryParam(request.query, 'note');
    const sort = queryParam(request.query, 'sort') ?? DEFAULT_SORT;
    if (!isSort(sort)) throw errors.badRequest(`sort must be one of ${Object.keys(SORTS).join(', ')}`);
    const q = (queryParam(request.query, 'q') ?? '').trim();
    const viewMode = chooseView(queryParam(request.query, 'view'), request.cookies[VIEW_COOKIE], reply);

    const current = folderId === undefined || folderId === '' ? null : await services.folders.owned(account, folderId);
    const after = cursor === undefined ? undefined : decodeBrowseCursor(sort, cursor);
    const order = SORTS[sort];
    const [page, all, children, allowance] = await Promise.all([
      listing.browse(account, {
        states: [FileStatus.Active, FileStatus.Blocked],
        folder: current?.id,
        search: q,
        sort: order.key,
        descending: order.descending,
        limit: MY_FILES_PAGE_SIZE,
        after,
      }),
      listing.folders(account, { limit: MAX_PAGE_SIZE }),
      listing.folders(account, { parent: current?.id ?? null, limit: MAX_PAGE_SIZE }),
      services.uploads.allowance(account),
    ]);
    const known = new Map(all.items.map(({ folder }) => [folder.id, folder]));
    const menu = all.items.map(({ folder }) => ({ id: folder.id, name: pathName(folder, known) })).sort((a, b) => a.name.localeCompare(b.name));
    // At most MAX_DEPTH entries, the nearest folders above this one.
    const chain = current ? [...(await services.folders.ancestors(current, known)).slice(1 - MAX_DEPTH), current] : [];

    const state: ListState = { folder: current?.id ?? null, q, sort };
    const view: ListView = { session, current, known, menu, back: listUrl(state), now: services.clock() };
    const nextUrl = page.next ? listUrl(state, { cursor: encodeBrowseCursor(sort, page.next) }) : null;
    const noteText = note !== undefined && Object.hasOwn(NOTES, note) ? NOTES[note as NoteKey] : null;
    const newestFirst = sort === DEFAULT_SORT;
    const entry = viewMode === 'grid' ? fileTile : fileItem;

    return sendPage(
      reply,
      200,
      current ? current.name : 'My files',
      html`<section class="card" id="upload">
${current ? breadcrumb(chain) : ''}
<h1>${current ? html`<bdi>${current.name}</bdi>` : 'My files'}</h1>
${current ? html`<p class="public-link">Public page, for anyone with the link: <a href="${links.folder(current)}">${links.folder(current)}</a></p>` : ''}
${current ? folderActions(current, session.csrfToken, chain) : ''}
${noteText ? html`<p class="notice ok" role="status">${noteText}</p>` : ''}
${uploadForm({ csrfToken: session.csrfToken, accountId: account.id, folder: current, allowance, maxChunkSize: services.config.uploadChunkSize })}
</section>
<section class="card" id="folders">
<h2>${current ? 'Folders in this folder' : 'Folders'}</h2>
${children.items.length > 0 ? html`<ul class="folder-list">${children.items.map(folderItem)}</ul>` : html`<p class="hint">${current ? 'No folders in this folder.' : 'No folders yet.'}</p>`}
<form class="new-folder" method="post" action="${MY_FOLDERS_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">
${current ? html`<input type="hidden" name="parent" value="${current.id}">` : ''}
<label for="folder-name">New folder${current ? ' here' : ''}</label>
<div class="row"><input id="folder-name" name="name" required maxlength="255" autocomplete="off"><button class="button secondary" type="submit">Create folder</button></div>
</form>
</section>
<section class="card" id="files">
<h2>${q !== '' ? html`Files named like “<bdi>${q}</bdi>”${current ? ' in this folder' : ''}` : current ? 'Files in this folder' : 'All files'}</h2>
${listControls(state, viewMode)}
${
  page.items.length > 0
    ? html`<ul class="${viewMode === 'grid' ? 'file-grid' : 'file-list'}">${page.items.map((file) => entry(file, view))}</ul>`
    : html`<p class="hint">${after ? 'No more files.' : q !== '' ? 'No file names match.' : current ? 'No files in this folder yet.' : 'No files yet: upload some above.'}</p>`
}
${
  after || nextUrl
    ? html`<nav class="pager" aria-label="Pages">${after ? html`<a href="${listUrl(state)}">${newestFirst ? 'Newest files' : 'First page'}</a>` : html`<span></span>`}${
        nextUrl ? html`<a href="${nextUrl}">${newestFirst ? 'Older files' : 'Next page'}</a>` : ''
      }</nav>`
    : ''
}
</section>
${UPLOAD_SCRIPTS}`,
    );
  });

  /**
   * The view: `?view=` when given (and then remembered in a cookie for a year, so it
   * sticks without JavaScript), else the cookie's, else the list.
   */
  const chooseView = (asked: string | undefined, cookie: string | undefined, reply: FastifyReply): ViewMode => {
    if (asked !== undefined) {
      if (asked !== 'list' && asked !== 'grid') throw errors.badRequest('view must be list or grid');
      reply.setCookie(VIEW_COOKIE, asked, { path: MY_FILES_PATH, maxAge: 365 * 86_400, sameSite: 'lax', httpOnly: true });
      return asked;
    }
    return cookie === 'grid' ? 'grid' : 'list';
  };

  /** Search (a GET form: works without JavaScript, its results paged like the list), order, list or grid. */
  const listControls = (state: ListState, viewMode: ViewMode): Html =>
    html`<div class="list-controls">
<form class="search" method="get" action="${MY_FILES_PATH}" role="search">
${state.folder ? html`<input type="hidden" name="folder" value="${state.folder}">` : ''}
<input type="search" name="q" value="${state.q}" maxlength="${String(MAX_SEARCH_LENGTH)}" placeholder="Search by name" aria-label="Search files by name">
<select name="sort" id="sort-select" aria-label="Order">${Object.entries(SORTS).map(
      ([value, { label }]) => html`<option value="${value}"${value === state.sort ? html` selected` : ''}>${label}</option>`,
    )}</select>
<button class="button small secondary" type="submit">Search</button>
${state.q !== '' ? html`<a class="clear-search" href="${listUrl({ ...state, q: '' })}">Clear search</a>` : ''}
</form>
<nav class="view-toggle" aria-label="View">${(['list', 'grid'] as const).map((mode) =>
      mode === viewMode
        ? html`<a class="button small" href="${listUrl(state, { view: mode })}" aria-current="true">${mode === 'list' ? 'List' : 'Grid'}</a>`
        : html`<a class="button small secondary" href="${listUrl(state, { view: mode })}">${mode === 'list' ? 'List' : 'Grid'}</a>`,
    )}</nav>
</div>`;

  /** A folder's own actions: its ZIP, rename, leave (contents up a level), delete when empty. */
  const folderActions = (folder: Folder, csrfToken: string, chain: Folder[]): Html => {
    const fields = html`<input type="hidden" name="${CSRF_FIELD}" value="${csrfToken}"><input type="hidden" name="folder" value="${folder.id}">`;
    const up = chain.length > 1 ? chain[chain.length - 2]!.name : 'My files';
    return html`<div class="folder-actions">
<a class="button small secondary" href="${folderZipPath(folder)}" download>Download as ZIP</a>
<details class="rename"><summary class="button small secondary">Rename folder</summary><form method="post" action="${MY_FOLDER_RENAME_PATH}">${fields}<input name="name" value="${folder.name}" required maxlength="255" autocomplete="off" aria-label="New name for the folder"><button class="button small" type="submit">Save name</button></form></details>
<form method="post" action="${MY_FOLDER_LEAVE_PATH}">${fields}<button class="button small secondary" type="submit">Move contents up to <bdi>${up}</bdi></button></form>
<form method="post" action="${MY_FOLDER_DELETE_PATH}">${fields}<button class="button small danger" type="submit">Delete folder</button></form>
</div>`;
  };

  const breadcrumb = (chain: Folder[]): Html =>
    html`<nav class="crumbs" aria-label="Folders"><a href="${MY_FILES_PATH}">My files</a>${chain.map((folder, i) =>
      i === chain.length - 1
        ? html` <span aria-hidden="true">›</span> <span aria-current="page"><bdi>${folder.name}</bdi></span>`
        : html` <span aria-hidden="true">›</span> <a href="${myFilesUrl(folder.id)}"><bdi>${folder.name}</bdi></a>`,
    )}</nav>`;

  const folderItem = ({ folder, activeFiles, activeBytes }: FolderSummary): Html =>
    html`<li><a class="folder-name" href="${myFilesUrl(folder.id)}"><bdi>${folder.name}</bdi></a> <span class="file-meta">${plural(activeFiles, 'file')} · ${humanSize(activeBytes)}</span> <a class="zip-link" href="${folderZipPath(folder)}" download title="Download ${folder.name} as ZIP">ZIP</a></li>`;

  registerMyFilesActions(app, context);
  registerMyFolderActions(app, context);
}
