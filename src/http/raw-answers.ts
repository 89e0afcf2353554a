import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errors } from '../domain/errors.js';
import type { HttpContext } from './context.js';
import { ATOM_TYPE, atomErrorFeed, rawAtomErrorResponse } from './plugins/atom-reply.js';
import { pathSegments } from './request-target.js';

/** The services this module calls. */
type Context = HttpContext<'clock'>;

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
export function answerClientError(context: Context, error: ClientError, socket: Socket, log: (message: string) => void): void {
  // A reset: nobody is left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? errors.headersTooLarge()
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? errors.requestTimeout()
        : errors.malformedHttp();
  // The request before the malformed bytes is still being answered (an upload storing,
  // a download streaming): its answer goes out whole, then the connection closes. Node
  // would write the error into that answer's place, and the upload's client would never
  // learn its file's id.
  const pending = (socket as Socket & { _httpMessage?: (ServerResponse & { req?: IncomingMessage }) | null })._httpMessage;
  if (pending && !pending.writableFinished && pending.req?.complete) {
    log(`client error ${error.code ?? 'unknown'} after a request still being answered: closing after it`);
    pending.shouldKeepAlive = false;
    pending.once('close', () => socket.destroySoon());
    return;
  }
  log(`client error ${error.code ?? 'unknown'} answered ${apiError.status}`);
  // The error is in the body of a request whose answer has begun: nothing can be added.
  if (socket.writable && !pending?.headersSent) socket.write(rawAtomErrorResponse(context, apiError));
  socket.destroySoon();
}

/** The self path of a request Node handles before any route: the path as sent, no query. */
const pathOf = (request: IncomingMessage) => `/${pathSegments(request.url ?? '/').join('/')}`;

/**
 * An `Expect` header other than `100-continue`: 417 (RFC 9110 10.1.1), in Atom. CONNECT
 * (a tunnel request, never a request for a path here): 405, in Atom, connection closed.
 */
export function registerRawAnswers(server: Server, context: Context): void {
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
