import type * as Tus from 'tus-js-client';
import { humanSize } from '../format.js';
import { explainUploadProblem, humanWait } from '../upload-messages.js';
import { element } from './dom.js';
import { hiddenField, readLimits, refreshLists, type UploadPage } from './upload-page.js';
import { detailTicker, type StoredFile, type UploadRow } from './upload-row.js';

// Large files: tus 1.0 at the endpoint the form names, through tus-js-client (its browser
// build, served by the site as a script of its own before this one: the global `tus`). A
// dropped connection picks up where it stopped by itself, and after a reload choosing the
// same file again continues it.

declare global {
  interface Window {
    /** tus-js-client's browser build, when its script loaded. */
    tus?: typeof Tus;
  }
}

const MiB = 1024 * 1024;
/** Waits between tus-js-client's retries of a failed request; the count resets on progress. */
const RETRY_DELAYS = [0, 1000, 3000, 5000, 10000, 20000];
/** A 429 whose Retry-After is at most this long is retried by itself; longer ones wait for the user. */
const AUTO_RETRY_AFTER_MAX_S = 60;
/**
 * The largest PATCH body when the site says nothing (neither the form's
 * data-max-chunk-size nor the Filehaven-Max-Chunk-Size header of its tus answers): the
 * server's default. A proxy in front of the site takes requests only up to its own limit
 * (nginx: client_max_body_size), so a file of several GiB goes in pieces.
 */
const DEFAULT_MAX_CHUNK = 64 * MiB;
const MAX_CHUNK_HEADER = 'Filehaven-Max-Chunk-Size';
/** The file's id and links on the answer of the request that finished an upload (http/tus/tus-headers.ts FILE_HEADERS). */
const FILE_HEADERS = { id: 'Filehaven-File-Id', download: 'Filehaven-Download-Link', delete: 'Filehaven-Delete-Link' };

/** A positive whole number of bytes, or null. */
function byteCount(value: string | undefined | null): number | null {
  const bytes = Number(value ?? '');
  return value && Number.isSafeInteger(bytes) && bytes > 0 ? bytes : null;
}

/** The Atom document (API.md 2) of an answer; null when its body is not Atom. */
function atomOf(response: Tus.HttpResponse): Document | null {
  const body = response.getBody();
  // Only XML is parsed: a proxy's HTML page would make the parser build an error element
  // whose inline style the page's CSP refuses (a console error).
  if (!body || !/[/+]xml\b/.test(response.getHeader('Content-Type') ?? '')) return null;
  const doc = new DOMParser().parseFromString(body, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length > 0 || doc.documentElement.namespaceURI !== 'http://www.w3.org/2005/Atom') return null;
  return doc;
}

/** The code (entry title) and message of an Atom error, or nulls when the body is something else. */
function atomError(response: Tus.HttpResponse): { code: string | null; message: string | null } {
  const entry = atomOf(response)?.getElementsByTagNameNS('*', 'entry')[0];
  const part = (name: string) => entry?.getElementsByTagNameNS('*', name)[0]?.textContent?.trim() || null;
  return { code: part('title'), message: part('content') };
}

/**
 * The stored file from the answer that finished the upload: its headers (the server sends
 * them always, and a 204 carries nothing else), else the `File upload result` feed.
 */
function storedFileOf(response: Tus.HttpResponse): StoredFile | null {
  const download = response.getHeader(FILE_HEADERS.download);
  if (download) return { download, delete: response.getHeader(FILE_HEADERS.delete) ?? null, id: response.getHeader(FILE_HEADERS.id) ?? null };
  const entry = atomOf(response)?.getElementsByTagNameNS('*', 'entry')[0];
  const link = (title: string) =>
    [...(entry?.getElementsByTagNameNS('*', 'link') ?? [])].find((node) => node.getAttribute('title') === title)?.getAttribute('href') ?? null;
  const fromFeed = link('download_link');
  if (!fromFeed) return null;
  return { download: fromFeed, delete: link('delete_link'), id: entry?.getElementsByTagNameNS('*', 'id')[0]?.textContent?.trim() ?? null };
}

/** The uploader's tus client on this page, or null when there is none (no script, no browser support, no endpoint). */
export interface TusContext {
  tus: typeof Tus;
  page: UploadPage;
  endpoint: string;
  /** Where this account's uploads are remembered in localStorage. */
  fingerprintPrefix: string;
  /** Upload URLs of this page's uploads in progress: not listed as unfinished. */
  active: Set<string>;
}

