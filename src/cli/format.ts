import { clampDate } from '../domain/dates.js';

/** A UTC timestamp for CLI output, or "-" (a stored date past year 9999 shows as 9999-12-31). */
export function humanDateOrDash(epochMs: number | null): string {
  return epochMs === null ? '-' : new Date(clampDate(epochMs)).toISOString().replace('T', ' ').slice(0, 19);
}
