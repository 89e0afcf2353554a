import type { UploadRequestRecord } from '../../db/repositories/repositories.js';
import type { ShareView } from '../../sharing/shares-service.js';
import { type Html, html } from '../html.js';
import type { Links } from '../links.js';
import { humanDate, humanSize } from './format.js';
import { MY_FILES_PATH } from './my-files-paths.js';
import { exactSize, expirySelect, MY_REQUESTS_PATH, MY_SHARES_PATH, plural, sentence } from './my-shares-fields.js';
import { CSRF_FIELD } from './session-plugin.js';

/** Which form of the page refused its input, the service's reason, and what was typed (never a password). */
export interface FormProblem {
  /** `new-request`, `share-<id>` or `request-<id>`. */
  form: string;
  message: string;
  values: Record<string, string>;
}

/** Everything the Shares page shows. */
export interface SharesPageData {
  csrfToken: string;
  premium: boolean;
  now: number;
  maxExpiryMs: number | null;
  passwordRequired: boolean;
  uploadRequests: boolean;
  shares: ShareView[];
  /** More shares than the page shows. */
  moreShares: boolean;
  requests: UploadRequestRecord[];
  moreRequests: boolean;
  /** The account's folders with their path names ("Photos / 2026"), for the request form and the list. */
  folders: Array<{ id: string; name: string }>;
  /** A share just made, shown on top with its link. */
  created: ShareView | null;
  /** A fixed note after a form (never text from the address). */
  note: string | null;
  problem: FormProblem | null;
}

/** The notes a form's redirect may ask the page to show. */
export const SHARES_NOTES = {
  revoked: 'The share was revoked: its link no longer works.',
  'share-changed': 'The share was changed.',
  'request-created': 'The upload request is open: send its link to the people who should upload.',
  'request-changed': 'The upload request was changed.',
  closed: 'The upload request was closed. The files sent through it stay in your folder.',
} as const;
export type SharesNote = keyof typeof SHARES_NOTES;

/** A link with its copy button (shown by the page's script) and, without the script, selectable text. */
function linkLine(url: string, label: string): Html {
  return html`<div class="link-line"><a class="share-link" href="${url}">${url}</a><button class="button small secondary" type="button" data-copy-text="${url}" hidden aria-label="Copy the link of ${label}">Copy link</button></div>`;
}

/** Until when, in words: "never expires", "expires 2026-…", "expired 2026-…". */
function expiryWords(expiresAt: number | null, now: number): Html {
  if (expiresAt === null) return html`never expires`;
  return expiresAt <= now ? html`<span class="status blocked">expired ${humanDate(expiresAt)}</span>` : html`expires ${humanDate(expiresAt)}`;
}

/**
 * The Shares page of a signed-in account (`/my/shares`, issue 25): its live shares (name,
 * link with a copy button, expiry, downloads of the limit, protected, fast) and open upload
 * requests (title, folder, link, expiry, files and bytes of their limits, protected), each
 * with an edit form and a revoke or close button, and the form that opens a new request.
 * Every form works without JavaScript; refused input comes back in its form, open.
 */
export function sharesPage(data: SharesPageData, links: Links): Html {
  const note = data.note ? html`<p class="notice ok" role="status">${data.note}</p>` : '';
  return html`<section class="card" id="shares">
<h1>Shares</h1>
<p class="hint">Links to your files and folders, and links where others upload into your folders. Share a file or a folder from <a href="${MY_FILES_PATH}">My files</a>.</p>
${note}
${data.created ? createdNotice(data.created, links) : ''}
<h2>Shared links</h2>
${
  data.shares.length > 0
    ? html`<ul class="share-list">${data.shares.map((view) => shareItem(view, data, links))}</ul>`
    : html`<p class="hint">Nothing shared yet: press “Share” beside a file or a folder in My files.</p>`
}
${data.moreShares ? html`<p class="hint">Only your newest ${data.shares.length} shares are shown.</p>` : ''}
</section>
<section class="card" id="requests">
<h2>Upload requests</h2>
${
  data.uploadRequests
    ? html`${
        data.requests.length > 0
          ? html`<ul class="share-list">${data.requests.map((record) => requestItem(record, data, links))}</ul>`
          : html`<p class="hint">No open upload requests.</p>`
      }
${data.moreRequests ? html`<p class="hint">Only your newest ${data.requests.length} requests are shown.</p>` : ''}
${newRequestForm(data)}`
    : html`<p class="hint">Upload requests are turned off on this server.</p>`
}
</section>`;
}

