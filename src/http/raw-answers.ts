import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errors } from '../domain/errors.js';
import type { HttpContext } from './context.js';
import { ATOM_TYPE, atomErrorFeed, rawAtomErrorResponse } from './plugins/atom-reply.js';
import { pathSegments } from './request-target.js';

/*
 * Answers Node's HTTP server would give by itself, in its own shapes (JSON from Fastify's
 * default, a bodiless 417, a dropped CONNECT), moved into the API's Atom error catalogue
 * (API.md 3: every API answer is the Atom error feed).
 */

/** The subset of Node's client errors this handler looks at. */
interface ClientError extends Error {
  code?: string;
}

/**
 * Answers requests that Node's HTTP parser refused before any route saw them (bad
 * request line, header syntax, chunk sizes, oversized headers, a head that did not
 * arrive within the headers timeout) in the API's Atom error shape: Fastify's default
 * answers these in JSON, which API clients cannot read (API.md 3). The path is unknown
 * at this point, so the feed is the root's.
 */
export function answerClientError(context: HttpContext, error: ClientError, socket: Socket, log: (message: string) => void): void {
  // A reset: nobody is left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW' ? errors.headersTooLarge() : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? errors.requestTimeout() : errors.malformedHttp();
  log(`client error ${error.code ?? 'unknown'} answered ${apiError.status}`);
  // As Node does: never write into the middle of a response already under way.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(rawAtomErrorResponse(context, apiError));
  socket.destroySoon();
}

/** The self path of a request Node handles before any route: the path as sent, no query. */
const pathOf = (request: IncomingMessage) => `/${pathSegments(request.url ?? '/').join('/')}`;

/**
 * An `Expect` header other than `100-continue`: 417 (RFC 9110 10.1.1), in Atom. CONNECT
 * (a tunnel request, never a request for a path here): 405, in Atom, connection closed.
 */
export function registerRawAnswers(server: Server, context: HttpContext): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const error = errors.expectationFailed();
    const body = atomErrorFeed(context, error, pathOf(request));
    response.writeHead(error.status, { 'Content-Type': ATOM_TYPE, 'Content-Length': Buffer.byteLength(body), Connection: 'close' }).end(body);
  });
  server.on('connect', (request: IncomingMessage, socket: Socket) => {
    socket.on('error', () => {});
    socket.end(rawAtomErrorResponse(context, errors.methodNotAllowed(['GET', 'HEAD', 'POST', 'PUT', 'DELETE']), pathOf(request)));
  });
}
