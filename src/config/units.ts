/** Parses sizes like `10GiB`, `500MB`, `64k`, `1PiB`, `1048576` into bytes; null when unreadable. */
export function parseBytes(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?i?b?)?\s*$/i.exec(text);
  if (!match) return null;
  const written = (match[2] ?? '').toLowerCase();
  const unit = written.replace(/b$/, '');
  const powers: Record<string, number> = { '': 0, k: 1, ki: 1, m: 2, mi: 2, g: 3, gi: 3, t: 4, ti: 4, p: 5, pi: 5 };
  const power = powers[unit];
  if (power === undefined) return null;
  // KiB/MiB/GiB and bare k/m/g (as nginx reads them) are binary; KB/MB/GB are decimal.
  const base = unit.endsWith('i') || !written.endsWith('b') ? 1024 : 1000;
  const value = Number(match[1]) * base ** power;
  return Number.isSafeInteger(Math.round(value)) ? Math.round(value) : null;
}

/** Parses durations like `24h`, `30m`, `7d`, `90s` (a bare number is seconds) into milliseconds. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text);
  if (!match) return null;
  const factors: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const ms = Math.round(Number(match[1]) * factors[(match[2] ?? 's').toLowerCase()]!);
  return Number.isSafeInteger(ms) ? ms : null;
}

const BINARY_UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/**
 * Bytes as people read them, in binary units: `512 B`, `1.5 MiB`, `3.2 GiB`. `fine` gives
 * two decimals below 10 (the CLI's progress, where `1.25 MiB` moves visibly). The one
 * formatter of the pages, the CLI and the browser's uploader (src/http/web/browser/, which
 * bundles this module).
 */
export function humanBytes(bytes: number, fine = false): string {
  if (Math.abs(bytes) < 1024) return `${bytes} B`;
  let value = bytes;
  let unit = -1;
  do {
    value /= 1024;
    unit++;
  } while (Math.abs(value) >= 1024 && unit < BINARY_UNITS.length - 1);
  return `${value.toFixed(fine && Math.abs(value) < 10 ? 2 : 1)} ${BINARY_UNITS[unit]}`;
}
