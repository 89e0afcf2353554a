import type { FastifyRequest } from 'fastify';
import { LINK_ID_PATTERN } from '../domain/ids.js';
import { decodeSegment, pathSegments } from './request-target.js';

/**
 * Query parameters whose values the site itself reads and that carry nothing secret;
 * every other parameter's value is replaced in the log, since clients put API keys,
 * passwords and tokens into query strings whatever the docs say (issue 7, item 5).
 */
const SAFE_QUERY_PARAMS = new Set(['download', 'preview', 'status', 'folder', 'parent', 'limit', 'cursor', 'note', 'copied', '_method', 'key']);

/** Query values kept only when they look like what the site sends (`key=new` on the profile). */
const SAFE_VALUES: Record<string, RegExp> = { key: /^new$/ };

export const REDACTED = '[redacted]';

/**
 * The indexes of path segments that are secrets: the delete link's secret
 * (`/<id>/delete/<secret>`) and the direct link's token (`/direct/<id>/<token>/...`),
 * API.md 1; and any segment shaped like a share's or an upload request's id (22 of
 * A-Za-z0-9, domain/ids.ts), which is its link's key (issue 25), wherever it stands:
 * `/s/<id>`, `/requests/<id>`, the owner's `/my/shares/share/<id>`, the console's
 * `/console/shares/<id>/revoke`. Matched on decoded segments, so `%64elete` or `//` cannot
 * slip past.
 */
function secretSegments(decoded: string[]): number[] {
  const secrets: number[] = [];
  if (decoded.length >= 3 && decoded[1]!.toLowerCase() === 'delete') secrets.push(2);
  if (decoded.length >= 3 && decoded[0]!.toLowerCase() === 'direct') secrets.push(2);
  decoded.forEach((segment, index) => {
    if (LINK_ID_PATTERN.test(segment)) secrets.push(index);
  });
  if (decoded.length >= 2 && ['r', 'requests', 's', 'shares'].includes(decoded[0]!) && decoded[1] !== '') secrets.push(1);
  return secrets;
}

/** A request target as it may be written to the log: secrets in the path and query replaced. */
export function redactUrl(url: string): string {
  const segments = pathSegments(url);
  for (const secret of secretSegments(segments.map(decodeSegment))) segments[secret] = REDACTED;
  const path = `/${segments.join('/')}`;
  const question = url.indexOf('?');
  if (question === -1) return path;
  const query = url
    .slice(question + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      // A bare word is kept only when it is one of the site's flags (`?download`): a client
      // may send its key as `?<key>`.
      if (equals === -1) return SAFE_QUERY_PARAMS.has(safeDecode(pair)) || pair === '' ? pair : REDACTED;
      const name = safeDecode(pair.slice(0, equals));
      const value = safeDecode(pair.slice(equals + 1));
      const safe = SAFE_QUERY_PARAMS.has(name) && (SAFE_VALUES[name]?.test(value) ?? true);
      return safe ? pair : `${pair.slice(0, equals)}=${REDACTED}`;
    })
    .join('&');
  return `${path}?${query}`;
}

/** A query name or value decoded (`+` is a space there). */
function safeDecode(text: string): string {
  return decodeSegment(text.replace(/\+/g, ' '));
}

/**
 * The logger's view of a request: Fastify's default fields with the URL redacted. Headers
 * are never logged (Authorization carries the API key, Cookie the session).
 */
export function serializeRequestForLog(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
