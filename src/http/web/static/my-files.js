// My files, progressive enhancement: drag and drop, one upload per file with a progress
// bar, speed and time left each, cancel and retry buttons, a list that refreshes when the
// uploads are done, and copy buttons. A file that cannot fit the account's limits (the
// page's #upload-limits) is refused before any of it is sent; failures say why in words
// (upload-text.js) and turn the row red; finished rows can be dismissed, one by one or all
// at once, as their files show in the list below. Files over 4 MiB are resumable uploads (tus 1.0 at the
// endpoint the form names, through tus-js-client, served by the site before this script):
// a dropped connection picks up where it stopped by itself, and after a reload choosing
// the same file again continues it. Smaller files, or every file when tus-js-client is
// missing, are one POST to the form's action. Without this script every form still works
// (the upload form posts all files at once). User data only ever reaches the page as
// textContent or attribute values, never as markup.

const form = document.getElementById('upload-form');
const list = document.getElementById('upload-list');
const MAX_PARALLEL = 3;
/** Files larger than this are resumable uploads; smaller ones are not worth the extra requests. */
const RESUMABLE_ABOVE = 4 * 1024 * 1024;
/** Waits between tus-js-client's retries of a failed request; the count resets on progress. */
const RETRY_DELAYS = [0, 1000, 3000, 5000, 10000, 20000];
/** The window the speed (and so the time left) is averaged over. */
const SPEED_WINDOW_MS = 5000;
/** A 429 whose Retry-After is at most this long is retried by itself; longer ones wait for the user. */
const AUTO_RETRY_AFTER_MAX_S = 60;

const text = window.FilehavenUploadText;
const { humanSize, humanDuration } = text;

