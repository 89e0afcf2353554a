import { rememberRecent } from './remember-recent.js';

/** `YYYY-MM-DD HH:MM:SS` in UTC, or empty when unset (API.md 5: premium dates). */
export function sqlDateTime(epochMs: number | null): string {
  return epochMs === null ? '' : formatSqlDateTime(epochMs);
}

// The same few dates (an account's premium start and end) are written into answer after
// answer, and V8's date formatting costs more than a Map lookup (issue 9).
const formatSqlDateTime = rememberRecent((epochMs: number) => new Date(epochMs).toISOString().slice(0, 19).replace('T', ' '), 256);
