import { type AtomFeed, childText, readFeed } from './atom-reader.js';
import { FilehavenApiError, FilehavenConnectionError, isApiErrorCode, retryAfterSeconds } from './client-errors.js';

/** The fetch the SDK calls: the global one unless a caller gives another (a proxy agent, a test double). */
export type FetchFunction = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** What every call may carry. */
export interface CallOptions {
  /** Aborts the call; the SDK throws the signal's reason. */
  signal?: AbortSignal;
}

/** One API request. */
interface ApiRequest extends CallOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
  /** Path under {base_url}, already encoded. */
  path: string;
  /** A whole URL instead of {base_url} + path (the upload of a request, under {web_url}). */
  url?: string;
  /** Headers besides Accept and Authorization (a link's password). */
  headers?: Record<string, string>;
  /** Sees the answer's headers once it is a success (Filehaven-Expires). */
  onHeaders?: (headers: Headers) => void;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | undefined>;
  /** A form-encoded body (SPEC.md: POST and PUT parameters are form-encoded). */
  form?: URLSearchParams;
  /** A body of another kind (the upload's multipart stream) and its headers. */
  body?: { data: unknown; headers: Record<string, string> };
  /** The feed title of a success (SPEC.md titles); anything else is an unexpected answer. */
  expect: string;
  /** Whether to send the API key (all but POST /apikeys). */
  auth?: boolean;
  /** A listing: a feed without entries is an empty page, not an odd answer. */
  listing?: boolean;
}

/**
 * The SDK's one door to the server: builds requests (Authorization, Accept), turns
 * answers into feeds and failures into FilehavenApiError with the SPEC code. Upload
 * transports and downloads share it, so errors look the same wherever they come from.
 */
export class ApiConnection {
  /** {web_url}, learned from the `author/name` of the last feed (API.md 1); empty until then. */
  webUrl = '';

  constructor(
    /** {base_url}, no trailing slash. */
    readonly server: string,
    /** The API key, when there is one. */
    readonly key: string | undefined,
    readonly fetch: FetchFunction,
    /** Aborts every call of this client. */
    readonly signal: AbortSignal | undefined,
  ) {}

  /** The client's signal and a call's, as one. */
  signalFor(options: CallOptions = {}): AbortSignal | undefined {
    const signals = [this.signal, options.signal].filter((signal): signal is AbortSignal => signal !== undefined);
    return signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  }

  /** Headers of an authenticated request. */
  authHeaders(): Record<string, string> {
    if (this.key === undefined) throw new FilehavenApiError('errorPermissionDenied', 0, 'No API key: sign in first (filehaven login)');
    return { Authorization: this.key };
  }

  /** fetch() with transport failures named after the server; an abort rethrows the signal's reason. */
  async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetch(url, init);
    } catch (error) {
      if (init.signal?.aborted) throw init.signal.reason;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      if (cause?.code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH') {
        throw new FilehavenConnectionError('the file changed size while it was being sent', { cause: error });
      }
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new FilehavenConnectionError(`cannot reach ${new URL(url).origin}: ${why}`, { cause: error });
    }
  }

  /** Sends an API request and returns its feed, or throws the error the server reported. */
  async call(request: ApiRequest): Promise<AtomFeed> {
    const url = new URL(request.url ?? `${this.server}${request.path}`);
    for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const headers: Record<string, string> = {
      Accept: 'application/atom+xml',
      ...(request.auth === false ? {} : this.authHeaders()),
      ...request.headers,
    };
    let body: unknown;
    if (request.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = request.form.toString();
    } else if (request.body) {
      Object.assign(headers, request.body.headers);
      body = request.body.data;
    }
    const signal = this.signalFor(request);
    const sent = headers['Content-Length'] === undefined ? undefined : Number(headers['Content-Length']);
    // A streamed body needs duplex 'half' (fetch spec); undici sends it with our Content-Length.
    // redirect 'error': the API never redirects, and with any other mode fetch clones the
    // request (Fetch "HTTP-network-or-cache fetch" step 8), teeing a streamed body into a
    // branch nobody reads, which then holds the whole upload in memory.
    const init = { method: request.method, headers, body, signal, duplex: 'half', redirect: 'error' } as RequestInit;
    const response = await this.send(url.href, init);
    const feed = await this.readAnswer(response, signal, sent);
    if (feed.title !== request.expect || (feed.entries.length === 0 && !request.listing)) {
      throw new FilehavenApiError(
        'errorUnexpectedResponse',
        response.status,
        `expected "${request.expect}" from ${request.method} ${request.path}, got "${feed.title}"`,
      );
    }
    request.onHeaders?.(response.headers);
    return feed;
  }

  /**
   * The feed of a successful answer; the server's error (or an unexpected answer)
   * otherwise. `sent`: the request's body size, named when a proxy refuses it.
   */
  async readAnswer(response: Response, signal?: AbortSignal, sent?: number): Promise<AtomFeed> {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new FilehavenConnectionError(`the answer from ${new URL(response.url || this.server).origin} was cut off`, { cause: error });
    }
    const feed = readFeed(text);
    if (feed?.webUrl) this.webUrl = feed.webUrl.replace(/\/+$/, '');
    if (!response.ok || feed?.title === 'Error') throw refusalOf(response, feed, text, { url: response.url || this.server, bytes: sent });
    if (!feed)
      throw new FilehavenApiError(
        'errorUnexpectedResponse',
        response.status,
        `the answer from ${this.server} is not an Atom feed (is --server the filehaven API?)`,
      );
    return feed;
  }
}

