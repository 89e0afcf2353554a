import assert from 'node:assert/strict';
import http from 'node:http';
import { atomError } from './server.js';
import { type ParsedDocument, parseAtom } from './xml.js';

/** A response read to the end. */
export interface ReadResponse {
  status: number;
  headers: Headers;
  body: string;
}

/** Reads a fetch Response fully. */
export async function read(response: Response): Promise<ReadResponse> {
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/**
 * A request with the path sent byte for byte (fetch normalises `..` and friends away),
 * through node:http. Headers are returned as a Headers object, like fetch.
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  rawPath: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<ReadResponse> {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const request = http.request({ host: url.hostname, port: url.port, method, path: rawPath, headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        resolve({ status: response.statusCode ?? 0, headers, body });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

/**
 * Asserts an Atom error response: the status, the code, the Atom content type, a
 * well-formed body, and the message (exact string or pattern) when given.
 */
export function assertAtomError(response: ReadResponse, status: number, code: string, message?: string | RegExp): { code: string; message: string } {
  const context = `${response.status} ${response.body}`;
  assert.equal(response.status, status, context);
  assert.equal(response.headers.get('content-type'), 'application/atom+xml; charset=utf-8', context);
  parseAtom(response.body);
  const error = atomError(response.body);
  assert.ok(error, `not an Atom error: ${context}`);
  assert.equal(error.code, code, context);
  if (typeof message === 'string') assert.equal(error.message, message, context);
  else if (message) assert.match(error.message, message, context);
  assert.doesNotMatch(response.body, /\bat .+\.(ts|js):\d+/, 'no stack trace in an error');
  return error;
}

/** Asserts a successful Atom response and returns its feed element, parsed. */
export function assertAtomOk(response: ReadResponse, status: number, title: string): ParsedDocument {
  const context = `${response.status} ${response.body}`;
  assert.equal(response.status, status, context);
  assert.equal(response.headers.get('content-type'), 'application/atom+xml; charset=utf-8', context);
  const feed = parseAtom(response.body).feed;
  assert.equal(feed.title, title, context);
  assert.ok(feed.entry && !Array.isArray(feed.entry), `exactly one entry: ${context}`);
  return feed;
}

/** An element with `<link>` children, as the parser gives them: one map of attributes, or an array of them. */
type AtomLinks = { link?: Record<string, string> | Array<Record<string, string>> };

/** The `<link>` children of an entry as attribute maps (`@href`, `@rel`, ...). */
export function linksOf(entry: AtomLinks): Array<Record<string, string>> {
  const links = entry.link;
  if (links === undefined) return [];
  return Array.isArray(links) ? links : [links];
}

/** The entry link with this title, failing when there is none. */
export function linkTitled(entry: AtomLinks, title: string): Record<string, string> {
  const link = linksOf(entry).find((l) => l['@title'] === title);
  assert.ok(link, `no link titled ${title} in ${JSON.stringify(entry)}`);
  return link;
}

/** A url-encoded form body. */
export function form(fields: Record<string, string>): URLSearchParams {
  return new URLSearchParams(fields);
}

/** A form with `files[0]`, `files[1]`, ... (SPEC.md "PUT /folders/<id>;files") and extra fields. */
export function filesForm(ids: string[], extra: Record<string, string> = {}): URLSearchParams {
  const body = new URLSearchParams(extra);
  for (const [index, id] of ids.entries()) body.append(`files[${index}]`, id);
  return body;
}

/**
 * GET of a public URL on a connection closed afterwards. (A kept-alive connection whose
 * streamed response ends just after the client has all bytes is skipped by the server's
 * close, which then waits for the keep-alive timeout.)
 */
export function download(url: string): Promise<ReadResponse> {
  const parsed = new URL(url);
  return rawRequest(parsed.origin, 'GET', `${parsed.pathname}${parsed.search}`);
}
