import type { ActiveSession } from '../../auth/session-service.js';
import { type FileRecord, FileStatus, type Folder } from '../../domain/types.js';
import { type Html, html } from '../html.js';
import type { Links } from '../links.js';
import { humanDate, humanSize, timeLeftInWords } from './format.js';
import { MY_DELETE_PATH, MY_MOVE_PATH, MY_RENAME_PATH, myFilesUrl } from './my-files-paths.js';
import { previewOf } from './preview.js';
import { CSRF_FIELD } from './session-plugin.js';
import { thumbnailPath } from './thumbnail-route.js';

/** What every file entry of a page needs. */
export interface ListView {
  session: ActiveSession;
  /** The folder shown, or null for every file. */
  current: Folder | null;
  /** The account's folders by id. */
  known: Map<string, Folder>;
  /** Move targets: every folder with its path name. */
  menu: Array<{ id: string; name: string }>;
  /** The list's own URL, sent back by every form so its redirect returns here. */
  back: string;
  /** The page's time (epoch ms), for "expires in 3 days"; without it no expiry is shown. */
  now?: number;
}

/** The move menu's value for "out of its folder". */
export const TOP_TARGET = 'top';

/** Pixels of a list thumbnail and of a grid tile's image (the route's thumbnails are at most 256 a side). */
const LIST_THUMB = 48;
const TILE_THUMB = 256;

/** Whether the list shows a thumbnail: active images only (blocked files have none; other files get the grid's icon). */
const hasListThumb = (file: FileRecord) => file.status === FileStatus.Active && previewOf(file.name)?.kind === 'image';

/**
 * The file entries of My files: a row of the list, or a tile of the grid. Both carry the
 * same forms (move, rename, delete), which work without JavaScript; the rename form sits in
 * a <details>, so it costs no page of its own.
 */
export function fileEntries(links: Links) {
  const meta = (file: FileRecord, view: ListView): Html => {
    const folder = file.folderId ? view.known.get(file.folderId) : undefined;
    return html`<p class="file-meta">${humanSize(file.size)} · ${humanDate(file.createdAt)} · ${
      file.status === FileStatus.Blocked ? html`<span class="status blocked">Blocked</span>` : html`<span class="status">Active</span>`
    }${!view.current && folder ? html` · in <a href="${myFilesUrl(folder.id)}"><bdi>${folder.name}</bdi></a>` : ''}${
      file.expiresAt !== null && view.now !== undefined
        ? html` · <span class="expires" title="${humanDate(file.expiresAt)}">expires in ${timeLeftInWords(file.expiresAt - view.now)}</span>`
        : ''
    }</p>`;
  };

  const actions = (file: FileRecord, view: ListView): Html => {
    const download = links.download(file);
    const targets = view.menu.filter((entry) => entry.id !== file.folderId);
    const hidden = html`<input type="hidden" name="${CSRF_FIELD}" value="${view.session.csrfToken}"><input type="hidden" name="file" value="${file.id}">${
      view.current ? html`<input type="hidden" name="from" value="${view.current.id}">` : ''
    }<input type="hidden" name="back" value="${view.back}">`;
    const move =
      targets.length > 0 || file.folderId
        ? html`<form class="move" method="post" action="${MY_MOVE_PATH}">${hidden}<select name="folder" required aria-label="Move ${file.name} to a folder"><option value="">Move to…</option>${
            file.folderId ? html`<option value="${TOP_TARGET}">My files (top level)</option>` : ''
          }${targets.map((entry) => html`<option value="${entry.id}">${entry.name}</option>`)}</select><button class="button small secondary" type="submit">Move</button></form>`
        : '';
    return html`<div class="file-actions">
<button class="button small secondary" type="button" data-copy-text="${download}" hidden>Copy link</button>
${move}
<details class="rename"><summary class="button small secondary">Rename</summary><form method="post" action="${MY_RENAME_PATH}">${hidden}<input name="name" value="${file.name}" required maxlength="255" autocomplete="off" aria-label="New name for ${file.name}"><button class="button small" type="submit">Save name</button></form></details>
<form class="delete" method="post" action="${MY_DELETE_PATH}">${hidden}<button class="button small danger" type="submit">Delete</button></form>
</div>`;
  };

  /** A row of the list: a thumbnail for images, name, details, actions. */
  const fileItem = (file: FileRecord, view: ListView): Html =>
    html`<li class="file${hasListThumb(file) ? ' with-thumb' : ''}" data-file="${file.id}">
${hasListThumb(file) ? html`<img class="thumb" src="${thumbnailPath(file)}" alt="" width="${String(LIST_THUMB)}" height="${String(LIST_THUMB)}" loading="lazy" decoding="async">` : ''}
<a class="file-name" href="${links.download(file)}"><bdi>${file.name}</bdi></a>
${meta(file, view)}
${actions(file, view)}
</li>`;

  /**
   * A tile of the grid: the thumbnail (the route answers an icon for content without one;
   * blocked files have none at all), then the name and the same actions.
   */
  const fileTile = (file: FileRecord, view: ListView): Html =>
    html`<li class="file tile" data-file="${file.id}">
<a class="tile-image" href="${links.download(file)}" tabindex="-1" aria-hidden="true">${
      file.status === FileStatus.Active
        ? html`<img src="${thumbnailPath(file)}" alt="" width="${String(TILE_THUMB)}" height="${String(TILE_THUMB)}" loading="lazy" decoding="async">`
        : html`<span class="no-thumb">Blocked</span>`
    }</a>
<a class="file-name" href="${links.download(file)}"><bdi>${file.name}</bdi></a>
${meta(file, view)}
${actions(file, view)}
</li>`;

  return { fileItem, fileTile };
}
