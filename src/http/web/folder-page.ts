import type { FastifyInstance } from 'fastify';
import type { Folder } from '../../domain/types.js';
import { queryParam } from '../api/listing-routes.js';
import { decodeCursor, encodeCursor } from '../api/page-cursor.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { folderZipPath } from './folder-zip.js';
import { humanDate, humanSize } from './format.js';
import { sendPage } from './layout.js';
import { myFilesUrl } from './my-files-paths.js';

/** The services this module calls. */
type Context = HttpContext<'folders'>;

const count = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Files per page: a folder of any size costs one page of rows, never all of them. */
export const FOLDER_PAGE_SIZE = 200;

/**
 * folder_link: the public page of a folder (API.md 1): its active files with sizes and
 * links, their total size, and its sub-folders. The way up (breadcrumbs) is shown only
 * to the folder's owner: a link to a sub-folder shares that folder and what is below it,
 * never the folders above it or their names. Files are listed newest first, at most
 * FOLDER_PAGE_SIZE per page, with a "Next page" link (`?cursor=`, as for GET /files).
 */
export function registerFolderPage(app: FastifyInstance, context: Context): void {
  const { services, links } = context;
  app.get('/folder/:id', { config: { web: true } }, async (request, reply) => {
    const cursor = queryParam(request, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor('files', cursor);
    const folder = await services.folders.find((request.params as { id: string }).id);
    const listing = await services.folders.listing(folder, { limit: FOLDER_PAGE_SIZE, after, children: true });
    const isOwner = request.webSession?.account.id === folder.ownerId;
    const [totals, ancestors] = await Promise.all([
      services.folders.totals(listing.children),
      isOwner ? services.folders.ancestors(folder) : Promise.resolve([] as Folder[]),
    ]);

    const crumbs: Html | string =
      ancestors.length > 0
        ? html`<nav class="crumbs" aria-label="Folders above this one">${ancestors.map((parent) => html`<a href="${links.folder(parent)}">${parent.name}</a><span class="sep" aria-hidden="true">/</span>`)}<span aria-current="page">${folder.name}</span></nav>`
        : '';
    const subfolders = listing.children.map((child) => {
      const total = totals.get(child.id) ?? { files: 0, bytes: 0 };
      return html`<tr><td><a class="folder-link" href="${links.folder(child)}">${child.name}</a></td><td class="size">${count(total.files, 'file')} · ${humanSize(total.bytes)}</td></tr>`;
    });
    const rows = listing.files.map(
      (file) =>
        html`<tr><td><a href="${links.download(file)}">${file.name}</a></td><td class="size">${humanSize(file.size)}</td><td class="date">${humanDate(file.createdAt)}</td></tr>`,
    );
    const folderCount = listing.children.length > 0 ? html` · ${count(listing.children.length, 'folder')}` : '';
    const nextUrl = listing.next ? `${links.folder(folder)}?cursor=${encodeCursor('files', listing.next)}` : null;
    const pager =
      after || nextUrl
        ? html`<nav class="pager" aria-label="Pages">${after ? html`<a href="${links.folder(folder)}">First page</a>` : html`<span></span>`}${nextUrl ? html`<a href="${nextUrl}">Next page</a>` : ''}</nav>`
        : '';
    return sendPage(
      reply,
      200,
      folder.name,
      html`<section class="card folder-card">
${crumbs}
<h1>${folder.name}</h1>
<p class="meta">${count(listing.activeFiles, 'file')} · ${humanSize(listing.activeBytes)}${folderCount}${isOwner ? html` · <a href="${myFilesUrl(folder.id)}">open in My files</a>` : ''}</p>
${listing.activeFiles > 0 || listing.children.length > 0 ? html`<p class="download-row"><a class="button" href="${folderZipPath(folder)}" download>Download all as ZIP</a></p>` : ''}
${subfolders.length > 0 ? html`<h2>Folders</h2><table class="listing"><tbody>${subfolders}</tbody></table>` : ''}
${subfolders.length > 0 && rows.length > 0 ? html`<h2>Files</h2>` : ''}
${rows.length > 0 ? html`<table class="listing"><thead><tr><th>Name</th><th class="size">Size</th><th class="date">Uploaded</th></tr></thead><tbody>${rows}</tbody></table>` : after ? html`<p>No more files.</p>` : subfolders.length > 0 ? '' : html`<p>This folder is empty.</p>`}
${pager}
</section>`,
    );
  });
}
