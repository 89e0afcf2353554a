import type { UploadLimits } from '../upload-messages.js';
import { enableCopyButtons } from './dom.js';

/** The upload box of the page (upload-form.ts): the form, and the list its rows go in. */
export interface UploadPage {
  form: HTMLFormElement;
  list: HTMLUListElement;
}

/** The page's upload box, or null on a page without one. */
export function uploadPage(): UploadPage | null {
  const form = document.getElementById('upload-form');
  const list = document.getElementById('upload-list');
  return form instanceof HTMLFormElement && list instanceof HTMLUListElement ? { form, list } : null;
}

/** The value of one of the form's hidden fields (the CSRF token, the folder), or ''. */
export function hiddenField(page: UploadPage, name: string): string {
  return page.form.querySelector<HTMLInputElement>(`input[type="hidden"][name="${name}"]`)?.value ?? '';
}

/** Bytes per file and volume left (null: unlimited), from #upload-limits' data attributes, as the page was served or last refreshed. */
export function readLimits(): UploadLimits {
  const data = document.getElementById('upload-limits')?.dataset ?? {};
  const number = (value: string | undefined) => (value === undefined || value === '' || !Number.isFinite(Number(value)) ? null : Number(value));
  return { maxFileSize: number(data.maxFileSize), volumeLeft: number(data.volumeLeft), volumeLimit: number(data.volumeLimit) };
}

/** A stored file's bytes leave the volume left this page shows, until the next refresh says it exactly. */
export function spendVolume(bytes: number): void {
  const line = document.getElementById('upload-limits');
  const { volumeLeft } = readLimits();
  if (line && volumeLeft !== null) line.dataset.volumeLeft = String(Math.max(0, volumeLeft - bytes));
}

/** Ids of files this page uploaded, marked in the list when it shows them. */
export const uploadedIds = new Set<string>();

/** Replaces the folder and file lists (and the limits line) with the server's current ones. */
export async function refreshLists(): Promise<void> {
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
