import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseBusyError } from '../../db/dialect.js';
import { ApiError, errors } from '../../domain/errors.js';
import type { HttpContext, RouteFlags } from '../context.js';
import { ClientGoneError } from '../multipart-upload.js';
import { isApiPath, isApiRequest, wantsHtml } from '../request-kind.js';
import { sendErrorPage } from '../web/layout.js';
import { sendAtomError } from './atom-reply.js';

/** The services this module calls. */
type Context = HttpContext<'clock'>;

const PAGE_TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  410: 'Gone',
  413: 'Too large',
  429: 'Too many requests',
  500: 'Something went wrong',
  503: 'Busy',
};

/**
 * What a client refused for a busy database pool is told to wait: the queue it waited in
 * drains in seconds once the burst that filled it is served.
 */

/** Maps anything thrown to an ApiError; unknown errors are logged and become a bare 500. */
function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ClientGoneError) {
    request.log.info('client disconnected during upload');
    return errors.uploadMalformed('the client disconnected');
  }
  const status = (error as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // An upload whose body Fastify parsed or refused (JSON, too large) was not multipart (API.md 3).
    if ((request.routeOptions.config as RouteFlags | undefined)?.streamBody) return errors.uploadMalformed('expected a multipart/form-data body');
    // Fastify's own 4xx (body too large, bad content type): their messages carry no internals.
    return new ApiError('errorBadRequest', status, (error as Error).message);
  }
  if (error instanceof DatabaseBusyError) {
    // Load, not a fault: one line, no stack; the operator's remedy is in docs/operating.md.
    request.log.warn(`answered 503: ${error.message} (see --database-pool-size)`);
    return errors.serverBusy();
  }
  request.log.error(error, 'unhandled error');
  return errors.internal();
}

/**
 * Whether an error is shown as a page: on web routes, and for a browser's request that
 * matched no route (an unknown page, a method no page has) outside the API's paths.
 */
function wantsPage(request: FastifyRequest): boolean {
  // A target that is no path (`*`) may still land on a route; it is nobody's page.
  if (!request.url.startsWith('/')) return false;
  // An API path answers Atom whatever route caught it: `/account/x` fits the web's
  // `/:id/:name` pattern, and its body errors came back as the web's HTML pages (API.md 3).
  if (isApiPath(request.url)) return false;
  if ((request.routeOptions.config as RouteFlags | undefined)?.web) return true;
  return request.is404 && wantsHtml(request) && !isApiRequest(request);
}

/**
 * One error path for the whole app: Atom for the API (API.md 3), pages for web routes.
 * No stack trace ever reaches a client.
 */
export function registerErrorHandling(app: FastifyInstance, context: Context): void {
  app.setErrorHandler((error, request, reply: FastifyReply) => {
    const apiError = toApiError(error, request);
    if (reply.sent || reply.raw.headersSent) {
      reply.raw.destroy();
      return;
    }
    // Refused before its body was read (an upload without a key, a limit): the rest is
    // never read, so the connection closes after the answer instead of idling in
    // keep-alive with a body half sent.
    if (!request.raw.complete) reply.header('Connection', 'close');
    if (wantsPage(request)) {
      const status = apiError.status;
      const message =
        status === 503
          ? 'The server is busy just now. Please try again in a few seconds.'
          : status >= 500
            ? 'Something went wrong on our side, so this page cannot be shown.'
            : apiError.message;
      return sendErrorPage(reply.headers(apiError.headers), status, PAGE_TITLES[status] ?? 'Error', message);
    }
    return sendAtomError(context, request, reply, apiError);
  });

  // API.md 3: an unknown path is errorNotFound in Atom; browsers get the page instead,
  // except on API paths, which answer Atom whatever the method and Accept.
  app.setNotFoundHandler((request, reply) => {
    if (wantsPage(request)) return sendErrorPage(reply, 404, 'Not found', 'There is nothing at this address.');
    return sendAtomError(context, request, reply, errors.notFound());
  });
}
