import type { FastifyRequest } from 'fastify';

/**
 * Query parameters whose values the site itself reads and that carry nothing secret;
 * every other parameter's value is replaced in the log, since clients put API keys,
 * passwords and tokens into query strings whatever the docs say (issue 7, item 5).
 */
const SAFE_QUERY_PARAMS = new Set(['download', 'preview', 'status', 'folder', 'parent', 'limit', 'cursor', 'note', 'copied', '_method', 'key']);

/** Query values kept only when they look like what the site sends (`key=new` on the profile). */
const SAFE_VALUES: Record<string, RegExp> = { key: /^new$/ };

export const REDACTED = '[redacted]';

/** Path segments that are secrets: the delete link's secret and the direct link's token (API.md 1). */
const SECRET_PATHS: Array<[RegExp, string]> = [
  [/^(\/[^/?]+\/delete\/)[^/?]+/i, `$1${REDACTED}`],
  [/^(\/direct\/[^/?]+\/)[^/?]+/i, `$1${REDACTED}`],
];

/** A request target as it may be written to the log: secrets in the path and query replaced. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  let path = question === -1 ? url : url.slice(0, question);
  for (const [pattern, replacement] of SECRET_PATHS) path = path.replace(pattern, replacement);
  if (question === -1) return path;
  const query = url
    .slice(question + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals === -1) return pair;
      const name = safeDecode(pair.slice(0, equals));
      const value = safeDecode(pair.slice(equals + 1));
      const safe = SAFE_QUERY_PARAMS.has(name) && (SAFE_VALUES[name]?.test(value) ?? true);
      return safe ? pair : `${pair.slice(0, equals)}=${REDACTED}`;
    })
    .join('&');
  return `${path}?${query}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
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
