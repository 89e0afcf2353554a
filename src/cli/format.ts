/** A UTC timestamp for CLI output, or "-". */
export function humanDateOrDash(epochMs: number | null): string {
  return epochMs === null ? '-' : new Date(epochMs).toISOString().replace('T', ' ').slice(0, 19);
}