/** The page's tus client, when tus-js-client loaded and this browser can run it. */
export function tusContext(page: UploadPage): TusContext | null {
  const endpoint = page.form.dataset.tusEndpoint;
  const tus = window.tus;
  if (!endpoint || !tus?.isSupported) return null;
  // The account is part of the key (behind tus-js-client's own fingerprint: name, type,
  // size, date and endpoint), so on a shared browser nobody is offered, or shown, another
  // account's unfinished uploads.
  return { tus, page, endpoint, fingerprintPrefix: `filehaven:${page.form.dataset.account ?? ''}:`, active: new Set() };
}

/**
 * The headers of every tus request: the session's CSRF token (CSRF_HEADER of
 * http/tus/tus-headers.ts, the one the forms carry), and Accept: the finishing PATCH answers the
 * Atom feed only to a client that asks for it (else a 204 with the file's headers).
 */
const tusHeaders = (context: TusContext) => ({ 'Filehaven-Csrf': hiddenField(context.page, 'csrf'), Accept: 'application/atom+xml' });

/** A failed tus request, in words for the user, and whether trying again may help. */
interface TusProblem {
  status: number;
  message: string;
  retryable: boolean;
  retryAfter: number | null;
}

/**
 * What went wrong with a tus request. The site's own answers carry Tus-Resumable (every
 * tus answer does, errors too) and an Atom error body; one without either came from a
 * proxy in front of it. `chunk` is the largest PATCH body, to name the size of a refused one.
 */
function describeTusError(error: Error | Tus.DetailedError, file: File, chunk: number): TusProblem {
  const response = 'originalResponse' in error ? error.originalResponse : null;
  const status = response ? response.getStatus() : 0;
  if (!response || status === 0) {
    return {
      status: 0,
      retryable: true,
      retryAfter: null,
      message:
        navigator.onLine === false
          ? 'You are offline. The upload continues when you press Retry once you are back online.'
          : 'The connection to the server was lost. Press Retry to continue where it stopped.',
    };
  }
  const { code, message } = atomError(response);
  const header = Number.parseInt(response.getHeader('Retry-After') ?? '', 10);
  const retryAfter = Number.isFinite(header) ? header : null;
  const request = 'originalRequest' in error ? error.originalRequest : null;
  const offset = Number(request?.getHeader('Upload-Offset'));
  const requestBytes = request?.getMethod() === 'PATCH' && Number.isFinite(offset) ? Math.min(chunk, file.size - offset) : null;
  // getHeader is XMLHttpRequest's: null (not undefined) for a header that is not there.
  const fromSite = code !== null || Boolean(response.getHeader('Tus-Resumable'));
  return {
    status,
    retryAfter,
    message: explainUploadProblem({ status, code, message, retryAfter, fromSite, requestBytes }, readLimits()),
    // Gone or refused (signed out, expired form, too large, not allowed) will not change by
    // itself; a busy or failing server, a conflict or a lock may.
    retryable: status === 429 || status === 409 || status === 423 || status >= 500,
  };
}

/** Forgets this browser's record of an upload, so the same file starts afresh next time. */
async function forgetUpload(context: TusContext, upload: Tus.Upload): Promise<void> {
  const storage = context.tus.defaultOptions.urlStorage;
  const previous = await upload.findPreviousUploads().catch(() => []);
  for (const entry of previous) if (entry.uploadUrl === upload.url) await storage.removeUpload(entry.urlStorageKey);
}

/** This browser's unfinished uploads for the folder being viewed (none of this page's own running ones), newest first. */
async function previousUploadsHere(context: TusContext, upload: Tus.Upload): Promise<Tus.PreviousUpload[]> {
  const folder = hiddenField(context.page, 'folder');
  const previous = await upload.findPreviousUploads().catch(() => []);
  return previous
    .filter((entry) => entry.uploadUrl && !context.active.has(entry.uploadUrl) && (entry.metadata?.folder ?? '') === folder)
    .sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime));
}