function createdNotice({ share, title }: ShareView, links: Links): Html {
  return html`<div class="notice ok created-share" role="status">
<p>Your link to “<bdi>${title}</bdi>” is ready${share.passwordHash !== null ? ': people need its password too' : ''}.</p>
${linkLine(links.share(share), title)}
</div>`;
}

/** A problem of this form, if it is the one that failed. */
const problemOf = (data: SharesPageData, form: string) => (data.problem?.form === form ? data.problem : null);
const alertOf = (problem: FormProblem | null): Html | string => (problem ? html`<p class="notice error" role="alert">${sentence(problem.message)}</p>` : '');

function shareItem(view: ShareView, data: SharesPageData, links: Links): Html {
  const { share, title } = view;
  const name = title || 'A file or folder that is gone';
  const problem = problemOf(data, `share-${share.id}`);
  const values = problem?.values ?? {};
  const id = `edit-share-${share.id}`;
  const counts = share.maxDownloads === null ? plural(share.downloads, 'download') : `${share.downloads} of ${plural(share.maxDownloads, 'download')}`;
  const fields = html`<input type="hidden" name="${CSRF_FIELD}" value="${data.csrfToken}">`;
  return html`<li class="share-item" data-share="${share.id}">
<p class="share-name"><bdi>${name}</bdi> <span class="badge">${share.fileId !== null ? 'file' : 'folder'}</span>${
    share.passwordHash !== null ? html` <span class="badge">password</span>` : ''
  }${share.fast ? html` <span class="badge ok">fast</span>` : ''}</p>
${linkLine(links.share(share), name)}
<p class="file-meta">${expiryWords(share.expiresAt, data.now)} · ${counts} · ${share.passwordHash !== null ? 'protected' : 'no password'} · created ${humanDate(share.createdAt)}</p>
<div class="file-actions">
<details class="edit"${problem ? html` open` : ''}><summary class="button small secondary">Edit</summary>
<form class="edit-form" method="post" action="${MY_SHARES_PATH}/share/${share.id}">
${alertOf(problem)}${fields}
<label for="${id}-expires">Expires</label>
${expirySelect(`${id}-expires`, data.maxExpiryMs, { expiresAt: share.expiresAt }, values.expires)}
<label for="${id}-password">New password <span class="hint">(empty: ${share.passwordHash !== null ? 'keep the one it has' : 'none'})</span></label>
<input id="${id}-password" name="password" type="password" autocomplete="new-password" maxlength="1024">
${share.passwordHash !== null && !data.passwordRequired ? html`<label class="check"><input type="checkbox" name="remove_password" value="1"> Remove the password</label>` : ''}
<label for="${id}-max">Download limit <span class="hint">(empty: no limit)</span></label>
<input id="${id}-max" name="max_downloads" inputmode="numeric" maxlength="10" value="${values.max_downloads ?? (share.maxDownloads === null ? '' : String(share.maxDownloads))}">
${
  data.premium
    ? html`<input type="hidden" name="fast_shown" value="1"><label class="check"><input type="checkbox" name="fast" value="1"${(values.fast ?? (share.fast ? '1' : '')) === '1' ? html` checked` : ''}> Fast: downloads use your premium traffic</label>`
    : ''
}
<button class="button small" type="submit">Save</button>
</form>
</details>
<form class="delete" method="post" action="${MY_SHARES_PATH}/share/${share.id}/revoke">${fields}<button class="button small danger" type="submit">Revoke</button></form>
</div>
</li>`;
}

function folderName(data: SharesPageData, folderId: string | null): string {
  if (folderId === null) return 'My files (top level)';
  return data.folders.find((folder) => folder.id === folderId)?.name ?? 'a folder that is gone';
}

/** "2 of 5 files", "3 files". */
const ofLimit = (n: number, max: number | null, word: string) => (max === null ? plural(n, word) : `${n} of ${plural(max, word)}`);
const bytesOf = (bytes: number, max: number | null) => (max === null ? humanSize(bytes) : `${humanSize(bytes)} of ${humanSize(max)}`);

