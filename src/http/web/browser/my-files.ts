// My files, progressive enhancement: drag and drop, one upload per file with a progress
// bar, speed and time left each, cancel and retry buttons, a list that refreshes when the
// uploads are done, and copy buttons. A file that cannot fit the account's limits (the
// page's #upload-limits) is refused before any of it is sent; failures say why in words
// (upload-messages.ts, shared with the server's form) and turn the row red; finished rows
// can be dismissed, one by one or all at once, as their files show in the list below.
// Files over 4 MiB are resumable uploads (tus-upload.ts), sent in pieces no larger than
// the site takes. Smaller files, or every file when tus-js-client is missing, are one POST
// to the form's action (form-post-upload.ts). Without this script every form still works
// (the upload form posts all files at once). The Share form of each file and folder (a
// <details> without the script) opens as a dialog.

import { refusalBeforeSending } from '../upload-messages.js';
import { element, enableCopyButtons } from './dom.js';
import { postUpload } from './form-post-upload.js';
import { listUnfinished, type TusContext, tusContext, tusUpload } from './tus-upload.js';
import { readLimits, refreshLists, spendVolume, type UploadPage, uploadPage } from './upload-page.js';
import { clearFinished, type UploadRow, uploadRow } from './upload-row.js';

const MAX_PARALLEL = 3;
/** Files larger than this are resumable uploads; smaller ones are not worth the extra requests. */
const RESUMABLE_ABOVE = 4 * 1024 * 1024;

/** Bytes of this page's uploads under way, not yet out of #upload-limits' volume left. */
let pendingBytes = 0;

/**
 * Uploads files a few at a time, each by the way its size calls for, then refreshes the
 * lists. A file that cannot fit the limits the page knows is refused at once, with nothing
 * sent (the server would refuse it too, but only after receiving up to the limit).
 */
async function uploadAll(page: UploadPage, tus: TusContext | null, files: File[]): Promise<void> {
  if (files.length === 0) return;
  const queue: Array<{ file: File; ui: UploadRow; cancelled: boolean }> = [];
  for (const file of files) {
    const ui = uploadRow(page.list, file);
    const refused = refusalBeforeSending(file, readLimits(), pendingBytes);
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
  const run = async (job: (typeof queue)[number]) => {
    let stored = false;
    try {
      if (job.cancelled) return;
      if (tus && job.file.size > RESUMABLE_ABOVE) stored = await tusUpload(tus, job.file, job.ui);
      else stored = await postUpload(page, job.file, job.ui);
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

/** Turns the upload form into drag and drop with a row per file. */
function enhance(page: UploadPage): void {
  const tus = tusContext(page);
  const input = document.getElementById('upload-files') as HTMLInputElement;
  const zone = document.getElementById('drop-zone')!;
  const hint = document.getElementById('drop-hint')!;
  document.getElementById('upload-button')!.hidden = true;
  input.required = false;
  hint.textContent = tus
    ? 'Choose files or drop them here: each one starts uploading at once. Large files continue after a lost connection or a reload.'
    : 'Choose files or drop them here: each one starts uploading at once.';
  zone.classList.add('ready');
  // One button clears the finished rows; each row has its own Dismiss too.
  const clear = element('button', { class: 'button small secondary', type: 'button', id: 'clear-uploads' }, 'Clear finished');
  clear.hidden = true;
  clear.addEventListener('click', () => clearFinished(page.list));
  page.list.before(clear);

  const chosen = () => {
    const files = [...(input.files ?? [])];
    input.value = '';
    uploadAll(page, tus, files);
  };
  input.addEventListener('change', chosen);
  page.form.addEventListener('submit', (event) => {
    event.preventDefault();
    chosen();
  });
  // The whole upload card takes drops, the dashed zone shows it.
  const target = page.form.closest('section') ?? zone;
  target.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('over');
  });
  target.addEventListener('dragleave', (event) => {
    if (!target.contains(event.relatedTarget as Node | null)) zone.classList.remove('over');
  });
  target.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    uploadAll(page, tus, [...(event.dataTransfer?.files ?? [])]);
  });
  if (tus) listUnfinished(tus);
}

const page = uploadPage();
if (page) enhance(page);

enableCopyButtons(document);

// An order applies as soon as it is chosen (the Search button does it without JavaScript).
// Delegated: a refresh of the lists replaces the select.
document.addEventListener('change', (event) => {
  if (event.target instanceof HTMLSelectElement && event.target.id === 'sort-select') event.target.form?.requestSubmit();
});

/**
 * The Share forms as a dialog: a press on "Share" moves that entry's form into one modal
 * <dialog> (ids stay unique: the form is moved, not copied) and back when it closes. The
 * form posts as it would without the script. Delegated, so refreshed lists keep it.
 */
function enableShareDialogs(): void {
  if (typeof HTMLDialogElement !== 'function') return;
  const dialog = element('dialog', { class: 'share-dialog', 'aria-label': 'Share' });
  const close = element('button', { class: 'button small secondary dialog-close', type: 'button' }, 'Close');
  dialog.append(close);
  document.body.append(dialog);
  let home: HTMLDetailsElement | null = null;
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    const form = dialog.querySelector('form');
    if (home && form) home.append(form);
    home = null;
  });
  document.addEventListener('click', (event) => {
    const summary = event.target instanceof Element ? event.target.closest('summary[data-share-summary]') : null;
    const details = summary?.parentElement;
    const form = details?.querySelector('form');
    if (!(details instanceof HTMLDetailsElement) || !form) return;
    event.preventDefault();
    home = details;
    dialog.append(form);
    dialog.showModal();
    form.querySelector('select')?.focus();
  });
}

enableShareDialogs();
