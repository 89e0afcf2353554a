import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ShareRecord } from '../../db/repositories/repositories.js';
import { ApiError, errors } from '../../domain/errors.js';
import type { Requester } from '../../downloads/requester.js';
import type { ListPosition } from '../../services/listing-service.js';
import type { ShareKey } from '../../sharing/shares-service.js';
import { queryParam } from '../api/listing-routes.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { sendDownload } from '../send-download.js';
import { sendFolderZip } from '../send-folder-zip.js';
import { humanDate, humanSize } from './format.js';
import { sendPage } from './layout.js';
import { bodyField, cookieOptions, redirectTo } from './session-plugin.js';

/** The services this module calls. */
type Context = HttpContext<'downloads' | 'folders' | 'shares'>;

/** The header a script gives a protected share's password in (never the URL). */
export const SHARE_PASSWORD_HEADER = 'filehaven-share-password';

/** Files per page of a folder share, as on a folder's own page. */
const SHARE_PAGE_SIZE = 200;

const sharePath = (share: { id: string }) => `/s/${share.id}`;
const downloadPath = (share: { id: string }) => `/s/${share.id}/download`;
const count = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Using a share (issue 25, docs/web.md and docs/api.md "Shares"), no account needed:
 *
 * - `GET /s/<id>`: the page for people. A file share shows the name, size and a download
 *   button; a folder share its active files and sub-folders (`?folder=<ref>` browses below
 *   it, never above), a download per file and the folder as one ZIP. A protected share
 *   shows only a password form and reveals nothing (no name, size or OpenGraph tags)
 *   until the right password; `POST /s/<id>` with it sets the share's cookie
 *   (sharing/link-access.ts) and redirects back. Errors here are pages.
 * - `GET /s/<id>/download` (the file, or the folder as one ZIP) and
 *   `GET /s/<id>/download/<file ref>` (one file of a folder share, inside its tree): through
 *   the download use case, which counts the share's downloads and charges their cost.
 *   The password comes in the `Filehaven-Share-Password` header or as the cookie, never
 *   from the query string. Errors here are the Atom error shape.
 *
 * The page and the paths carry share-scoped references (sharing/share-refs.ts) of the
 * files and folders inside a folder share, never their real ids: a real id is a public
 * link of its own that would outlive the share. A reference is read back, and checked to
 * be inside the shared tree, on every request; a real id in its place is not found.
 *
 * Everything is decided per request: an expired, revoked or emptied share stops at once;
 * a download already running finishes.
 */