/** Uploads one file through tus, updating its row; resolves when it is stored, failed or cancelled (or paused, offering Retry). */
export function tusUpload(context: TusContext, file: File, ui: UploadRow): Promise<boolean> {
  const { tus, page, active } = context;
  return new Promise((resolve) => {
    const folder = hiddenField(page, 'folder');
    const ticker = detailTicker(ui, file.size);
    let settled = false;
    let cancelled = false;
    let waitTimer: number | undefined;
    let autoRetries = 0;
    /** Set when the server placed the upload on another origin, which this page's CSP does not reach. */
    let offSite = false;
    const finish = (ok: boolean) => {
      ticker.stop();
      window.clearTimeout(waitTimer);
      if (upload.url) active.delete(upload.url);
      // An upload the user retried after its worker moved on refreshes the lists itself.
      if (settled && ok) refreshLists().catch(() => {});
      settled = true;
      resolve(ok);
      listUnfinished(context);
    };
    const chunkSize = () => upload.options.chunkSize ?? DEFAULT_MAX_CHUNK;
    const fromForm = byteCount(page.form.dataset.maxChunkSize);
    const upload: Tus.Upload = new tus.Upload(file, {
      endpoint: context.endpoint,
      headers: tusHeaders(context),
      metadata: folder ? { filename: file.name, folder } : { filename: file.name },
      fingerprint: (file, options) => tus.defaultOptions.fingerprint(file, options).then((print) => `${context.fingerprintPrefix}${print}`),
      chunkSize: fromForm ?? DEFAULT_MAX_CHUNK,
      retryDelays: RETRY_DELAYS,
      removeFingerprintOnSuccess: true,
      // tus-js-client retries network failures, 5xx, 409 and 423. A 429 is ours to retry,
      // after its Retry-After; and a browser that believes it is offline still tries, as
      // a wrong belief would otherwise end the upload at once.
      onShouldRetry(error, attempt) {
        if (offSite) return false;
        const { status } = describeTusError(error, file, chunkSize());
        const retry = status === 0 || status >= 500 || status === 409 || status === 423;
        if (retry && status !== 409)
          ui.say(
            status === 0
              ? `Connection lost. Trying again (${attempt + 1} of ${RETRY_DELAYS.length})…`
              : `The server is busy. Trying again (${attempt + 1} of ${RETRY_DELAYS.length})…`,
          );
        return retry;
      },
      onUploadUrlAvailable() {
        if (upload.url) active.add(upload.url);
        listUnfinished(context);
      },
      onAfterResponse(request, response) {
        // The site names the largest PATCH it takes on its tus answers (the creation's, the
        // HEAD of a resume), before any PATCH; tus-js-client reads the option per chunk.
        // Never above what the form said either: both are the site's word.
        const advertised = byteCount(response.getHeader(MAX_CHUNK_HEADER));
        if (advertised !== null) upload.options.chunkSize = Math.min(advertised, fromForm ?? advertised);
        if (request.getMethod() === 'POST' && response.getStatus() === 201) {
          const at = response.getHeader('Location');
          offSite = Boolean(at) && new URL(at!, location.href).origin !== location.origin;
        }
        // The HEAD that starts every resume (after a reload, or a retry) says how much the server has.
        if (request.getMethod() !== 'HEAD' || response.getStatus() !== 200) return;
        const offset = Number.parseInt(response.getHeader('Upload-Offset') ?? '', 10);
        const length = Number.parseInt(response.getHeader('Upload-Length') ?? '', 10);
        if (!(offset > 0) || !(length > offset)) return;
        const percent = Math.floor((offset / length) * 100);
        ui.hold(percent, `Resuming from ${percent}%…`);
      },
      onProgress(sent, total) {
        ui.progress(sent, total);
        ticker.update(sent);
      },
      onSuccess({ lastResponse }) {
        ui.done(storedFileOf(lastResponse));
        finish(true);
      },
      onError(error) {
        ticker.stop();
        if (offSite) {
          forgetUpload(context, upload).finally(() => {
            ui.failed(
              'The server gave this upload an address on another site, which this page may not reach. Please tell the site’s operator (its public and web addresses differ).',
            );
            finish(false);
          });
          return;
        }
        const problem = describeTusError(error, file, chunkSize());
        if (problem.status === 404 || problem.status === 410) {
          // The partial upload is gone from the server (expired, cancelled elsewhere).
          forgetUpload(context, upload).finally(() => {
            ui.failed(`${problem.message} Choose the file again to start over.`);
            finish(false);
          });
          return;
        }
        if (problem.status === 429 && problem.retryAfter !== null && problem.retryAfter <= AUTO_RETRY_AFTER_MAX_S && autoRetries < RETRY_DELAYS.length) {
          autoRetries++;
          ui.say(`The server is busy. Trying again in ${humanWait(problem.retryAfter)}…`, true);
          waitTimer = window.setTimeout(() => upload.start(), problem.retryAfter * 1000);
          return;
        }
        if (!problem.retryable) {
          ui.failed(problem.message);
          // Signed out or an expired form: after signing in, the same file continues.
          // Anything else (too large, refused) would fail the same way: forget it here.
          if (problem.status === 401 || problem.status === 403) finish(false);
          else forgetUpload(context, upload).finally(() => finish(false));
          return;
        }
        // Not over yet: the row offers Retry (and Cancel), and the worker moves on.
        ui.paused(problem.message);
        // Offline: back online is a Retry by itself.
        if (problem.status === 0 && navigator.onLine === false) window.addEventListener('online', () => !ui.retry.hidden && ui.retry.click(), { once: true });
        if (!settled) {
          settled = true;
          resolve(false);
        }
      },
    });
    ui.retry.onclick = () => {
      ui.resumed('Reconnecting…');
      upload.start();
    };
    ui.cancel.onclick = () => {
      cancelled = true;
      window.clearTimeout(waitTimer);
      ui.cancel.disabled = true;
      ui.retry.hidden = true;
      ui.say('Cancelling…');
      // abort(true) also ends the upload on the server (tus termination) and forgets it here.
      upload
        .abort(true)
        .then(
          () => ui.failed('Upload cancelled.'),
          () => forgetUpload(context, upload).then(() => ui.failed('Upload cancelled. The server discards the part it received later.')),
        )
        .finally(() => finish(false));
    };

    ui.say('Starting…');
    previousUploadsHere(context, upload).then((previous) => {
      if (cancelled) return;
      if (previous[0]) {
        ui.say('Resuming…');
        upload.resumeFromPreviousUpload(previous[0]);
      }
      upload.start();
    });
  });
}

