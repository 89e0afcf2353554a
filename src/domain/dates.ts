/** `YYYY-MM-DD HH:MM:SS` in UTC, or empty when unset (API.md 5: premium dates). */
export function sqlDateTime(epochMs: number | null): string {
  if (epochMs === null) return '';
  // The same few dates (an account's premium start and end) are written into answer after
  // answer, and V8's date formatting costs more than a Map lookup (issue 9).
  let text = recentDates.get(epochMs);
  if (text === undefined) {
    text = new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ');
    if (recentDates.size >= 256) recentDates.delete(recentDates.keys().next().value!);
    recentDates.set(epochMs, text);
  }
  return text;
}

const recentDates = new Map<number, string>();
