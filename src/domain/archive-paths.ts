import { truncateUtf8 } from './names.js';

/*
 * Entry names of a folder's ZIP (docs/web.md "A folder as one ZIP"). A ZIP path is what an
 * unzip program writes to disk, so every segment is made safe here, whatever the stored
 * name holds (folder names may contain "/" and "..", rows migrated from elsewhere may hold
 * anything): no empty, "." or ".." segment, no separator inside a segment, no absolute
 * path or drive letter, no control or bidi-override character. Paths are unique within
 * the archive ignoring case and Unicode normalisation, because Windows and macOS file
 * systems treat "A.txt" and "a.txt" (or NFC and NFD "é") as one file.
 */

/** Longest segment in UTF-8 bytes: the usual file system limit for one name. */
const MAX_SEGMENT_BYTES = 255;
/** Longest extension kept apart when a name is numbered: room is always left for the stem. */
const MAX_EXTENSION_BYTES = 64;
// C0, DEL, C1 controls and the bidi embedding/override/isolate marks (domain/names.ts).
const UNWANTED = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** One path segment made safe to extract: never empty, never "." or "..", no separator. */
export function safeSegment(raw: string, fallback: string): string {
  let name = raw.normalize('NFC').replace(UNWANTED, '').replace(/[\\/]/g, '_').trim();
  // A leading drive letter ("C:") makes extractors treat the name as absolute on Windows.
  if (/^[A-Za-z]:/.test(name)) name = `_${name}`;
  name = truncateUtf8(name, MAX_SEGMENT_BYTES).trim();
  // Only dots (".", "..", "...") means "here" or "up" to some extractors; checked last, so
  // no cut or trim can make one.
  if (/^\.+$/.test(name)) name = name.replace(/\./g, '_');
  return name === '' ? fallback : name;
}

/**
 * "name (2).ext" for the n-th name of the same spelling (the extension kept, so the type
 * is too), at most MAX_SEGMENT_BYTES. An "extension" too long to leave room for the stem
 * (a name such as "a." followed by 253 letters) is no type worth keeping: the number goes
 * at the end of the whole name, cut to fit, so it never starts with the suffix's space.
 */
function numbered(name: string, n: number): string {
  const suffix = ` (${n})`;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot) : '';
  const extFits = ext !== '' && Buffer.byteLength(ext, 'utf8') <= MAX_EXTENSION_BYTES;
  const [stem, kept] = extFits ? [name.slice(0, dot), ext] : [name, ''];
  const result = `${truncateUtf8(stem, MAX_SEGMENT_BYTES - Buffer.byteLength(suffix + kept, 'utf8'))}${suffix}${kept}`;
  // The stem is never empty (dot > 0, safeSegment trims): the result starts with it.
  if (Buffer.byteLength(result, 'utf8') > MAX_SEGMENT_BYTES || result.startsWith(' ')) throw new Error(`numbered name out of bounds: ${result}`);
  return result;
}

/**
 * Hands out unique entry paths. Folders are claimed before the files beside them, so a
 * file never takes a name a folder's entries depend on.
 */
export class ArchivePaths {
  private readonly taken = new Set<string>();

  /** A unique path for `name` inside `dir` ('' for the top; a path claimed before). */
  claim(dir: string, rawName: string, fallback: string): string {
    const name = safeSegment(rawName, fallback);
    for (let n = 1; ; n++) {
      const candidate = `${dir === '' ? '' : `${dir}/`}${n === 1 ? name : numbered(name, n)}`;
      const key = candidate.normalize('NFC').toLowerCase();
      if (this.taken.has(key)) continue;
      this.taken.add(key);
      return candidate;
    }
  }
}
