import { pipeline, Readable, Transform } from 'node:stream';
import { parse as parseContentDisposition } from 'content-disposition';
import type { ApiConnection, CallOptions } from './api-connection.js';
import { errorOf, statusError } from './api-connection.js';
import { readFeed } from './atom-reader.js';
import { FilehavenApiError } from './client-errors.js';

/** Where the bytes of a file come from (API.md 1). */
export interface DownloadTarget {
  /** The URL the bytes are fetched from. */
  url: string;
  /** File id. */
  id: string;
  /** File name as the server gives it (not yet safe as a local path: see the CLI's safeFileName). */
  name: string;
  /** Size in bytes, when known before the download. */
  size: number | undefined;
  /** A premium direct link: sent with the API key, counted against premium traffic. */
  direct: boolean;
}

/** Options of one download request. */
export interface DownloadOptions extends CallOptions {
  /** Start at this byte (resume): sent as `Range: bytes=<offset>-`. */
  offset?: number;
  /** The ETag of the bytes already held: with `If-Range`, a changed file comes back whole (RFC 9110 13.1.5). */
  ifRange?: string;
  /** HEAD: the size, name and ETag without the bytes (the body is then empty). */
  method?: 'GET' | 'HEAD';
}

/** A download in progress. */
export interface DownloadStream {
  /** The bytes from `offset` to the end; errors with errorDownloadIncomplete if the server sends fewer or more. */
  body: Readable;
  /** The whole file's size. */
  size: number;
  /** Where `body` starts: the asked offset, or 0 when the server sent the whole file (If-Range did not hold). */
  offset: number;
  /** The file's ETag, to resume with later; null when the server sent none. */
  etag: string | null;
  /** File name from Content-Disposition, else the target's. */
  name: string;
}

/** `/direct/<id>/<token>/<name>` and `/<id>/<name>` under {web_url} (API.md 1). */
const DIRECT_PATH = /^\/direct\/([^/]+)\/[^/]+\/([^/]+)$/;
const PUBLIC_PATH = /^\/([^/]+)\/([^/]+)$/;

const decode = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** The target of a download link; null when the URL is neither a download link nor a direct link. */
export function targetOfUrl(url: URL): DownloadTarget | null {
  const direct = DIRECT_PATH.exec(url.pathname);
  if (direct) return { url: url.href, id: decode(direct[1]!), name: decode(direct[2]!), size: undefined, direct: true };
  const page = PUBLIC_PATH.exec(url.pathname);
  // `/folder/<id>` is a folder's page, `/s/<id>` a share's and `/r/<id>` an upload request's (issue 25).
  if (!page || page[1] === 'folder' || page[1] === 's' || page[1] === 'r') return null;
  const raw = new URL(url.href);
  // The raw bytes of the download page (API.md 1): `?download=1`.
  raw.search = '';
  raw.searchParams.set('download', '1');
  return { url: raw.href, id: decode(page[1]!), name: decode(page[2]!), size: undefined, direct: false };
}

/** A link of issue 25 taken apart: `{web_url}/s/<id>[/download[/<file ref>]]` or `{web_url}/r/<id>`. */
export interface LinkParts {
  /** {web_url}: what comes before `/s/` or `/r/` (a site may live under a path). */
  webUrl: string;
  /** The share or request id. */
  id: string;
  /** A file of a folder share, when the link names one: its share reference (never a real file id). */
  fileId?: string;
}

const SHARE_LINK = /^(.*)\/s\/([A-Za-z0-9]+)(?:\/download(?:\/([A-Za-z0-9_-]+))?)?\/?$/;
const REQUEST_LINK = /^(.*)\/r\/([A-Za-z0-9]+)\/?$/;

/** The parts of a share link, or null when the URL is not one. */
export function shareOfUrl(url: URL): LinkParts | null {
  const match = SHARE_LINK.exec(url.pathname);
  if (!match) return null;
  return { webUrl: `${url.origin}${match[1]}`, id: match[2]!, ...(match[3] === undefined ? {} : { fileId: match[3] }) };
}

/** The parts of an upload request link, or null when the URL is not one. */
export function requestOfUrl(url: URL): LinkParts | null {
  const match = REQUEST_LINK.exec(url.pathname);
  return match ? { webUrl: `${url.origin}${match[1]}`, id: match[2]! } : null;
}

/** Counts the body and fails it when it ends short of (or past) the announced length. */
function checkedLength(expected: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > expected) done(new FilehavenApiError('errorDownloadIncomplete', 0, `the server sent more than the ${expected} bytes it announced`));
      else done(null, chunk);
    },
    flush(done) {
      done(seen === expected ? null : new FilehavenApiError('errorDownloadIncomplete', 0, `the download ended after ${seen} of ${expected} bytes`));
    },
  });
}

