import type { Socket } from 'node:net';
import { errors } from '../domain/errors.js';
import type { HttpContext } from './context.js';
import { rawAtomErrorResponse } from './plugins/atom-reply.js';

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