/**
 * This account's unfinished uploads remembered by this browser, under the upload list: a
 * browser may not reopen a file by itself, so the user is told to choose it again, or to
 * discard it (which ends it on the server too).
 */
export async function listUnfinished(context: TusContext): Promise<void> {
  const { tus, page, active } = context;
  const storage = tus.defaultOptions.urlStorage;
  const entries = (await storage.findAllUploads().catch(() => []))
    .filter((entry) => entry.urlStorageKey.startsWith(`tus::${context.fingerprintPrefix}`) && entry.uploadUrl)
    .filter((entry) => !active.has(entry.uploadUrl!));
  // Replaced only now, after the wait: two calls close together leave one list.
  document.getElementById('unfinished-uploads')?.remove();
  if (entries.length === 0) return;
  const box = element('div', { class: 'unfinished', id: 'unfinished-uploads' });
  box.append(element('p', { class: 'hint' }, 'Unfinished uploads from this browser. Choose the same file again to continue it:'));
  const items = element('ul', { class: 'uploads' });
  for (const entry of entries) {
    const name = entry.metadata?.filename ?? 'unnamed file';
    const item = element('li');
    item.append(element('span', { class: 'file-name' }, name), ' ', element('span', { class: 'file-meta' }, entry.size ? humanSize(entry.size) : ''), ' ');
    const discard = element('button', { class: 'button small secondary', type: 'button', 'aria-label': `Discard the unfinished upload of ${name}` }, 'Discard');
    discard.addEventListener('click', async () => {
      discard.disabled = true;
      try {
        await tus.Upload.terminate(entry.uploadUrl!, { headers: tusHeaders(context), retryDelays: [0, 1000] });
      } catch (error) {
        const { status, message } = describeTusError(error as Error, new File([], name), DEFAULT_MAX_CHUNK);
        // Already gone on the server: forgetting it here is all that is left to do.
        if (status !== 404 && status !== 410) {
          discard.disabled = false;
          item.append(element('span', { class: 'upload-status error' }, ` ${message}`));
          return;
        }
      }
      await storage.removeUpload(entry.urlStorageKey);
      listUnfinished(context);
    });
    item.append(discard);
    items.append(item);
  }
  box.append(items);
  page.list.after(box);
}
