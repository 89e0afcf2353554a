import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../../domain/errors.js';
import { atomFeed, entryEl, textEl, type XmlElement } from '../atom.js';
import type { HttpContext } from '../context.js';

/** The services this module calls. */
type Context = HttpContext<'clock'>;

export const ATOM_TYPE = 'application/atom+xml; charset=utf-8';

/** The request path without its query string: the feed's self link (API.md 3). */
export function requestPath(request: FastifyRequest): string {
  // An absolute-form target (`GET http://host/account`) still has just its path here.
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(request.url) ? new URL(request.url).pathname : request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The golden-format feed for a request path (API.md 3). */
function feedFor(context: Context, path: string, title: string, entries: XmlElement[], links?: XmlElement[]): string {
  return atomFeed({
    title,
    id: `${context.links.baseUrl}${path}`,
    updated: new Date(context.services.clock()),
    author: context.links.webUrl,
    namespace: context.links.namespace,
    selfPath: path,
    entries,
    links,
  });
}

const errorEntry = (error: ApiError) => entryEl(textEl('title', error.code), { name: 'content', attrs: [['type', 'text']], text: error.message });

/** The Atom error feed of an ApiError for a request path (API.md 3). */
export function atomErrorFeed(context: Context, error: ApiError, path: string): string {
  return feedFor(context, path, 'Error', [errorEntry(error)]);
}

/**
 * A whole HTTP/1.1 response carrying an ApiError, for answers written straight to a
 * socket where no request object exists (a request the HTTP parser refused, a
 * connection over its address's cap). The connection is closed after it.
 */
export function rawAtomErrorResponse(context: Context, error: ApiError, path = '/'): string {
  const body = atomErrorFeed(context, error, path);
  const headers = { ...error.headers, 'Content-Type': ATOM_TYPE, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n${head}\r\n${body}`;
}

/** Sends one Atom feed in the golden format. */
export function sendAtom(
  context: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  title: string,
  entries: XmlElement[],
  links?: XmlElement[],
): FastifyReply {
  const body = feedFor(context, requestPath(request), title, entries, links);
  return reply.code(status).type(ATOM_TYPE).send(body);
}

/** Sends an ApiError in the Atom error shape: feed title Error, entry title the code. */
export function sendAtomError(context: Context, request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  reply.headers(error.headers);
  return sendAtom(context, request, reply, error.status, 'Error', [errorEntry(error)]);
}
