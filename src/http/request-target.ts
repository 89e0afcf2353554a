/**
 * The path of a request target as the router sees it, one segment at a time: an
 * absolute-form target (`GET http://host/x`) loses its scheme and host, the query goes,
 * empty segments (`//`) collapse. Segments stay as sent (percent-encoded).
 */
export function pathSegments(target: string): string[] {
  const withoutOrigin = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const question = withoutOrigin.search(/[?#]/);
  const path = question === -1 ? withoutOrigin : withoutOrigin.slice(0, question);
  return path.split('/').filter((segment) => segment !== '');
}

/** A path segment percent-decoded, or as it is when its escapes are malformed. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
