/**
 * File names as API.md section 2 wants them: the last path component, no control or
 * bidi-override characters, at most 255 UTF-8 bytes, never empty.
 */
const MAX_NAME_BYTES = 255;
// C0, DEL, C1 controls and the bidi embedding/override/isolate marks (used to disguise
// extensions, as in "invoice‮fdp.exe").
const UNWANTED = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Whether a text holds a character no stored name keeps (a control or a bidi mark). */
export function hasUnwantedCharacters(text: string): boolean {
  return text.search(UNWANTED) >= 0;
}

/**
 * A name's stem and extension ("report", ".pdf"); a leading dot (".bashrc") is part of
 * the stem, and so is an "extension" too long to be one. Without `extension`, all stem.
 */
export function splitExtension(name: string, extension = true): [stem: string, ext: string] {
  const dot = extension ? name.lastIndexOf('.') : -1;
  return dot > 0 && name.length - dot <= 32 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
}

export function sanitizeFileName(raw: string | undefined | null): string {
  const lastPart = (raw ?? '').split(/[\\/]/).pop() ?? '';
  let name = lastPart.replace(UNWANTED, '').trim();
  if (name === '.' || name === '..') name = '';
  name = truncateUtf8(name, MAX_NAME_BYTES).trim();
  return name === '' ? 'file' : name;
}

/** Cuts a string to at most `maxBytes` of UTF-8 without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let bytes = 0;
  let out = '';
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    out += char;
  }
  return out;
}

/** Folder names follow the same rules, with "folder" for an empty one. */
export function sanitizeFolderName(raw: string | undefined | null): string {
  const name = truncateUtf8((raw ?? '').replace(UNWANTED, '').trim(), MAX_NAME_BYTES).trim();
  return name === '' ? 'folder' : name;
}

/**
 * `count` numbered variants of a name, "report (2).pdf", "report (3).pdf", ..., for a name
 * taken among its siblings. A name already numbered goes on from its number; the stem is
 * cut so each variant stays within 255 bytes. Folders have no extension.
 */
export function numberedNames(name: string, count: number, { extension = true } = {}): string[] {
  const [stem, ext] = splitExtension(name, extension);
  const numbered = /^(.*) \((\d{1,6})\)$/.exec(stem);
  const base = numbered ? numbered[1]! : stem;
  const first = numbered ? Number(numbered[2]) + 1 : 2;
  const names: string[] = [];
  for (let n = first; names.length < count; n++) {
    const suffix = ` (${n})${ext}`;
    names.push(`${truncateUtf8(base, MAX_NAME_BYTES - Buffer.byteLength(suffix, 'utf8')).trim()}${suffix}`);
  }
  return names;
}
