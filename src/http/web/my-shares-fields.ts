import { parseBytes } from '../../config/units.js';
import { errors } from '../../domain/errors.js';
import { type Html, html } from '../html.js';
import { humanDate } from './format.js';

/** The Shares page of a signed-in account: its shares and upload requests. */
export const MY_SHARES_PATH = '/my/shares';
/** Where the Share form of a file or folder in My files posts. */
export const MY_SHARE_PATH = '/my/files/share';
/** Where the Shares page's new-request form posts. */
export const MY_REQUESTS_PATH = `${MY_SHARES_PATH}/requests`;

/** The expiries the forms offer, in words (issue 25: "expiry in words such as 1 day"). */
const EXPIRIES = [
  { value: '1h', label: '1 hour', seconds: 3_600 },
  { value: '1d', label: '1 day', seconds: 86_400 },
  { value: '7d', label: '7 days', seconds: 7 * 86_400 },
  { value: '30d', label: '30 days', seconds: 30 * 86_400 },
] as const;

/** The expiry select's value for "never" (no operator cap) or "as long as this server allows" (a cap). */
const LONGEST = 'longest';
/** The edit forms' value for "leave the expiry as it is". */
const KEEP = 'keep';

/** A duration in the largest whole unit: "3 days", "12 hours", "90 minutes", "45 seconds". */
export function durationWords(ms: number): string {
  const units = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
  ] as const;
  for (const [size, word] of units) {
    if (ms >= size && ms % size === 0) return plural(ms / size, word);
  }
  return plural(Math.floor(ms / 1000), 'second');
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The expiry <select> of a form: the choices in words within the operator's cap (null =
 * none), then "never" (no cap) or "as long as allowed" (the cap). An edit form starts with
 * "keep as it is" and says until when the thing runs now.
 */
export function expirySelect(id: string, maxExpiryMs: number | null, edit: { expiresAt: number | null } | null, chosen?: string): Html {
  const options: Array<{ value: string; label: string }> = [];
  if (edit) options.push({ value: KEEP, label: edit.expiresAt === null ? 'Keep: never expires' : `Keep: until ${humanDate(edit.expiresAt)}` });
  for (const choice of EXPIRIES) if (maxExpiryMs === null || choice.seconds * 1000 <= maxExpiryMs) options.push(choice);
  options.push({ value: LONGEST, label: maxExpiryMs === null ? 'Never' : `${durationWords(maxExpiryMs)} (the longest allowed)` });
  const selected = chosen ?? (edit ? KEEP : maxExpiryMs === null || maxExpiryMs >= 7 * 86_400_000 ? '7d' : LONGEST);
  return html`<select id="${id}" name="expires">${options.map(
    (option) => html`<option value="${option.value}"${option.value === selected ? html` selected` : ''}>${option.label}</option>`,
  )}</select>`;
}

/**
 * The `expires_in` field a service takes for the select's value: undefined to leave it
 * out (at creation: never, or the operator's longest when there is a cap; in an edit:
 * unchanged), a number of seconds, or `0` (never, in an edit).
 */
export function expiresInField(value: string | undefined, maxExpiryMs: number | null, edit: boolean): string | undefined {
  if (value === undefined || value === '' || (edit && value === KEEP)) return undefined;
  if (value === LONGEST) {
    if (maxExpiryMs === null) return edit ? '0' : undefined;
    return edit ? String(Math.floor(maxExpiryMs / 1000)) : undefined;
  }
  const choice = EXPIRIES.find((c) => c.value === value);
  if (!choice) throw errors.wrongParameters('choose an expiry from the list');
  return String(choice.seconds);
}

/**
 * A size field in human units ("1 GiB", "500 MB", "2048"): undefined when empty (no limit
 * at creation), else the whole bytes as the service's field; unreadable text is
 * errorWrongParameters with the field's label.
 */
export function sizeField(raw: string | undefined, label: string): string | undefined {
  const text = (raw ?? '').trim();
  if (text === '') return undefined;
  const bytes = parseBytes(text);
  if (bytes === null || bytes < 1) throw errors.wrongParameters(`${label}: write a size such as 500 MB or 2 GiB`);
  return String(bytes);
}

/** A count field ("max downloads", "max files"): undefined when empty, the text otherwise (the service checks it). */
export function countField(raw: string | undefined): string | undefined {
  const text = (raw ?? '').trim();
  return text === '' ? undefined : text;
}

const EXACT_UNITS = [
  [1024 ** 4, 'TiB'],
  [1024 ** 3, 'GiB'],
  [1024 ** 2, 'MiB'],
  [1024, 'KiB'],
] as const;

/**
 * Bytes written so that reading them back gives the same number: "2 GiB", "1536 KiB",
 * "1000000". An edit form is filled with this, so saving it untouched changes nothing
 * (humanSize rounds: "1.2 MiB" would not).
 */
export function exactSize(bytes: number): string {
  for (const [size, unit] of EXACT_UNITS) if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return String(bytes);
}

/** A wrong-input message as a sentence for a page: "Max_files must be ..." reads "max files must ...". */
export function sentence(message: string): string {
  const text = message.replace(/\b(max_downloads|max_files|max_bytes|max_file_size|expires_in)\b/g, (name) => name.replaceAll('_', ' '));
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
}