export function registerSharePages(app: FastifyInstance, context: Context): void {
  const { services } = context;

  const keyOf = (request: FastifyRequest, share: { id: string }, password?: string): ShareKey => {
    const header = request.headers[SHARE_PASSWORD_HEADER];
    return {
      password: password ?? (typeof header === 'string' ? header : undefined),
      cookie: request.cookies[services.shares.cookieName(share.id)],
      address: request.ip,
    };
  };

  const requesterFor = async (request: FastifyRequest, share: ShareRecord): Promise<Requester> => ({
    link: 'share',
    address: request.ip,
    share: { id: share.id, fast: share.fast },
    owner: await services.shares.owner(share),
  });

  /** The share, its password proven, for a download route (Atom errors). */
  const unlocked = async (request: FastifyRequest) => {
    const share = await services.shares.open((request.params as { id: string }).id);
    await services.shares.unlock(share, keyOf(request, share));
    return share;
  };

  app.get('/s/:id', { config: { web: true } }, async (request, reply) => {
    const share = await services.shares.open((request.params as { id: string }).id);
    if (services.shares.locked(share, keyOf(request, share).cookie)) return passwordPage(reply, share, null);
    return sharePage(request, reply, share);
  });

  app.post('/s/:id', { config: { web: true } }, async (request, reply) => {
    const share = await services.shares.open((request.params as { id: string }).id);
    if (!services.shares.locked(share, keyOf(request, share).cookie)) return redirectTo(reply, sharePath(share));
    try {
      await services.shares.unlock(share, keyOf(request, share, bodyField(request, 'password') ?? ''));
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'errorSharePassword') throw error;
      reply.headers(error.headers);
      return passwordPage(reply, share, error);
    }
    const cookie = services.shares.accessCookie(share);
    if (cookie) {
      // Only this share's paths carry it; it lives as long as the browser session.
      const options = { ...cookieOptions(request, context.links), path: sharePath(share) };
      reply.setCookie(cookie.name, cookie.value, { ...options, secure: options.secure === true });
    }
    return redirectTo(reply, sharePath(share));
  });

  app.get('/s/:id/download', async (request, reply) => {
    const share = await unlocked(request);
    const target = await services.shares.target(share);
    const requester = await requesterFor(request, share);
    if (target.kind === 'file') {
      return sendDownload(services.downloads, request, reply, target.file, { requester, purpose: 'download' });
    }
    // No ranges: every GET is one download of the share, counted (and refused past the limit) before the headers go out.
    return sendFolderZip(services.downloads, request, reply, target.folder, requester);
  });

  app.get('/s/:id/download/:file', async (request, reply) => {
    const share = await unlocked(request);
    const target = await services.shares.target(share);
    // A file share has no files below it: the one file is at /download.
    if (target.kind !== 'folder') throw new ApiError('errorFileNotFound', 404, 'File does not exist or is deleted');
    const file = await services.shares.fileIn(share, target.folder, (request.params as { file: string }).file);
    return sendDownload(services.downloads, request, reply, file, { requester: await requesterFor(request, share), purpose: 'download' });
  });

  /** The page of an open share: the file, or the folder (or a folder below it) with its files. */
  const sharePage = async (request: FastifyRequest, reply: FastifyReply, share: ShareRecord) => {
    const target = await services.shares.target(share);
    const limits = shareNotes(share);
    if (target.kind === 'file') {
      const { file } = target;
      return sendPage(
        reply,
        200,
        file.name,
        html`<section class="card file-card share-card">
<h1>${file.name}</h1>
<p class="meta">${humanSize(file.size)} · shared file</p>
${limits}
<p class="download-row"><a class="button big" href="${downloadPath(share)}" download>Download <span class="button-note">${humanSize(file.size)}</span></a></p>
</section>`,
      );
    }
    const top = target.folder;
    // Only share-scoped references on this page, never a real id (share-refs.ts).
    const asked = queryParam(request, 'folder');
    const folder = asked === undefined ? top : await services.shares.folderIn(share, top, asked);
    const cursor = queryParam(request, 'cursor');
    const after = cursor === undefined ? undefined : decodeShareCursor(cursor, (ref) => services.shares.idOf(share, 'file', ref));
    const listing = await services.folders.listing(folder, { limit: SHARE_PAGE_SIZE, after, children: true });
    const totals = await services.folders.totals(listing.children);
    const here = (id: string, extra = '') => `${sharePath(share)}${id === top.id ? '' : `?folder=${services.shares.ref(share, 'folder', id)}`}${extra}`;
    const subfolders = listing.children.map((child) => {
      const total = totals.get(child.id) ?? { files: 0, bytes: 0 };
      return html`<tr><td><a class="folder-link" href="${here(child.id)}">${child.name}</a></td><td class="size">${count(total.files, 'file')} · ${humanSize(total.bytes)}</td><td></td></tr>`;
    });
    const rows = listing.files.map(
      (file) =>
        html`<tr><td><a href="${downloadPath(share)}/${services.shares.ref(share, 'file', file.id)}" download>${file.name}</a></td><td class="size">${humanSize(file.size)}</td><td class="date">${humanDate(file.createdAt)}</td></tr>`,
    );
    const nextUrl = listing.next
      ? here(folder.id, `${folder.id === top.id ? '?' : '&'}cursor=${encodeShareCursor(listing.next, (id) => services.shares.ref(share, 'file', id))}`)
      : null;
    const pager =
      after || nextUrl
        ? html`<nav class="pager" aria-label="Pages">${after ? html`<a href="${here(folder.id)}">First page</a>` : html`<span></span>`}${nextUrl ? html`<a href="${nextUrl}">Next page</a>` : ''}</nav>`
        : '';
    const up = folder.id !== top.id ? html`<p class="meta"><a href="${sharePath(share)}">Back to ${top.name}</a></p>` : '';
    return sendPage(
      reply,
      200,
      folder.name,
      html`<section class="card folder-card share-card">
${up}
<h1>${folder.name}</h1>
<p class="meta">${count(listing.activeFiles, 'file')} · ${humanSize(listing.activeBytes)} · shared folder</p>
${limits}
${folder.id === top.id ? html`<p class="download-row"><a class="button" href="${downloadPath(share)}" download>Download all as ZIP</a></p>` : ''}
${subfolders.length > 0 ? html`<h2>Folders</h2><table class="listing"><tbody>${subfolders}</tbody></table>` : ''}
${subfolders.length > 0 && rows.length > 0 ? html`<h2>Files</h2>` : ''}
${rows.length > 0 ? html`<table class="listing"><thead><tr><th>Name</th><th class="size">Size</th><th class="date">Uploaded</th></tr></thead><tbody>${rows}</tbody></table>` : subfolders.length > 0 ? '' : html`<p>This folder is empty.</p>`}
${pager}
</section>`,
    );
  };
}