/** The Content-Range of a 206 (`bytes <first>-<last>/<total>`) or of a 416 (`bytes *` + `/<total>`). */
function contentRange(header: string | null): { first: number; total: number } | null {
  const match = header ? /^bytes (?:(\d+)-\d+|\*)\/(\d+)$/.exec(header.trim()) : null;
  return match ? { first: match[1] === undefined ? -1 : Number(match[1]), total: Number(match[2]) } : null;
}

function nameOf(response: Response, fallback: string): string {
  const header = response.headers.get('content-disposition');
  if (!header) return fallback;
  try {
    return parseContentDisposition(header).parameters.filename ?? fallback;
  } catch {
    return fallback;
  }
}

/** The error of a failed download answer: Atom on direct links, an HTML page on public ones. */
async function downloadError(response: Response, bodiless?: BodilessErrors): Promise<FilehavenApiError> {
  const text = await response.text().catch(() => '');
  const feed = readFeed(text);
  if (feed) return errorOf(response, feed);
  const retryAfter = errorOf(response, null).retryAfter;
  return bodiless?.(response.status, retryAfter) ?? statusError(response.status, retryAfter);
}

/** The error of an answer without a body (a HEAD's), from its status; undefined: the usual reading. */
export type BodilessErrors = (status: number, retryAfter: number | undefined) => FilehavenApiError | undefined;

/**
 * A share download's refusal without its Atom body (a HEAD's answer has none), told by
 * its status alone: 410 cannot tell an expired share from a spent one, and says so.
 */
export const shareStatusErrors: BodilessErrors = (status, retryAfter) => {
  if (status === 401) return new FilehavenApiError('errorSharePassword', status, 'The share needs its password, or the one given is wrong');
  if (status === 404) return new FilehavenApiError('errorShareNotFound', status, 'Share does not exist or was revoked');
  if (status === 410) return new FilehavenApiError('errorShareExpired', status, 'The share has expired or reached its download limit');
  if (status === 429 && retryAfter !== undefined)
    return new FilehavenApiError('errorSharePassword', status, 'Too many wrong passwords; try again later', retryAfter);
  return undefined;
};

/**
 * Sends the GET of a download (with Range and If-Range when resuming) and returns its
 * body as a stream; only a direct link carries the API key (SPEC.md rule 3 of the direct
 * link), and only to the server's own origins.
 */
export async function openDownload(
  connection: ApiConnection,
  target: DownloadTarget,
  options: DownloadOptions,
  keyAllowed: boolean,
  extraHeaders: Record<string, string> = {},
  bodiless?: BodilessErrors,
): Promise<DownloadStream> {
  const offset = options.offset ?? 0;
  const headers: Record<string, string> = { ...extraHeaders };
  if (target.direct && keyAllowed) Object.assign(headers, connection.authHeaders());
  if (offset > 0) {
    headers.Range = `bytes=${offset}-`;
    if (options.ifRange) headers['If-Range'] = options.ifRange;
  }
  const signal = connection.signalFor(options);
  const method = options.method ?? 'GET';
  const response = await connection.send(target.url, { method, headers, signal, redirect: 'error' });
  const etag = response.headers.get('etag');
  const name = nameOf(response, target.name);
  if (response.status === 416) {
    await response.body?.cancel();
    const range = contentRange(response.headers.get('content-range'));
    // The bytes held are already the whole file: nothing left to fetch.
    if (range && range.total === offset) return { body: Readable.from([]), size: offset, offset, etag, name };
    // More bytes held than the file has: they are not this file's; start again.
    if (range && range.total < offset) return openDownload(connection, target, { ...options, offset: 0 }, keyAllowed, extraHeaders, bodiless);
  }
  if (response.status !== 200 && response.status !== 206) throw await downloadError(response, bodiless);
  const declared = response.headers.get('content-length');
  const length = declared === null ? NaN : Number(declared);
  let start = 0;
  let size = length;
  if (response.status === 206) {
    const range = contentRange(response.headers.get('content-range'));
    if (!range || range.first !== offset) {
      await response.body?.cancel();
      throw new FilehavenApiError('errorUnexpectedResponse', 206, `asked for bytes from ${offset}, got ${response.headers.get('content-range')}`);
    }
    start = offset;
    size = range.total;
  }
  if (method === 'HEAD' && Number.isSafeInteger(length)) return { body: Readable.from([]), size, offset: start, etag, name };
  if (!response.body || !Number.isSafeInteger(length)) {
    await response.body?.cancel();
    throw new FilehavenApiError('errorUnexpectedResponse', response.status, 'the download has no Content-Length');
  }
  const bytes = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  // pipeline: a reader that stops early destroys the response too, and a broken response fails the reader.
  const body = pipeline(bytes, checkedLength(length), () => {});
  return { body, size, offset: start, etag, name };
}
