import type { FastifyInstance } from 'fastify';
import type { Folder } from '../../domain/types.js';
import type { UploadAllowanceView } from '../../uploads/uploads-service.js';
import { type Html, html } from '../html.js';
import { UPLOADS_PATH } from '../tus/tus-headers.js';
import { browserScript, registerStaticScript } from './browser-scripts.js';
import { humanSize } from './format.js';
import { PAGE_CSP } from './layout.js';
import { MY_UPLOAD_PATH } from './my-files-paths.js';
import { CSRF_FIELD } from './session-plugin.js';
import { registerTusClientScript, TUS_CLIENT_PATH } from './tus-client-script.js';

/*
 * The site's upload box: My files and the signed-in home page show the same one. Without
 * JavaScript it is a plain form (POST /my/files/upload answers a results page); the
 * my-files script (browser/my-files.ts) turns it into drag and drop with a row per file
 * (files over 4 MiB resumable through tus, in PATCHes no larger than the site takes), and
 * refreshes whichever of the page's lists are there.
 */

/** The upload box's script, bundled from browser/my-files.ts (browser-scripts.ts). */
export const MY_FILES_SCRIPT = browserScript('my-files');

/** A page with the upload box: every page's policy, plus requests to the site itself (the uploads, tus's too, and refreshes). */
export const UPLOAD_PAGE_CSP = `${PAGE_CSP}; connect-src 'self'`;

/** The scripts of the upload box, for the end of the page: tus-js-client first (the global the bundle uses), both from the site itself. */
export const UPLOAD_SCRIPTS = html`<script src="${TUS_CLIENT_PATH}" defer></script>
<script src="${MY_FILES_SCRIPT.path}" defer></script>`;

/** Serves the upload box's scripts. */
export function registerUploadScripts(app: FastifyInstance): void {
  registerStaticScript(app, MY_FILES_SCRIPT);
  registerTusClientScript(app);
}

/**
 * The upload form (into `folder`, or the top), with the account's limits, and the list its
 * rows go in. `maxChunkSize` (--upload-chunk-size, what Filehaven-Max-Chunk-Size says) is
 * the largest PATCH the script should send.
 */
export function uploadForm(input: {
  csrfToken: string;
  accountId: number;
  folder?: Folder | null;
  allowance: UploadAllowanceView;
  maxChunkSize: number;
}): Html {
  const { folder } = input;
  return html`<form class="upload-form" id="upload-form" method="post" action="${MY_UPLOAD_PATH}" enctype="multipart/form-data" data-tus-endpoint="${UPLOADS_PATH}" data-account="${String(input.accountId)}" data-max-chunk-size="${String(input.maxChunkSize)}">
<input type="hidden" name="${CSRF_FIELD}" value="${input.csrfToken}">
${folder ? html`<input type="hidden" name="folder" value="${folder.id}">` : ''}
<div class="drop" id="drop-zone">
<label for="upload-files">${folder ? html`Upload into <bdi>${folder.name}</bdi>` : 'Upload files'}</label>
<input id="upload-files" type="file" name="upload" multiple required>
<p class="hint" id="drop-hint">Choose one or more files, then press Upload.</p>
${limitsLine(input.allowance)}
</div>
<button class="button" type="submit" id="upload-button">Upload</button>
</form>
<ul class="uploads" id="upload-list" aria-live="polite"></ul>`;
}

/**
 * The account's upload limits in words; the numbers ride along as data attributes, so
 * the script refuses a file that cannot fit before sending any of it (the server still
 * checks every byte).
 */
function limitsLine({ maxFileSize, volumeLimit, volumeLeft }: UploadAllowanceView): Html {
  const volume =
    volumeLimit === null || volumeLeft === null
      ? 'no upload volume limit'
      : volumeLeft === 0
        ? html`upload volume used up for now (${humanSize(volumeLimit)} per 24 hours)`
        : html`${humanSize(volumeLeft)} of ${humanSize(volumeLimit)} upload volume left (rolling 24 hours)`;
  return html`<p class="hint upload-limits" id="upload-limits" data-max-file-size="${String(maxFileSize)}"${
    volumeLeft === null ? '' : html` data-volume-left="${String(volumeLeft)}" data-volume-limit="${String(volumeLimit)}"`
  }>Up to ${humanSize(maxFileSize)} per file · ${volume}</p>`;
}
