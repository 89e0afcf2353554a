import type { UploadRequestRecord } from '../../db/repositories/repositories.js';
import { type Html, html } from '../html.js';
import { UPLOADS_PATH } from '../tus/tus-headers.js';
import { humanDate, humanSize } from './format.js';
import { REQUEST_SCRIPTS } from './request-scripts.js';

/** What the page says of the request's limits now. */
export interface RequestPageLimits {
  /** Bytes per file: the request's max_file_size under the server's largest file. */
  maxFileSize: number;
  /** Files it still takes; null = no limit. */
  filesLeft: number | null;
  /** Bytes it still takes; null = no limit. */
  bytesLeft: number | null;
}

/**
 * An upload request's page (issue 25): its title, message and limits in words, and an
 * upload box. Without JavaScript it is a plain form (POST /r/<id>, one file, answered by a
 * page); the request script sends each file by itself with a progress bar, large ones
 * resumable through tus (/uploads with the request in the metadata) as My files does.
 * The numbers ride along as data attributes, so the script refuses a file that cannot fit
 * before sending any of it (the server still checks every byte). Nothing on it leads into
 * the owner's account.
 */
export function requestPage(record: UploadRequestRecord, limits: RequestPageLimits, maxChunkSize: number): Html {
  const full = limits.filesLeft === 0 || limits.bytesLeft === 0;
  return html`<section class="card request" id="request">
<h1>${record.title || 'Upload files'}</h1>
${record.message ? html`<p class="request-message">${record.message}</p>` : ''}
${limitsLine(record, limits)}
${
  full
    ? html`<p class="notice error" role="alert">This request has all the files it takes.</p>`
    : html`<form class="upload-form" id="request-form" method="post" action="/r/${record.id}" enctype="multipart/form-data" data-tus-endpoint="${UPLOADS_PATH}" data-request="${record.id}" data-max-chunk-size="${String(maxChunkSize)}">
<div class="drop" id="drop-zone">
<label for="upload-files">Choose a file to send</label>
<input id="upload-files" type="file" name="upload" required>
<p class="hint" id="drop-hint">Choose a file, then press Upload.</p>
</div>
<button class="button" type="submit" id="upload-button">Upload</button>
</form>
<ul class="uploads" id="upload-list" aria-live="polite"></ul>
${REQUEST_SCRIPTS}`
}
</section>`;
}

/** The limits in words: per file, files and bytes left, and until when. */
function limitsLine(record: UploadRequestRecord, limits: RequestPageLimits): Html {
  const parts: string[] = [`Up to ${humanSize(limits.maxFileSize)} per file`];
  if (limits.filesLeft !== null) parts.push(`${limits.filesLeft} ${limits.filesLeft === 1 ? 'file' : 'files'} left`);
  if (limits.bytesLeft !== null) parts.push(`${humanSize(limits.bytesLeft)} left in all`);
  if (record.expiresAt !== null) parts.push(`open until ${humanDate(record.expiresAt)}`);
  return html`<p class="hint upload-limits" id="upload-limits" data-max-file-size="${String(limits.maxFileSize)}"${
    limits.bytesLeft === null ? '' : html` data-bytes-left="${String(limits.bytesLeft)}"`
  }${limits.filesLeft === null ? '' : html` data-files-left="${String(limits.filesLeft)}"`}>${parts.join(' · ')}</p>`;
}

/** A protected request's only face before its password: no title, no message, nothing of it. */
export function requestPasswordPage(id: string, problem: string | null): Html {
  return html`<section class="card" id="request-password">
<h1>Password needed</h1>
<p>This upload request is protected. Enter the password you were given to send files.</p>
${problem ? html`<p class="notice error" role="alert">${problem}</p>` : ''}
<form class="stack" method="post" action="/r/${id}/password">
<label for="password">Password</label>
<input id="password" name="password" type="password" required maxlength="1024" autocomplete="off">
<button class="button" type="submit">Continue</button>
</form>
</section>`;
}

/** The page a browser without JavaScript gets after its form sent a file. */
export function requestReceivedPage(id: string, name: string, size: number): Html {
  return html`<section class="card" id="request-received">
<h1>File received</h1>
<p><bdi>${name}</bdi> (${humanSize(size)}) was received. Thank you.</p>
<p><a class="button" href="/r/${id}">Send another file</a></p>
</section>`;
}
