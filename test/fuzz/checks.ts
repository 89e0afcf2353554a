import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { API_PATH_WORDS, errorCases } from '../../src/http/api/api-catalogue.js';
import { browserScript } from '../../src/http/web/browser-scripts.js';
import type { FuzzCase } from './fuzz-case.js';
import type { RawExchange, RawHttpResponse } from './raw-http.js';

/**
 * The property every fuzz request must keep (issue 7): an answer within the bound (or, for
 * a request left incomplete or broken, a close), never a 5xx, never a stack trace or an
 * internal detail, and on API paths (and unknown paths, unless the client reads HTML)
 * nothing but the Atom feed of API.md 3, errors with a documented code.
 */

export type ViolationKind =
  /** The server process exited. */
  | 'crash'
  /** /healthz did not answer 200 after the case. */
  | 'unhealthy'
  /** Neither an answer nor a close within the bound. */
  | 'timeout'
  /** A complete, well-formed request whose connection was closed without an answer. */
  | 'no answer'
  /** An answer that is not HTTP/1.1, or one cut short. */
  | 'bad response'
  | '5xx'
  /** A stack frame, an exception message, a file path or an internal code in a body. */
  | 'stack trace or internals'
  /** An API (or unknown-path) answer that is not the Atom feed. */
  | 'non-Atom API answer'
  /** Something of a refused or unanswered upload kept: a temp file, a row, a blob. */
  | 'kept';

export interface Violation {
  kind: ViolationKind;
  detail: string;
}

export const ATOM_TYPE = 'application/atom+xml; charset=utf-8';

/** The codes a client may see: the documented catalogue (api-catalogue.ts errorCases). */
export const DOCUMENTED_CODES: ReadonlySet<string> = new Set(errorCases({ maxFileSize: 1 }).map((c) => c.error.code));

const WEB_EXACT = new Set([
  '/',
  '/healthz',
  '/developers',
  '/signin',
  '/signup',
  '/signout',
  '/static/site.css',
  '/favicon.svg',
  '/favicon.ico',
  browserScript('my-files').path,
  browserScript('profile').path,
  browserScript('request-upload').path,
  '/accounts/profile/misc',
  '/accounts/profile/misc/regenerate-key',
  '/my/files',
  '/my/files/upload',
  '/my/files/move',
  '/my/files/delete',
  '/my/files/folders',
]);

/** Percent-decodes what decodes and leaves the rest (a bad escape stays as it is). */
function lenientDecode(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The path of a request-target as the request line carries it: origin or absolute form, no query. */
function pathOf(target: string): string {
  let path = target.split(' ')[0] ?? '';
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(.*)$/is.exec(path);
  if (absolute) path = absolute[1] || '/';
  return path.replace(/[?#].*$/s, '');
}

/**
 * What a target addresses (API.md 1): the API (its first path word is one of the
 * catalogue's: /apikeys, /file, /files…, /folders…, /account, also percent-encoded), a
 * web route (pages, download, delete, direct and folder links), or nothing known.
 */
export function classifyTarget(target: string): 'api' | 'web' | 'unknown' {
  const path = pathOf(target);
  if (!path.startsWith('/')) return 'unknown';
  const segments = path.slice(1).split('/');
  const first = lenientDecode(segments[0] ?? '').split(';')[0]!;
  if (API_PATH_WORDS.has(first)) return 'api';
  if (WEB_EXACT.has(path)) return 'web';
  const decoded = segments.map(lenientDecode);
  if (decoded[0] === 'folder' && decoded.length === 2) return 'web';
  if (decoded[0] === 'direct' && decoded.length === 4) return 'web';
  // A share's downloads (issue 25): /s/<id>/download and /s/<id>/download/<file id>.
  if (decoded[0] === 's' && (decoded.length === 3 || decoded.length === 4) && decoded[2] === 'download') return 'web';
  // An upload request's password form (issue 25); its page and upload are `/r/<id>`, below.
  if (decoded[0] === 'r' && decoded.length === 3 && decoded[2] === 'password') return 'web';
  if (decoded.length === 3 && decoded[1] === 'delete') return 'web';
  // The download page's route takes any `/<a>/<b>` (an id that is not one is its 404 page).
  if (decoded.length === 2) return 'web';
  return 'unknown';
}

/** Every Accept header of the case, joined as Node joins them. */
function acceptOf(c: FuzzCase): string {
  return c.headers
    .filter(([name]) => name.toLowerCase() === 'accept')
    .map(([, value]) => value)
    .join(', ');
}

/**
 * Whether the answer must be Atom: API paths always (API.md 2: "whatever Accept says"),
 * unknown paths unless the client reads HTML (API.md 3: errorNotFound; browsers get a page).
 */
export function expectsAtom(c: FuzzCase): boolean {
  const kind = classifyTarget(c.target);
  return kind === 'api' || (kind === 'unknown' && !/text\/html/.test(acceptOf(c)));
}

const LEAKS: [RegExp, string][] = [
  [/^\s*at .+:\d+:\d+\)?\s*$/m, 'a stack frame'],
  [/\bat (?:async )?[\w$.<>[\] ]+ \((?:node:|file:|\/)[^)]*\)/, 'a stack frame'],
  [/\b(?:Error|TypeError|RangeError|ReferenceError|SyntaxError|SqliteError|AbortError): /, 'an exception message'],
  [/\/work\/|node_modules|\/home\/|\/tmp\/filehaven/, 'a server file path'],
  [/\bFST_[A-Z_]+\b/, 'a Fastify error code'],
  [/\bSQLITE_[A-Z_]+\b|\bE(?:NOENT|ACCES|PERM|ISDIR|MFILE|NOSPC|EXIST)\b/, 'an internal error code'],
  [/\.(?:ts|js|mjs|cjs):\d+/, 'a source location'],
];

/** Bodies that are data or code by design: downloads and previews (user bytes), scripts, styles. */
function isContent(response: RawHttpResponse): boolean {
  const type = response.headers['content-type'] ?? '';
  return response.headers['content-disposition'] !== undefined || /javascript|text\/css/.test(type);
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, trimValues: true });

