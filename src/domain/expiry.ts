import { errors } from './errors.js';

/** The longest expiry anyone may name: 100 years, far past any use and far inside every number type. */
export const LONGEST_EXPIRY_SECONDS = 100 * 365 * 24 * 3600;

/** How an `expires_in` field was given. */
export type ExpiresIn =
  /** The field was absent: the caller's default applies. */
  | { kind: 'absent' }
  /** `0` where it means "never" (changing an expiry). */
  | { kind: 'never' }
  /** A number of seconds from now, at least 1. */
  | { kind: 'in'; seconds: number };

/**
 * Reads an `expires_in` form field (issue 25): whole seconds, at least 1, at most
 * LONGEST_EXPIRY_SECONDS; `0` only where `zeroMeansNever` (a change), and refused at
 * creation. Anything else (negative, fractional, words, huge) is errorWrongParameters.
 */
export function parseExpiresIn(raw: string | undefined, options: { zeroMeansNever: boolean }): ExpiresIn {
  if (raw === undefined) return { kind: 'absent' };
  const text = raw.trim();
  if (!/^\d{1,12}$/.test(text)) throw errors.wrongParameters('expires_in must be a whole number of seconds');
  const seconds = Number(text);
  if (seconds === 0) {
    if (options.zeroMeansNever) return { kind: 'never' };
    throw errors.wrongParameters('expires_in must be at least 1 second');
  }
  if (seconds > LONGEST_EXPIRY_SECONDS) throw errors.wrongParameters(`expires_in must be at most ${LONGEST_EXPIRY_SECONDS} seconds (100 years)`);
  return { kind: 'in', seconds };
}

/**
 * The moment (epoch ms) something expires, from what was asked and the operator's cap:
 * absent takes `defaultMs` (null = never); a cap (null = none) refuses "never" and anything
 * longer, with a message naming the cap, rather than shortening it silently.
 */
export function expiryMoment(asked: ExpiresIn, rules: { now: number; defaultMs: number | null; maxMs: number | null; what: string }): number | null {
  const { now, defaultMs, maxMs, what } = rules;
  let ms: number | null;
  if (asked.kind === 'absent') ms = defaultMs === null ? maxMs : maxMs === null ? defaultMs : Math.min(defaultMs, maxMs);
  else if (asked.kind === 'never') ms = null;
  else ms = asked.seconds * 1000;
  if (maxMs !== null && (ms === null || ms > maxMs)) {
    throw errors.wrongParameters(`${what} may expire at most ${Math.floor(maxMs / 1000)} seconds from now on this server`);
  }
  return ms === null ? null : now + ms;
}

/** The operator's file expiry settings (--file-expiry-default, --file-expiry-max), ms; null = none. */
export interface FileExpiryRules {
  /** Expiry of a new file whose upload names none; null = never. */
  defaultMs: number | null;
  /** Longest expiry a file may have; null = no cap ("never" allowed). */
  maxMs: number | null;
}

/**
 * When a file expires (epoch ms, null = never), from what was asked at `now` and the
 * operator's rules: the one rule for an upload (any entry point), a copy (which names
 * none, so gets the default) and a change (`PUT /files/<id>;expiry`). Over the cap,
 * or "never" under one, is errorWrongParameters.
 */
export function fileExpiresAt(asked: ExpiresIn, rules: FileExpiryRules, now: number): number | null {
  return expiryMoment(asked, { now, defaultMs: rules.defaultMs, maxMs: rules.maxMs, what: 'A file' });
}
