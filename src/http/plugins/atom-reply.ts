import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../../domain/errors.js';
import { atomFeed, entryEl, textEl, type XmlElement } from '../atom.js';
import type { HttpContext } from '../context.js';

export const ATOM_TYPE = 'application/atom+xml; charset=utf-8';

/** The request path without its query string: the feed's self link (API.md 3). */
export function requestPath(request: FastifyRequest): string {
  // An absolute-form target (`GET http://host/account`) still has just its path here.
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(request.url) ? new URL(request.url).pathname : request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Sends one Atom feed in the golden format. */
export function sendAtom(
  context: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  title: string,
  entries: XmlElement[],
  links?: XmlElement[],
): FastifyReply {
  const path = requestPath(request);
  const body = atomFeed({
    title,
    id: `${context.links.baseUrl}${path}`,
    updated: new Date(context.services.clock()),
    author: context.links.webUrl,
    namespace: context.links.namespace,
    selfPath: path,
    entries,
    links,
  });
  return reply.code(status).type(ATOM_TYPE).send(body);
}

/** Sends an ApiError in the Atom error shape: feed title Error, entry title the code. */
export function sendAtomError(context: HttpContext, request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  reply.headers(error.headers);
  return sendAtom(context, request, reply, error.status, 'Error', [
    entryEl(textEl('title', error.code), { name: 'content', attrs: [['type', 'text']], text: error.message }),
  ]);
}
