import { rememberRecent } from './remember-recent.js';

/**
 * The latest instant filehaven writes or shows: 9999-12-31 23:59:59 UTC. Later dates have
 * no `YYYY-MM-DD` form (toISOString writes `+010000-...`, and throws past year 275760),
 * so a stored date beyond it (a row written by an older version) is shown as this one
 * instead of failing the page, the API answer or the CLI listing (issue 12).
 */
export const LATEST_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/** An epoch-ms date brought into 1970-01-01 .. 9999-12-31 (NaN counts as 1970). */
export function clampDate(epochMs: number): number {
  return Number.isNaN(epochMs) ? 0 : Math.min(Math.max(epochMs, 0), LATEST_DATE_MS);
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, or empty when unset (API.md 5: premium dates). */
export function sqlDateTime(epochMs: number | null): string {
  return epochMs === null ? '' : formatSqlDateTime(clampDate(epochMs));
}

// The same few dates (an account's premium start and end) are written into answer after
// answer, and V8's date formatting costs more than a Map lookup (issue 9).
const formatSqlDateTime = rememberRecent((epochMs: number) => new Date(epochMs).toISOString().slice(0, 19).replace('T', ' '), 256);
