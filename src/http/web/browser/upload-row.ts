import { humanSize, readableUrl } from '../format.js';
import { humanWait } from '../upload-messages.js';
import { element, enableCopyButtons } from './dom.js';
import { uploadedIds } from './upload-page.js';

/** A stored file's id and links; a file finished before a reload has no delete link to show. */
export interface StoredFile {
  download: string;
  delete: string | null;
  id: string | null;
}

/** The row of one upload and what changes it. */
export interface UploadRow {
  row: HTMLLIElement;
  bar: HTMLProgressElement;
  detail: HTMLParagraphElement;
  cancel: HTMLButtonElement;
  retry: HTMLButtonElement;
  dismiss: HTMLButtonElement;
  /** Sets the status line; `error` marks it as a failure. */
  say(text: string, error?: boolean): void;
  /**
   * Moves the bar. The last percent is the server's: it is reached once the file is
   * stored. The status line follows in steps of ten, so a screen reader is not flooded.
   */
  progress(sent: number, total: number): void;
  /** Shows a message (such as "Resuming from 40%…") until the next tenth of the way. */
  hold(percent: number, text: string): void;
  /** The upload is over and failed: red, the reason in words. `retryable` offers Retry (the file is still at hand); Dismiss is always offered. */
  failed(message: string, retryable?: boolean): void;
  /** Stopped but not over (a tus upload the server keeps): Retry continues it, Cancel ends it. */
  paused(message: string): void;
  /** Running again after a Retry. */
  resumed(message: string): void;
  /** Stored: the row shrinks to the name and its links, until dismissed; the list below shows the file. */
  done(stored: StoredFile | null): void;
}

/**
 * The row of one upload in `list`: name and size, progress bar, a status line (announced:
 * states and every tenth of the way), a detail line (speed, time left; not announced, it
 * changes every second), and the row's buttons.
 */
export function uploadRow(list: HTMLUListElement, file: File): UploadRow {
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
    updateClearButton(list);
    document.getElementById('upload-files')?.focus();
  });
  actions.append(cancel, retry, dismiss);
  row.append(head, bar, status, detail, actions);
  list.append(row);
  let announced = -1;
  const ui: UploadRow = {
    row,
    bar,
    detail,
    cancel,
    retry,
    dismiss,
    say(text, error = false) {
      status.textContent = text;
      status.classList.toggle('error', error);
    },
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
    hold(percent, text) {
      bar.value = percent;
      announced = Math.floor(percent / 10);
      ui.say(text);
    },
    failed(message, retryable = false) {
      row.classList.remove('paused');
      row.classList.add('failed');
      ui.say(message, true);
      detail.textContent = '';
      cancel.hidden = true;
      retry.hidden = !retryable;
      dismiss.hidden = false;
      updateClearButton(list);
    },
    paused(message) {
      row.classList.add('failed', 'paused');
      ui.say(message, true);
      detail.textContent = '';
      cancel.hidden = false;
      retry.hidden = false;
      dismiss.hidden = true;
    },
    resumed(message) {
      row.classList.remove('failed', 'paused');
      retry.hidden = true;
      dismiss.hidden = true;
      cancel.hidden = false;
      cancel.disabled = false;
      updateClearButton(list);
      ui.say(message);
    },
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
      updateClearButton(list);
    },
  };
  return ui;
}

/** Shows the links of a stored file in its row. */
function showLinks(row: HTMLLIElement, stored: StoredFile): void {
  const links = element('dl', { class: 'links' });
  const download = element('dd');
  // Readable text (the name as it was given), the encoded link as href and for copying.
  download.append(element('a', { href: stored.download }, readableUrl(stored.download, location.href)), ' ');
  download.append(element('button', { class: 'button small secondary', type: 'button', 'data-copy-text': stored.download }, 'Copy'));
  links.append(element('dt', {}, 'Download link'), download);
  const remove = element('dd');
  if (stored.delete) remove.append(element('a', { class: 'delete-link', href: stored.delete }, stored.delete));
  else remove.textContent = 'Shown only when the upload finished. Delete the file from the list below instead.';
  links.append(element('dt', {}, 'Delete link'), remove);
  row.append(links);
  enableCopyButtons(row);
}

const FINISHED_ROWS = ':scope > li.upload:is(.done, .failed:not(.paused))';

/** Shows "Clear finished" while a row is over (stored or failed for good). */
export function updateClearButton(list: HTMLUListElement): void {
  const button = document.getElementById('clear-uploads');
  if (button) button.hidden = !list.querySelector(FINISHED_ROWS);
}

/** Removes every finished row (stored, or failed for good); running and paused uploads stay. */
export function clearFinished(list: HTMLUListElement): void {
  for (const row of list.querySelectorAll(FINISHED_ROWS)) row.remove();
  updateClearButton(list);
  document.getElementById('upload-files')?.focus();
}

/** The window the speed (and so the time left) is averaged over. */
const SPEED_WINDOW_MS = 5000;

/**
 * Speed over the last SPEED_WINDOW_MS, fed with the bytes sent so far: samples older than
 * the window fall out, but one is kept from before it, so the average spans the window.
 */
function speedMeter() {
  let samples: Array<{ at: number; bytes: number }> = [];
  return {
    add(bytes: number, at = performance.now()) {
      // A retry starts again from the server's offset: the old samples say nothing now.
      if (samples.length > 0 && bytes < samples[samples.length - 1]!.bytes) samples = [];
      samples.push({ at, bytes });
      while (samples.length > 2 && at - samples[1]!.at >= SPEED_WINDOW_MS) samples.shift();
    },
    /** Bytes per second, or null until a second has been seen. */
    perSecond(): number | null {
      if (samples.length < 2) return null;
      const first = samples[0]!;
      const last = samples[samples.length - 1]!;
      const seconds = (last.at - first.at) / 1000;
      return seconds >= 1 ? (last.bytes - first.bytes) / seconds : null;
    },
    reset() {
      samples = [];
    },
  };
}

/** The detail line of a running upload. */
export interface DetailTicker {
  /** Bytes sent so far. */
  update(bytes: number): void;
  /** Stops the ticking (the upload is over or paused). */
  stop(): void;
}

/** Updates the detail line once a second while bytes are sent: sent of total, speed, time left. */
export function detailTicker(ui: UploadRow, total: number): DetailTicker {
  const meter = speedMeter();
  let sent = 0;
  let timer: number | undefined;
  const render = () => {
    meter.add(sent);
    const speed = meter.perSecond();
    const parts = [`${humanSize(sent)} of ${humanSize(total)}`];
    if (speed !== null && sent < total) {
      parts.push(speed > 0 ? `${humanSize(Math.round(speed))}/s` : 'stalled');
      if (speed > 0) parts.push(`about ${humanWait((total - sent) / speed)} left`);
    }
    ui.detail.textContent = parts.join(' · ');
  };
  return {
    update(bytes) {
      sent = bytes;
      if (sent >= total) render();
      else meter.add(bytes);
      timer ??= window.setInterval(render, 1000);
    },
    stop() {
      window.clearInterval(timer);
      timer = undefined;
      meter.reset();
    },
  };
}