/**
 * The `cursor` of a folder share's next page: the keyset position (created_at, file id) of
 * the last file shown, with the file as its share reference, never its real id.
 */
function encodeShareCursor(position: ListPosition, refOf: (id: string) => string): string {
  return `${position.createdAt}.${refOf(position.id)}`;
}

/** Reads a share page's cursor back; anything encodeShareCursor did not write is errorBadRequest (400). */
function decodeShareCursor(cursor: string, idOf: (ref: string) => string | null): ListPosition {
  const match = /^(0|[1-9][0-9]{0,15})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  const id = match ? idOf(match[2]!) : null;
  const createdAt = match ? Number(match[1]) : Number.NaN;
  if (id === null || !Number.isSafeInteger(createdAt)) throw errors.badRequest('cursor is not valid; use the next link of the previous page');
  return { createdAt, id };
}

/** What a visitor should know of the share's limits: when it expires, how many downloads are left. */
function shareNotes(share: ShareRecord): Html | string {
  const notes: string[] = [];
  if (share.expiresAt !== null) notes.push(`This link expires ${humanDate(share.expiresAt)}.`);
  if (share.maxDownloads !== null) {
    const left = Math.max(0, share.maxDownloads - share.downloads);
    notes.push(`${count(left, 'download')} left.`);
  }
  return notes.length > 0 ? html`<p class="meta share-limits">${notes.join(' ')}</p>` : '';
}

/**
 * A protected share before its password: the form and nothing else, not the name, the
 * size or any meta tag, so neither a visitor nor a link preview learns what it holds.
 */
function passwordPage(reply: FastifyReply, share: ShareRecord, error: ApiError | null): FastifyReply {
  return sendPage(
    reply,
    error?.status ?? 200,
    'Protected share',
    html`<section class="card share-card share-password">
<h1>This share is protected</h1>
<p>Enter the password you were given to see what is shared here.</p>
${error ? html`<p class="notice error" role="alert">${error.status === 429 ? error.message : 'That password is not right.'}</p>` : ''}
<form class="stack" method="post" action="${sharePath(share)}">
<label>Password <input type="password" name="password" autocomplete="current-password" required autofocus></label>
<button class="button" type="submit">Open</button>
</form>
</section>`,
  );
}
