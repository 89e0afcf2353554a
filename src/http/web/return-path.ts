/** The query parameter and form field that carry where sign-in returns to. */
export const RETURN_FIELD = 'next';

const MAX_RETURN_LENGTH = 2048;
// Any origin would do: only paths that stay on it are kept.
const PROBE_ORIGIN = 'http://return-path.invalid';

/**
 * A place on this site to return to after sign-in, or null: only a relative path
 * (`/x?y#z`), never an address a browser would read as another site. `//evil`, `/\evil`
 * (browsers read `\` as `/`), `/<tab>/evil` (the URL parser drops tabs and newlines),
 * their percent-encoded forms and absolute URLs are all refused, so sign-in is no open
 * redirect. The answer is re-serialized by the URL parser, as the browser will read it.
 */
export function safeReturnPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_RETURN_LENGTH) return null;
  // Control characters, spaces and backslashes have no place in a path we wrote ourselves.
  if (!value.startsWith('/') || /[\u0000-\u0020\u007f\\]/.test(value)) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return null;
  }
  // An encoded `//` or `/\` could turn into a host in some later decoding step: refuse it.
  if (/^\/[/\\]/.test(decoded) || /^\/[/\\]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, PROBE_ORIGIN);
  } catch {
    return null;
  }
  if (url.origin !== PROBE_ORIGIN) return null;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith('/') && !path.startsWith('//') ? path : null;
}

/** The sign-in page that returns to `path` afterwards (a path of this site). */
export function signInUrl(path: string | null | undefined): string {
  const safe = safeReturnPath(path);
  // Home is where sign-in lands anyway; the account forms never return to themselves.
  if (!safe || safe === '/' || /^\/sign(in|up)(?:[/?#]|$)/.test(safe)) return '/signin';
  return `/signin?${RETURN_FIELD}=${encodeURIComponent(safe)}`;
}

/**
 * The page a form was sent from, as a path to return to: the Referer's path and query
 * when it is a page of this site (`siteUrl`, {web_url}), else null. Our pages send the
 * Referer to their own origin only (Referrer-Policy: same-origin); signInUrl() checks
 * the path like any other.
 */
export function refererPath(referer: string | undefined, siteUrl: string): string | null {
  if (referer === undefined) return null;
  try {
    const from = new URL(referer);
    return from.origin === new URL(siteUrl).origin ? `${from.pathname}${from.search}` : null;
  } catch {
    return null;
  }
}
