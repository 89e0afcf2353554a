import { humanBytes } from '../../config/units.js';
import { clampDate } from '../../domain/dates.js';

/** Sizes in human units: 1023 B, 1.0 KiB, 48.2 MiB (binary prefixes, as file managers show). */
export function humanSize(bytes: number): string {
  return humanBytes(bytes);
}

/** A UTC date for pages: `2026-11-21 10:04 UTC` (a stored date past year 9999 shows as 9999-12-31). */
export function humanDate(epochMs: number): string {
  return `${new Date(clampDate(epochMs)).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** How long until a moment, in the largest whole unit people say: "3 days", "5 hours", "12 minutes", "less than a minute". */
export function timeLeftInWords(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
  ];
  for (const [size, word] of units) {
    const n = Math.floor(ms / size);
    if (n >= 1) return `${n} ${word}${n === 1 ? '' : 's'}`;
  }
  return 'less than a minute';
}

/**
 * A link as people read it: the path's percent-escapes decoded ("/AB12CD34EF/holiday
 * photo.jpg"), for the text of a link whose href stays encoded. A malformed escape is
 * left as it is. `base` resolves a relative link (the browser's uploader passes the page's).
 */
export function readableUrl(link: string, base?: string): string {
  try {
    const url = new URL(link, base);
    const path = url.pathname
      .split('/')
      .map((segment) => {
        try {
          return decodeURIComponent(segment);
        } catch {
          return segment;
        }
      })
      .join('/');
    return `${url.origin}${path}${url.search}`;
  } catch {
    return link;
  }
}
