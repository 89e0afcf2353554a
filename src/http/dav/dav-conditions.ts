/**
 * The If header (RFC 4918 10.4): TO BE BUILT (issue 27, locks part) — parsing its tagged
 * and untagged lists, evaluating them against the resources' lock tokens and ETags (412
 * when no list holds), and the tokens it submits.
 */

/** The lock tokens an If header names (each "urn:uuid:..." or any other Coded-URL), for the lock checks. */
export function submittedTokensOf(header: string | string[] | undefined): ReadonlySet<string> {
  const text = Array.isArray(header) ? header.join(' ') : (header ?? '');
  const tokens = new Set<string>();
  for (const match of text.matchAll(/<([^>]*)>/g)) tokens.add(match[1]!);
  return tokens;
}

/**
 * Evaluates the request's If header (RFC 4918 10.4) against the resources it names
 * (untagged lists: the request's own path), their lock tokens and ETags; throws a 412
 * DavError when no list of a resource holds. A no-op without an If header.
 * TO BE BUILT (issue 27, locks part).
 */
export async function checkIfHeader(_dav: import('./dav-exchange.js').DavExchange): Promise<void> {}
