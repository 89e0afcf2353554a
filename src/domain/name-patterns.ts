/**
 * File-name patterns of the blacklist (API.md section 8): `*` matches any run of
 * characters, `?` exactly one, everything else itself, case-insensitively, against the
 * whole sanitised name. Matching is a linear-backtracking loop, not a RegExp, so no
 * pattern can make an upload spend exponential time.
 */
const MAX_PATTERN_LENGTH = 255;
// Sanitised names never hold these (domain/names.ts), so a pattern with one could never match.
const IMPOSSIBLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069/\\]/;

/** The stored form of a pattern: trimmed, NFC and lower case, so `*.EXE` and `*.exe` are one entry. */
export function normalizeNamePattern(raw: string): string {
  return raw.trim().normalize('NFC').toLowerCase();
}

/** Why a (normalised) pattern cannot be used, or null when it is fine. */
export function namePatternProblem(pattern: string): string | null {
  if (pattern === '') return 'a name pattern must not be empty';
  if (pattern.length > MAX_PATTERN_LENGTH) return `a name pattern must be at most ${MAX_PATTERN_LENGTH} characters`;
  if (IMPOSSIBLE.test(pattern)) return 'a name pattern cannot hold "/", "\\" or control characters (file names never do)';
  // `*`, `?*` and the like would refuse every upload: surely a mistake.
  if (/^[*?]+$/.test(pattern)) return 'a name pattern needs at least one character besides * and ?';
  return null;
}

/** Whether `name` matches `pattern` as a whole, ignoring case. */
export function matchesNamePattern(pattern: string, name: string): boolean {
  // NFC, so a name sent with decomposed accents (macOS) matches a pattern typed composed.
  const p = [...pattern.normalize('NFC').toLowerCase()];
  const n = [...name.normalize('NFC').toLowerCase()];
  let pi = 0;
  let ni = 0;
  // Position of the last `*` seen and the name position it is currently standing in for.
  let star = -1;
  let starNi = 0;
  while (ni < n.length) {
    if (pi < p.length && (p[pi] === '?' || (p[pi] !== '*' && p[pi] === n[ni]))) {
      pi++;
      ni++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      starNi = ni;
    } else if (star !== -1) {
      // Let the last `*` swallow one more character and retry from there.
      pi = star + 1;
      ni = ++starNi;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}
