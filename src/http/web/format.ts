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