function element(tag, attributes = {}, text = '') {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

/** Copy buttons: `data-copy-text` holds the text; hidden until this script shows them. */
function enableCopyButtons(root) {
  for (const button of root.querySelectorAll('button[data-copy-text]')) {
    if (button.dataset.ready) continue;
    button.dataset.ready = '1';
    button.hidden = false;
    const label = button.textContent;
    button.addEventListener('click', async () => {
      let copied = false;
      try {
        await navigator.clipboard.writeText(button.dataset.copyText);
        copied = true;
      } catch {
        // No clipboard API (plain http): copy through a selected, off-screen text field.
        const field = element('textarea', { class: 'offscreen', readonly: '' });
        field.value = button.dataset.copyText;
        document.body.append(field);
        field.select();
        copied = document.execCommand('copy');
        field.remove();
      }
      button.textContent = copied ? 'Copied' : 'Press Ctrl+C';
      setTimeout(() => (button.textContent = label), 2000);
    });
  }
}

// ---------------------------------------------------------------------------------------
// The account's limits, as the page was served or last refreshed

/** Bytes per file and volume left (null: unlimited), from #upload-limits' data attributes. */
function readLimits() {
  const data = document.getElementById('upload-limits')?.dataset ?? {};
  const number = (value) => (value === undefined || value === '' || !Number.isFinite(Number(value)) ? null : Number(value));
  return { maxFileSize: number(data.maxFileSize), volumeLeft: number(data.volumeLeft), volumeLimit: number(data.volumeLimit) };
}

/** A stored file's bytes leave the volume left this page shows, until the next refresh says it exactly. */
function spendVolume(bytes) {
  const line = document.getElementById('upload-limits');
  const { volumeLeft } = readLimits();
  if (line && volumeLeft !== null) line.dataset.volumeLeft = String(Math.max(0, volumeLeft - bytes));
}

/** Bytes of this page's uploads under way, not yet out of #upload-limits' volume left. */
let pendingBytes = 0;
/** Ids of files this page uploaded, marked in the list when it shows them. */
const uploadedIds = new Set();

/** Replaces the folder and file lists (and the limits line) with the server's current ones. */
async function refreshLists() {
  const response = await fetch(location.href, { headers: { Accept: 'text/html' }, credentials: 'same-origin' });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
  for (const id of ['folders', 'files', 'upload-limits']) {
    const now = document.getElementById(id);
    const next = fresh.getElementById(id);
    if (now && next) now.replaceWith(document.adoptNode(next));
  }
  // The server's count includes what is stored and reserved now, so what this page still
  // sends is counted twice until the next refresh: a cautious estimate, never a permission.
  enableCopyButtons(document);
  for (const id of uploadedIds) document.querySelector(`#files li.file[data-file="${CSS.escape(id)}"]`)?.classList.add('just-uploaded');
}

/** The value of one of the form's hidden fields (the CSRF token, the folder), or ''. */
function hiddenField(name) {
  return form.querySelector(`input[type="hidden"][name="${name}"]`)?.value ?? '';
}

// ---------------------------------------------------------------------------------------
// One row per upload

/**
 * The row of one upload: name and size, progress bar, a status line (announced: states and
 * every tenth of the way), a detail line (speed, time left; not announced, it changes every
 * second), and the row's buttons.
 */
function uploadRow(file) {
  const row = element('li', { class: 'upload' });
  const head = element('div', { class: 'upload-head' });
  head.append(element('span', { class: 'file-name' }, file.name), element('span', { class: 'file-meta' }, humanSize(file.size)));
  const bar = element('progress', { class: 'bar', max: '100', value: '0', 'aria-label': `Upload of ${file.name}` });
  const status = element('p', { class: 'upload-status' }, 'Waiting…');
  const detail = element('p', { class: 'upload-detail', 'aria-live': 'off' });
  const actions = element('div', { class: 'upload-actions' });
  const cancel = element('button', { class: 'button small secondary', type: 'button', 'aria-label': `Cancel upload of ${file.name}` }, 'Cancel');
  const retry = element('button', { class: 'button small', type: 'button', 'aria-label': `Retry upload of ${file.name}` }, 'Retry');
  const dismiss = element('button', { class: 'button small secondary dismiss', type: 'button', 'aria-label': `Dismiss ${file.name}` }, 'Dismiss');
  retry.hidden = true;
  dismiss.hidden = true;
  dismiss.addEventListener('click', () => {
    row.remove();
    updateClearButton();
    document.getElementById('upload-files')?.focus();
  });
  actions.append(cancel, retry, dismiss);
  row.append(head, bar, status, detail, actions);
  list.append(row);
  let announced = -1;
  const ui = {
    row,
    bar,
    status,
    detail,
    cancel,
    retry,
    dismiss,
    /** Sets the status line; `error` marks it as a failure. */
    say(text, error = false) {
      status.textContent = text;
      status.classList.toggle('error', error);
    },
    /**
     * Moves the bar. The last percent is the server's: it is reached once the file is
     * stored. The status line follows in steps of ten, so a screen reader is not flooded.
     */
    progress(sent, total) {
      const percent = total > 0 ? Math.min(99, Math.floor((sent / total) * 100)) : 0;
      bar.value = percent;
      if (sent >= total) {
        ui.say('Saving…');
      } else if (Math.floor(percent / 10) !== announced) {
        announced = Math.floor(percent / 10);
        ui.say(`Uploading… ${percent}%`);
      }
    },
    /** Shows a message (such as "Resuming from 40%…") until the next tenth of the way. */
    hold(percent, text) {
      bar.value = percent;
      announced = Math.floor(percent / 10);
      ui.say(text);
    },
    /**
     * The upload is over and failed: red, the reason in words. `retryable` offers Retry
     * (the file is still at hand); Dismiss is always offered.
     */
    failed(message, retryable = false) {
      row.classList.remove('paused');
      row.classList.add('failed');
      ui.say(message, true);
      detail.textContent = '';
      cancel.hidden = true;
      retry.hidden = !retryable;
      dismiss.hidden = false;
      updateClearButton();
    },
    /** Stopped but not over (a tus upload the server keeps): Retry continues it, Cancel ends it. */
    paused(message) {
      row.classList.add('failed', 'paused');
      ui.say(message, true);
      detail.textContent = '';
      cancel.hidden = false;
      retry.hidden = false;
      dismiss.hidden = true;
    },
    /** Running again after a Retry. */
    resumed(message) {
      row.classList.remove('failed', 'paused');
      retry.hidden = true;
      dismiss.hidden = true;
      cancel.hidden = false;
      cancel.disabled = false;
      updateClearButton();
      ui.say(message);
    },
    /** Stored: the row shrinks to the name and its links, until dismissed; the list below shows the file. */
    done(stored) {
      bar.value = 100;
      row.classList.remove('failed', 'paused');
      row.classList.add('done');
      ui.say('Uploaded');
      detail.textContent = '';
      cancel.hidden = true;
      retry.hidden = true;
      dismiss.hidden = false;
      if (stored) showLinks(row, stored);
      if (stored?.id) uploadedIds.add(stored.id);
      updateClearButton();
    },
  };
  return ui;
}

/** Shows the links of a stored file in its row; a file finished before a reload has no delete link to show. */
function showLinks(row, stored) {
  const links = element('dl', { class: 'links' });
  const download = element('dd');
  // Readable text (the name as it was given), the encoded link as href and for copying.
  download.append(element('a', { href: stored.download }, text.readableUrl(stored.download)), ' ');
  download.append(element('button', { class: 'button small secondary', type: 'button', 'data-copy-text': stored.download }, 'Copy'));
  links.append(element('dt', {}, 'Download link'), download);
  const remove = element('dd');
  if (stored.delete) remove.append(element('a', { class: 'delete-link', href: stored.delete }, stored.delete));
  else remove.textContent = 'Shown only when the upload finished. Delete the file from the list below instead.';
  links.append(element('dt', {}, 'Delete link'), remove);
  row.append(links);
  enableCopyButtons(row);
}

/** Shows "Clear finished" while a row is over (stored or failed for good). */
function updateClearButton() {
  const button = document.getElementById('clear-uploads');
  if (button) button.hidden = !list.querySelector(':scope > li.upload:is(.done, .failed:not(.paused))');
}

/** Removes every finished row (stored, or failed for good); running and paused uploads stay. */
function clearFinished() {
  for (const row of list.querySelectorAll(':scope > li.upload:is(.done, .failed:not(.paused))')) row.remove();
  updateClearButton();
  document.getElementById('upload-files')?.focus();
}

/**
 * Speed over the last SPEED_WINDOW_MS, fed with the bytes sent so far: samples older than
 * the window fall out, but one is kept from before it, so the average spans the window.
 */
function speedMeter() {
  let samples = [];
  return {
    add(bytes, at = performance.now()) {
      // A retry starts again from the server's offset: the old samples say nothing now.
      if (samples.length > 0 && bytes < samples[samples.length - 1].bytes) samples = [];
      samples.push({ at, bytes });
      while (samples.length > 2 && at - samples[1].at >= SPEED_WINDOW_MS) samples.shift();
    },
    /** Bytes per second, or null until a second has been seen. */
    perSecond() {
      if (samples.length < 2) return null;
      const first = samples[0];
      const last = samples[samples.length - 1];
      const seconds = (last.at - first.at) / 1000;
      return seconds >= 1 ? (last.bytes - first.bytes) / seconds : null;
    },
    reset() {
      samples = [];
    },
  };
}

/** Updates the detail line once a second while bytes are sent: sent of total, speed, time left. */
function detailTicker(ui, total) {
  const meter = speedMeter();
  let sent = 0;
  let timer = null;
  const render = () => {
    meter.add(sent);
    const speed = meter.perSecond();
    const parts = [`${humanSize(sent)} of ${humanSize(total)}`];
    if (speed !== null && sent < total) {
      parts.push(speed > 0 ? `${humanSize(Math.round(speed))}/s` : 'stalled');
      if (speed > 0) parts.push(`about ${humanDuration((total - sent) / speed)} left`);
    }
    ui.detail.textContent = parts.join(' · ');
  };
  return {
    update(bytes) {
      sent = bytes;
      if (sent >= total) render();
      else meter.add(bytes);
      timer ??= setInterval(render, 1000);
    },
    stop() {
      clearInterval(timer);
      timer = null;
      meter.reset();
    },
  };
}

// ---------------------------------------------------------------------------------------
// Small files: one multipart POST, answered in JSON

/**
 * Uploads one file with its own request, updating its row; resolves when the first try is
 * over. A failure that trying again may cure (no answer, a busy or failing server) offers
 * Retry, which sends the file again from its start (a small file: not worth resuming).
 */
function postUpload(file, ui) {
  return new Promise((resolve) => {
    let firstTry = true;
    const settle = (ok) => {
      if (firstTry) {
        firstTry = false;
        resolve(ok);
      } else if (ok) {
        // A retry after the queue moved on refreshes the lists itself.
        refreshLists().catch(() => {});
      }
    };
    const attempt = () => {
      const body = new FormData();
      // The token and the folder come before the file: the server reads them first.
      for (const field of form.querySelectorAll('input[type="hidden"]')) body.append(field.name, field.value);
      body.append('upload', file, file.name);
      const request = new XMLHttpRequest();
      const ticker = detailTicker(ui, file.size);
      request.open('POST', form.action);
      request.setRequestHeader('Accept', 'application/json');
      ui.say('Uploading…');
      ui.cancel.onclick = () => request.abort();
      request.upload.addEventListener('progress', (event) => {
        if (!event.lengthComputable) return;
        ui.progress(event.loaded, event.total);
        ticker.update(Math.min(file.size, event.loaded));
      });
      const fail = (message, retryable) => {
        ticker.stop();
        ui.failed(message, retryable);
        settle(false);
      };
      request.addEventListener('load', () => {
        ticker.stop();
        let answer = null;
        try {
          answer = JSON.parse(request.responseText);
        } catch {
          // Not our JSON (a proxy's error page): the status says what it can.
        }
        const stored = answer?.files?.[0];
        if (request.status === 201 && stored && !stored.error) {
          ui.done(stored);
          settle(true);
          return;
        }
        const header = Number.parseInt(request.getResponseHeader('Retry-After') ?? '', 10);
        const problem = {
          status: request.status,
          code: stored?.code ?? answer?.code ?? null,
          message: stored?.error ?? answer?.error ?? '',
          retryAfter: answer?.retryAfter ?? (Number.isFinite(header) ? header : null),
        };
        // The server's words when it gave them, else ours for its status.
        const words = stored?.reason ?? answer?.reason ?? text.explain(problem, readLimits());
        // A body cut short (errorUploadFaild, 400) is worth sending again too.
        fail(words, problem.code === 'errorUploadFaild' || (problem.code !== 'errorUploadLimit' && text.retryable(problem.status)));
      });
      request.addEventListener('error', () => fail(text.explain({ status: 0 }, readLimits()), true));
      request.addEventListener('abort', () => fail('Upload cancelled.', false));
      request.send(body);
    };
    ui.retry.onclick = () => {
      ui.resumed('Trying again…');
      attempt();
    };
    attempt();
  });
}

// ---------------------------------------------------------------------------------------
// Large files: tus 1.0 through tus-js-client

const tusEndpoint = form?.dataset.tusEndpoint;
/** tus-js-client's browser build (a global, `tus`), when it loaded and this browser can run it. */
const tusClient = tusEndpoint && window.tus?.isSupported ? window.tus : null;
/** Upload URLs of this page's uploads in progress: not listed as unfinished. */
const active = new Set();
/**
 * Where this account's uploads are remembered in localStorage (by tus-js-client's own
 * fingerprint: name, type, size, date and endpoint). The account is part of the key, so
 * on a shared browser nobody is offered, or shown, another account's unfinished uploads.
 */
const fingerprintPrefix = `filehaven:${form?.dataset.account ?? ''}:`;
const fingerprint = (file, options) => tusClient.defaultOptions.fingerprint(file, options).then((print) => `${fingerprintPrefix}${print}`);
/** The header every tus request carries (CSRF_HEADER of uploads-routes.ts): the session's CSRF token, the one the forms carry. */
const tusHeaders = () => ({ 'Filehaven-Csrf': hiddenField('csrf') });

/** The code (entry title) and message of an Atom error body (API.md 2), or nulls when the body is something else. */
function atomError(body) {
  if (!body) return { code: null, message: null };
  const doc = new DOMParser().parseFromString(body, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length > 0) return { code: null, message: null };
  const entry = doc.getElementsByTagNameNS('*', 'entry')[0];
  const part = (name) => entry?.getElementsByTagNameNS('*', name)[0]?.textContent?.trim() || null;
  return { code: part('title'), message: part('content') };
}

/** What went wrong with a tus request, in words for the user, and whether trying again may help. */
function describeTusError(error) {
  const response = error.originalResponse ?? null;
  const status = response ? response.getStatus() : 0;
  if (status === 0) {
    return {
      status,
      retryable: true,
      message:
        navigator.onLine === false
          ? 'You are offline. The upload continues when you press Retry once you are back online.'
          : 'The connection to the server was lost. Press Retry to continue where it stopped.',
    };
  }
  const { code, message } = atomError(response.getBody());
  const retryAfter = Number.parseInt(response.getHeader('Retry-After') ?? '', 10);
  const problem = { status, code, message, retryAfter: Number.isFinite(retryAfter) ? retryAfter : null };
  return {
    ...problem,
    message: text.explain(problem, readLimits()),
    // Gone or refused (signed out, expired form, too large, not allowed) will not change by
    // itself; a busy or failing server, a conflict or a lock may.
    retryable: status === 429 || status === 409 || status === 423 || status >= 500,
  };
}

/** Forgets this browser's record of an upload, so the same file starts afresh next time. */
async function forgetUpload(upload) {
  const storage = tusClient.defaultOptions.urlStorage;
  const previous = await upload.findPreviousUploads().catch(() => []);
  for (const entry of previous) if (entry.uploadUrl === upload.url) await storage.removeUpload(entry.urlStorageKey);
}

/** This browser's unfinished uploads for the folder being viewed (none of this page's own running ones), newest first. */
async function previousUploadsHere(upload) {
  const folder = hiddenField('folder');
  const previous = await upload.findPreviousUploads().catch(() => []);
  return previous
    .filter((entry) => entry.uploadUrl && !active.has(entry.uploadUrl) && (entry.metadata?.folder ?? '') === folder)
    .sort((a, b) => Date.parse(b.creationTime) - Date.parse(a.creationTime));
}

/** Uploads one file through tus, updating its row; resolves when it is stored, failed or cancelled. */
function tusUpload(file, ui) {
  return new Promise((resolve) => {
    const folder = hiddenField('folder');
    const ticker = detailTicker(ui, file.size);
    let settled = false;
    let cancelled = false;
    let waitTimer = null;
    let autoRetries = 0;
    /** Set when the server placed the upload on another origin, which this page's CSP does not reach. */
    let offSite = false;
    const finish = (ok) => {
      ticker.stop();
      clearTimeout(waitTimer);
      active.delete(upload.url);
      // An upload the user retried after its worker moved on refreshes the lists itself.
      if (settled && ok) refreshLists().catch(() => {});
      settled = true;
      resolve(ok);
      listUnfinished();
    };
    const upload = new tusClient.Upload(file, {
      endpoint: tusEndpoint,
      headers: tusHeaders(),
      metadata: folder ? { filename: file.name, folder } : { filename: file.name },
      fingerprint,
      retryDelays: RETRY_DELAYS,
      removeFingerprintOnSuccess: true,
      // tus-js-client retries network failures, 5xx, 409 and 423. A 429 is ours to retry,
      // after its Retry-After; and a browser that believes it is offline still tries, as
      // a wrong belief would otherwise end the upload at once.
      onShouldRetry(error, attempt) {
        if (offSite) return false;
        const { status } = describeTusError(error);
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
        active.add(upload.url);
        listUnfinished();
      },
      onAfterResponse(request, response) {
        if (request.getMethod() === 'POST' && response.getStatus() === 201) {
          const at = response.getHeader('Location');
          offSite = Boolean(at) && new URL(at, location.href).origin !== location.origin;
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
        const download = lastResponse.getHeader('Filehaven-Download-Link');
        const remove = lastResponse.getHeader('Filehaven-Delete-Link');
        ui.done(download ? { download, delete: remove ?? null, id: lastResponse.getHeader('Filehaven-File-Id') } : null);
        finish(true);
      },
      onError(error) {
        ticker.stop();
        if (offSite) {
          forgetUpload(upload).finally(() => {
            ui.failed(
              'The server gave this upload an address on another site, which this page may not reach. Please tell the site’s operator (its public and web addresses differ).',
            );
            finish(false);
          });
          return;
        }
        const problem = describeTusError(error);
        if (problem.status === 404 || problem.status === 410) {
          // The partial upload is gone from the server (expired, cancelled elsewhere).
          forgetUpload(upload).finally(() => {
            ui.failed(`${problem.message} Choose the file again to start over.`);
            finish(false);
          });
          return;
        }
        if (problem.status === 429 && problem.retryAfter !== null && problem.retryAfter <= AUTO_RETRY_AFTER_MAX_S && autoRetries < RETRY_DELAYS.length) {
          autoRetries++;
          ui.say(`The server is busy. Trying again in ${humanDuration(problem.retryAfter)}…`, true);
          waitTimer = setTimeout(() => upload.start(), problem.retryAfter * 1000);
          return;
        }
        if (!problem.retryable) {
          ui.failed(problem.message);
          // Signed out or an expired form: after signing in, the same file continues.
          // Anything else (too large, refused) would fail the same way: forget it here.
          if (problem.status === 401 || problem.status === 403) finish(false);
          else forgetUpload(upload).finally(() => finish(false));
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
      clearTimeout(waitTimer);
      ui.cancel.disabled = true;
      ui.retry.hidden = true;
      ui.say('Cancelling…');
      // abort(true) also ends the upload on the server (tus termination) and forgets it here.
      upload
        .abort(true)
        .then(
          () => ui.failed('Upload cancelled.'),
          () => forgetUpload(upload).then(() => ui.failed('Upload cancelled. The server discards the part it received later.')),
        )
        .finally(() => finish(false));
    };

    ui.say('Starting…');
    previousUploadsHere(upload).then((previous) => {
      if (cancelled) return;
      if (previous.length > 0) {
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
async function listUnfinished() {
  if (!tusClient) return;
  const entries = (await tusClient.defaultOptions.urlStorage.findAllUploads().catch(() => []))
    .filter((entry) => entry.urlStorageKey.startsWith(`tus::${fingerprintPrefix}`) && entry.uploadUrl)
    .filter((entry) => !active.has(entry.uploadUrl));
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
        await tusClient.Upload.terminate(entry.uploadUrl, { headers: tusHeaders(), retryDelays: [0, 1000] });
      } catch (error) {
        const { status, message } = describeTusError(error);
        // Already gone on the server: forgetting it here is all that is left to do.
        if (status !== 404 && status !== 410) {
          discard.disabled = false;
          item.append(element('span', { class: 'upload-status error' }, ` ${message}`));
          return;
        }
      }
      await tusClient.defaultOptions.urlStorage.removeUpload(entry.urlStorageKey);
      listUnfinished();
    });
    item.append(discard);
    items.append(item);
  }
  box.append(items);
  list.after(box);
}

// ---------------------------------------------------------------------------------------
// The queue

/**
 * Uploads files a few at a time, each by the way its size calls for, then refreshes the
 * lists. A file that cannot fit the limits the page knows is refused at once, with nothing
 * sent (the server would refuse it too, but only after receiving up to the limit).
 */
async function uploadAll(files) {
  if (files.length === 0) return;
  const queue = [];
  for (const file of files) {
    const ui = uploadRow(file);
    const refused = text.refusal(file, readLimits(), pendingBytes);
    if (refused) {
      // Nothing was sent: no bar to show.
      ui.row.classList.add('refused');
      ui.failed(refused);
      continue;
    }
    // Counted from now, so that the next file of the same choice sees what is left.
    pendingBytes += file.size;
    const job = { file, ui, cancelled: false };
    ui.cancel.onclick = () => {
      job.cancelled = true;
      ui.failed('Upload cancelled.');
    };
    queue.push(job);
  }
  const run = async (job) => {
    let stored = false;
    try {
      if (job.cancelled) return;
      if (tusClient && job.file.size > RESUMABLE_ABOVE) stored = await tusUpload(job.file, job.ui);
      else stored = await postUpload(job.file, job.ui);
    } finally {
      pendingBytes -= job.file.size;
      if (stored) spendVolume(job.file.size);
    }
  };
  const workers = Array.from({ length: Math.min(MAX_PARALLEL, queue.length) }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await run(next);
  });
  await Promise.all(workers);
  if (workers.length > 0) await refreshLists().catch(() => {});
}

if (form && list) {
  const input = document.getElementById('upload-files');
  const zone = document.getElementById('drop-zone');
  const hint = document.getElementById('drop-hint');
  document.getElementById('upload-button').hidden = true;
  input.required = false;
  hint.textContent = tusClient
    ? 'Choose files or drop them here: each one starts uploading at once. Large files continue after a lost connection or a reload.'
    : 'Choose files or drop them here: each one starts uploading at once.';
  zone.classList.add('ready');
  // One button clears the finished rows; each row has its own Dismiss too.
  const clear = element('button', { class: 'button small secondary', type: 'button', id: 'clear-uploads' }, 'Clear finished');
  clear.hidden = true;
  clear.addEventListener('click', clearFinished);
  list.before(clear);

  input.addEventListener('change', () => {
    const files = [...input.files];
    input.value = '';
    uploadAll(files);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const files = [...input.files];
    input.value = '';
    uploadAll(files);
  });
  // The whole upload card takes drops, the dashed zone shows it.
  const target = form.closest('section') ?? zone;
  target.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  target.addEventListener('dragleave', (event) => {
    if (!target.contains(event.relatedTarget)) zone.classList.remove('over');
  });
  target.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    uploadAll([...event.dataTransfer.files]);
  });
  listUnfinished();
}

enableCopyButtons(document);

// An order applies as soon as it is chosen (the Search button does it without JavaScript).
// Delegated: a refresh of the lists replaces the select.
document.addEventListener('change', (event) => {
  if (event.target instanceof HTMLSelectElement && event.target.id === 'sort-select') event.target.form?.requestSubmit();
});
