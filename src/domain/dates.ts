/** `YYYY-MM-DD HH:MM:SS` in UTC, or empty when unset (API.md 5: premium dates). */
export function sqlDateTime(epochMs: number | null): string {
  return epochMs === null ? '' : new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ');
}
