// An upload request's page (request-page.ts), progressive enhancement: each chosen or
// dropped file is sent by itself with a progress bar, speed and time left; files over
// 4 MiB as resumable tus uploads into the request (its id in the metadata, in pieces no
// larger than the site takes), smaller ones as one multipart POST to the page's own
// address. A file that cannot fit the request's limits is refused before any of it is
// sent. The browser proves it may use a protected request by the link's cookie, set when
// the password was given. Without this script the form still sends one file at a time.

import type * as Tus from 'tus-js-client';
import { humanSize } from '../format.js';
import { explainUploadProblem } from '../upload-messages.js';
import { detailTicker, type UploadRow, uploadRow } from './upload-row.js';

declare global {
  interface Window {
    tus?: typeof Tus;
  }
}

const MiB = 1024 * 1024;
const RESUMABLE_ABOVE = 4 * MiB;
const DEFAULT_MAX_CHUNK = 64 * MiB;

const form = document.getElementById('request-form');
const list = document.getElementById('upload-list');

/** The request's limits as the page was served (#upload-limits' data attributes). */
function limits(): { maxFileSize: number | null; bytesLeft: number | null } {
  const data = document.getElementById('upload-limits')?.dataset ?? {};
  const number = (value: string | undefined) => (value === undefined || value === '' || !Number.isFinite(Number(value)) ? null : Number(value));
  return { maxFileSize: number(data.maxFileSize), bytesLeft: number(data.bytesLeft) };
}

/** The Atom error of an answer: its code and message, when it is one. */
function atomError(text: string): { code: string | null; message: string | null } {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  const entry = doc.getElementsByTagNameNS('*', 'entry')[0];
  const part = (name: string) => entry?.getElementsByTagNameNS('*', name)[0]?.textContent?.trim() || null;
  return { code: part('title'), message: part('content') };
}

/** The words for a refusal or a failure. */
function explain(status: number, text: string, retryAfter: string | null, bytes: number): string {
  const { code, message } = atomError(text);
  if (code === 'errorUploadLimit' && /request is full/.test(message ?? '')) return 'This request takes no more files.';
  if (code === 'errorSharePassword') return 'The password for this request is needed again: reload the page.';
  const wait = Number.parseInt(retryAfter ?? '', 10);
  const { maxFileSize } = limits();
  return explainUploadProblem(
    { status, code, message: message ?? '', retryAfter: Number.isFinite(wait) ? wait : null, fromSite: code !== null, requestBytes: bytes },
    { maxFileSize, volumeLeft: null, volumeLimit: null },
  );
}

/** One multipart POST to the page's address. */
function post(action: string, file: File, ui: UploadRow): Promise<boolean> {
  return new Promise((resolve) => {
    const body = new FormData();
    body.append('upload', file, file.name);
    const request = new XMLHttpRequest();
    const ticker = detailTicker(ui, file.size);
    request.open('POST', action);
    request.setRequestHeader('Accept', 'application/atom+xml');
    ui.say('Uploading…');
    ui.cancel.onclick = () => request.abort();
    request.upload.addEventListener('progress', (event) => {
      if (!event.lengthComputable) return;
      ui.progress(event.loaded, event.total);
      ticker.update(Math.min(file.size, event.loaded));
    });
    request.addEventListener('load', () => {
      ticker.stop();
      if (request.status === 201) {
        ui.done(null);
        return resolve(true);
      }
      ui.failed(explain(request.status, request.responseText, request.getResponseHeader('Retry-After'), file.size), request.status >= 500);
      resolve(false);
    });
    request.addEventListener('error', () => {
      ticker.stop();
      ui.failed('The connection to the server was lost.', false);
      resolve(false);
    });
    request.addEventListener('abort', () => {
      ticker.stop();
      ui.failed('Upload cancelled.', false);
      resolve(false);
    });
    request.send(body);
  });
}

/** A resumable upload into the request through tus. */
function resumable(tus: typeof Tus, endpoint: string, requestId: string, chunk: number, file: File, ui: UploadRow): Promise<boolean> {
  return new Promise((resolve) => {
    const ticker = detailTicker(ui, file.size);
    const upload = new tus.Upload(file, {
      endpoint,
      metadata: { filename: file.name, request: requestId },
      headers: { Accept: 'application/atom+xml' },
      chunkSize: chunk,
      retryDelays: [0, 1000, 3000, 5000, 10000],
      removeFingerprintOnSuccess: true,
      fingerprint: (f, options) => tus.defaultOptions.fingerprint(f, options).then((print) => `filehaven:request:${requestId}:${print}`),
      onProgress(sent, total) {
        ui.progress(sent, total);
        ticker.update(sent);
      },
      onSuccess() {
        ticker.stop();
        ui.done(null);
        resolve(true);
      },
      onError(error) {
        ticker.stop();
        const response = 'originalResponse' in error ? error.originalResponse : null;
        if (!response) ui.failed('The connection to the server was lost. Choose the file again to continue where it stopped.', false);
        else ui.failed(explain(response.getStatus(), response.getBody() ?? '', response.getHeader('Retry-After') ?? null, file.size), false);
        resolve(false);
      },
    });
    ui.cancel.onclick = () => {
      upload.abort(true).catch(() => {});
      ticker.stop();
      ui.failed('Upload cancelled.', false);
      resolve(false);
    };
    ui.say('Uploading…');
    upload
      .findPreviousUploads()
      .then((previous) => {
        if (previous[0]) upload.resumeFromPreviousUpload(previous[0]);
        upload.start();
      })
      .catch(() => upload.start());
  });
}

function enhance(requestForm: HTMLFormElement, rows: HTMLUListElement): void {
  const input = document.getElementById('upload-files') as HTMLInputElement;
  const tus = window.tus?.isSupported ? window.tus : null;
  const endpoint = requestForm.dataset.tusEndpoint ?? '';
  const requestId = requestForm.dataset.request ?? '';
  const chunk = Number(requestForm.dataset.maxChunkSize) || DEFAULT_MAX_CHUNK;
  document.getElementById('upload-button')!.hidden = true;
  input.required = false;
  input.multiple = true;
  document.getElementById('drop-hint')!.textContent = 'Choose files or drop them here: each one starts uploading at once.';
  const send = async (files: File[]) => {
    for (const file of files) {
      const ui = uploadRow(rows, file);
      const { maxFileSize, bytesLeft } = limits();
      if (maxFileSize !== null && file.size > maxFileSize) {
        ui.failed(`This file is larger than the ${humanSize(maxFileSize)} this request takes per file.`);
        continue;
      }
      if (bytesLeft !== null && file.size > bytesLeft) {
        ui.failed(`This file is larger than the ${humanSize(bytesLeft)} this request still takes.`);
        continue;
      }
      if (tus && endpoint && file.size > RESUMABLE_ABOVE) await resumable(tus, endpoint, requestId, chunk, file, ui);
      else await post(requestForm.action, file, ui);
    }
  };
  input.addEventListener('change', () => {
    const files = [...(input.files ?? [])];
    input.value = '';
    void send(files);
  });
  requestForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void send([...(input.files ?? [])]);
  });
  const zone = document.getElementById('drop-zone')!;
  zone.classList.add('ready');
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    void send([...(event.dataTransfer?.files ?? [])]);
  });
}

if (form instanceof HTMLFormElement && list instanceof HTMLUListElement) enhance(form, list);