function requestItem(record: UploadRequestRecord, data: SharesPageData, links: Links): Html {
  const problem = problemOf(data, `request-${record.id}`);
  const title = record.title || 'Untitled request';
  const fields = html`<input type="hidden" name="${CSRF_FIELD}" value="${data.csrfToken}">`;
  return html`<li class="share-item" data-request="${record.id}">
<p class="share-name"><bdi>${title}</bdi>${record.passwordHash !== null ? html` <span class="badge">password</span>` : ''}</p>
${linkLine(links.uploadRequest(record), title)}
<p class="file-meta">into <bdi>${folderName(data, record.folderId)}</bdi> · ${expiryWords(record.expiresAt, data.now)} · ${ofLimit(record.files, record.maxFiles, 'file')} · ${bytesOf(
    record.bytes,
    record.maxBytes,
  )}${record.maxFileSize !== null ? ` · up to ${humanSize(record.maxFileSize)} per file` : ''} · ${record.passwordHash !== null ? 'protected' : 'no password'}</p>
<div class="file-actions">
<details class="edit"${problem ? html` open` : ''}><summary class="button small secondary">Edit</summary>
<form class="edit-form" method="post" action="${MY_SHARES_PATH}/request/${record.id}">
${alertOf(problem)}${fields}
${requestFields(`edit-request-${record.id}`, data, record, problem?.values ?? {})}
<button class="button small" type="submit">Save</button>
</form>
</details>
<form class="delete" method="post" action="${MY_SHARES_PATH}/request/${record.id}/close">${fields}<button class="button small danger" type="submit">Close</button></form>
</div>
</li>`;
}

/** The fields of a request's form: new (record null) or an edit, refilled from `values` after refused input. */
function requestFields(id: string, data: SharesPageData, record: UploadRequestRecord | null, values: Record<string, string>): Html {
  const size = (name: string, current: number | null | undefined) => values[name] ?? (current == null ? '' : exactSize(current));
  const count = (name: string, current: number | null | undefined) => values[name] ?? (current == null ? '' : String(current));
  return html`<label for="${id}-title">Title <span class="hint">(optional)</span></label>
<input id="${id}-title" name="title" maxlength="255" value="${values.title ?? record?.title ?? ''}">
<label for="${id}-message">Message to the uploaders <span class="hint">(optional)</span></label>
<textarea id="${id}-message" name="message" maxlength="4000" rows="3">${values.message ?? record?.message ?? ''}</textarea>
<label for="${id}-expires">${record ? 'Expires' : 'Link expires'}</label>
${expirySelect(`${id}-expires`, data.maxExpiryMs, record ? { expiresAt: record.expiresAt } : null, values.expires)}
<label for="${id}-password">${record ? 'New password' : 'Password'} <span class="hint">(${
    record ? (record.passwordHash !== null ? 'empty: keep the one it has' : 'empty: none') : data.passwordRequired ? 'required on this server' : 'optional'
  })</span></label>
<input id="${id}-password" name="password" type="password" autocomplete="new-password" maxlength="1024">
${record && record.passwordHash !== null && !data.passwordRequired ? html`<label class="check"><input type="checkbox" name="remove_password" value="1"> Remove the password</label>` : ''}
<div class="limit-fields">
<div><label for="${id}-files">Most files <span class="hint">(empty: no limit)</span></label>
<input id="${id}-files" name="max_files" inputmode="numeric" maxlength="15" value="${count('max_files', record?.maxFiles)}"></div>
<div><label for="${id}-bytes">Most in all <span class="hint">(e.g. 5 GiB)</span></label>
<input id="${id}-bytes" name="max_bytes" maxlength="32" value="${size('max_bytes', record?.maxBytes)}"></div>
<div><label for="${id}-size">Largest file <span class="hint">(e.g. 1 GiB)</span></label>
<input id="${id}-size" name="max_file_size" maxlength="32" value="${size('max_file_size', record?.maxFileSize)}"></div>
</div>`;
}

function newRequestForm(data: SharesPageData): Html {
  const problem = problemOf(data, 'new-request');
  const values = problem?.values ?? {};
  const chosen = values.folder ?? '';
  return html`<form class="card-form new-request" id="new-request" method="post" action="${MY_REQUESTS_PATH}">
<h3>New upload request</h3>
<p class="hint">Anyone with its link (and its password, if you give one) can upload files into the folder you choose, within the limits you set. They see nothing else of your account.</p>
${alertOf(problem)}
<input type="hidden" name="${CSRF_FIELD}" value="${data.csrfToken}">
<label for="new-request-folder">Folder the files go into</label>
<select id="new-request-folder" name="folder"><option value="">My files (top level)</option>${data.folders.map(
    (folder) => html`<option value="${folder.id}"${folder.id === chosen ? html` selected` : ''}>${folder.name}</option>`,
  )}</select>
${requestFields('new-request', data, null, values)}
<button class="button" type="submit">Open the upload request</button>
</form>`;
}