/** What is wrong with an answer that must be Atom (API.md 2, 3), or null. */
function atomProblem(c: FuzzCase, response: RawHttpResponse): string | null {
  const type = response.headers['content-type'];
  if (type !== ATOM_TYPE) return `Content-Type ${JSON.stringify(type ?? null)}, not ${ATOM_TYPE}`;
  if (c.method === 'HEAD' || !response.complete) return null;
  const body = response.body.toString('utf8');
  const valid = XMLValidator.validate(body);
  if (valid !== true) return `the body is not well-formed XML (${valid.err.msg})`;
  const feed = (xml.parse(body) as { feed?: { title?: unknown; entry?: unknown } }).feed;
  if (!feed) return 'the root element is not <feed>';
  if (response.status < 400) return null;
  if (feed.title !== 'Error') return `an error status with feed title ${JSON.stringify(feed.title)}, not "Error"`;
  const entry = (Array.isArray(feed.entry) ? feed.entry[0] : feed.entry) as { title?: unknown } | undefined;
  const code = entry?.title;
  if (typeof code !== 'string' || !DOCUMENTED_CODES.has(code)) return `the error entry's title ${JSON.stringify(code ?? null)} is not a documented error code`;
  return null;
}

/** A short view of an answer for reports: an Atom error by its code and message, anything else by its first bytes. */
export function describeResponse(response: RawHttpResponse | undefined): string {
  if (!response) return 'no answer';
  const body = response.body.toString('utf8');
  const error = /<title>Error<\/title>[\s\S]*?<entry>\s*<title>([^<]*)<\/title>\s*<content type="text">([^<]*)<\/content>/.exec(body);
  const shown = error ? `Atom error ${error[1]}: ${JSON.stringify(error[2])}` : JSON.stringify(body.length > 300 ? `${body.slice(0, 300)}…` : body);
  return `${response.statusLine} | Content-Type: ${response.headers['content-type'] ?? '(none)'} | ${shown}`;
}

/** The violations of one exchange (the answer and how the connection ended). */
export function checkExchange(c: FuzzCase, exchange: RawExchange): Violation[] {
  const violations: Violation[] = [];
  const response = exchange.response;
  if (exchange.timedOut)
    violations.push({
      kind: 'timeout',
      detail: `no answer or close within the bound (${exchange.elapsedMs} ms)${response ? `; began: ${describeResponse(response)}` : ''}`,
    });
  if (!response) {
    // A server may refuse a body early and close; if it did so while the body was still
    // being sent, its answer can be lost to the TCP reset. Only a close after the whole
    // request arrived, without an answer, is a failure.
    if (exchange.closedWithoutResponse && c.framing === 'complete' && c.ending === 'wait' && exchange.allWritten) {
      violations.push({ kind: 'no answer', detail: `the connection was closed without an answer${exchange.errorCode ? ` (${exchange.errorCode})` : ''}` });
    }
    return violations;
  }
  if (response.status === 0) {
    violations.push({ kind: 'bad response', detail: response.statusLine });
    return violations;
  }
  if (response.status >= 500) violations.push({ kind: '5xx', detail: describeResponse(response) });
  if (!response.complete && c.ending === 'wait' && !exchange.timedOut)
    violations.push({ kind: 'bad response', detail: `the answer was cut short: ${describeResponse(response)}` });
  if (!isContent(response)) {
    const text = response.body.toString('utf8');
    for (const [pattern, what] of LEAKS) {
      const match = pattern.exec(text);
      if (match) {
        violations.push({
          kind: 'stack trace or internals',
          detail: `${what} in the body: ${JSON.stringify(text.slice(Math.max(0, match.index - 80), match.index + 120))}`,
        });
        break;
      }
    }
  }
  if (expectsAtom(c)) {
    const problem = atomProblem(c, response);
    if (problem) violations.push({ kind: 'non-Atom API answer', detail: `${problem}: ${describeResponse(response)}` });
  }
  return violations;
}

/** The answer's text where a created file's id would show: the body and the Location header. */
export function answerText(response: RawHttpResponse | undefined): string {
  if (!response) return '';
  return `${response.headers.location ?? ''}\n${response.body.toString('latin1')}`;
}