/** The error an answer carries: the Atom error entry (API.md 3), else one named by its status. */
export function errorOf(response: Pick<Response, 'status' | 'headers'>, feed: AtomFeed | null): FilehavenApiError {
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  const entry = feed?.title === 'Error' ? feed.entries[0] : undefined;
  const code = entry ? childText(entry, 'title') : undefined;
  if (entry && code && isApiErrorCode(code)) return new FilehavenApiError(code, response.status, childText(entry, 'content') ?? code, retryAfter);
  return statusError(response.status, retryAfter);
}

/**
 * The error of a refused API request. filehaven answers every API request in Atom (API.md
 * 3), so a refusal without an Atom error is not the site's own: a proxy or gateway in
 * front of it answered (nginx's 413 for a body over client_max_body_size, Cloudflare's
 * 413 past 100 MB, a 502 page), and the error says so instead of reading a SPEC meaning
 * into the status. `sent` is the refused request: where it went and its body size.
 */
export function refusalOf(
  response: Pick<Response, 'status' | 'headers'>,
  feed: AtomFeed | null,
  body: string,
  sent: { url: string; bytes?: number },
): FilehavenApiError {
  if (feed?.title === 'Error') return errorOf(response, feed);
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  let origin = sent.url;
  try {
    origin = new URL(sent.url).origin;
  } catch {}
  // The page's own words, when it has a title ("413 Request Entity Too Large").
  const title = /<title>([^<]{1,120})<\/title>/i.exec(body)?.[1]?.trim();
  const page = title ? `: "${title}"` : '';
  if (response.status === 413) {
    const size = sent.bytes === undefined ? 'a request' : `a request of ${sent.bytes} bytes (${mebibytes(sent.bytes)})`;
    return new FilehavenApiError(
      'errorUnexpectedResponse',
      413,
      `the proxy in front of ${origin} refused ${size} (HTTP 413, not filehaven's answer${page}): its body limit is below that size`,
      retryAfter,
    );
  }
  return new FilehavenApiError(
    'errorUnexpectedResponse',
    response.status,
    `HTTP ${response.status} from ${origin} is not filehaven's answer (no Atom error): a proxy or gateway in front of the site answered${page}`,
    retryAfter,
  );
}

/** Bytes in MiB with one decimal, for messages (the SDK has no formatter of its own). */
function mebibytes(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

/**
 * An error for an answer without an Atom error body: the public download pages answer
 * people in HTML (404 unknown or deleted, 410 blocked, 429 too many downloads at once).
 */
export function statusError(status: number, retryAfter?: number): FilehavenApiError {
  if (status === 404) return new FilehavenApiError('errorFileNotFound', status, 'File does not exist or is deleted');
  if (status === 410) return new FilehavenApiError('errorFileInNoDownloadedStatus', status, 'File is not available (blocked) or is deleted');
  if (status === 429) return new FilehavenApiError('errorRateLimited', status, 'Too many requests or downloads at once; try again later', retryAfter);
  return new FilehavenApiError('errorUnexpectedResponse', status, `unexpected answer: HTTP ${status}`, retryAfter);
}
