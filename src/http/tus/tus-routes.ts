import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UPLOAD_ID } from '../../blob/resumable-storage.js';
import { errors } from '../../domain/errors.js';
import { sendAtomError } from '../plugins/atom-reply.js';
import { handleDelete } from './delete-handler.js';
import { handleHead } from './head-handler.js';
import { handleOptions } from './options-handler.js';
import { handlePatch } from './patch-handler.js';
import { handlePost } from './post-handler.js';
import { createTusEndpoint, type TusContext, type TusEndpoint } from './tus-endpoint.js';
import { apiErrorOf, isKnownFailure } from './tus-errors.js';
import type { TusHandler, TusItemHandler } from './tus-handler.js';
import { MAX_CHUNK_SIZE_HEADER, UPLOADS_PATH } from './tus-headers.js';

/** The collection's handlers, by method: tus's creation and discovery. */
const COLLECTION: Record<string, TusHandler> = { POST: handlePost, OPTIONS: handleOptions };
/** An upload's handlers, by method. */
const ITEM: Record<string, TusItemHandler> = { HEAD: handleHead, PATCH: handlePatch, DELETE: handleDelete, OPTIONS: handleOptions };
/** Every method the two URLs are routed for: the others are answered 405 here, in the API's shape. */
const ROUTED = [...new Set([...Object.keys(COLLECTION), ...Object.keys(ITEM), 'GET', 'PUT', 'POST'])];

/**
 * tus 1.0 at {base_url}/uploads with @tus/server, for API clients (the `Authorization` API
 * key) and the site's uploader (the session cookie plus its CSRF token in
 * `Filehaven-Csrf`). One handler per method (./*-handler.ts); they only adapt: who calls,
 * whose upload it is, and answers in the API's shape (Atom errors with the SPEC codes; the
 * finishing request carries the file's id and links as headers, and the `File upload
 * result` feed of POST /files when asked). The use case is ResumableUploadsService, which
 * makes each finished upload a file through the one upload use case (uploads/).
 */
export function registerTusRoutes(app: FastifyInstance, context: TusContext): void {
  const endpoint = createTusEndpoint(app, context);
  const config = { streamBody: true };
  app.route({ method: ROUTED, url: UPLOADS_PATH, config, handler: dispatch(endpoint, COLLECTION, () => undefined) });
  app.route({ method: ROUTED, url: `${UPLOADS_PATH}/:id`, config, handler: dispatch(endpoint, ITEM, uploadIdOf) });
}

/** The upload of the path: errorFileNotFound for an id no server could have made, before anything else looks at it. */
function uploadIdOf(request: FastifyRequest): string {
  const { id } = request.params as { id: string };
  if (!UPLOAD_ID.test(id)) throw errors.uploadNotFound();
  return id;
}

/**
 * Finds the method's handler (405 errorMethodNotAllowed naming the others), checks the
 * path's upload id, and answers known failures (ours, and tus's own refusals thrown
 * outside its handlers, such as its lock's 423) as Atom errors with tus's version header.
 */
function dispatch<Id extends string | undefined>(
  endpoint: TusEndpoint,
  handlers: Record<string, (endpoint: TusEndpoint, request: FastifyRequest, reply: FastifyReply, id: Id) => Promise<FastifyReply>>,
  idOf: (request: FastifyRequest) => Id,
) {
  const { context } = endpoint;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const handler = handlers[request.method];
      if (!handler) throw errors.methodNotAllowed(Object.keys(handlers));
      const id = idOf(request);
      reply.header(MAX_CHUNK_SIZE_HEADER, String(context.services.config.uploadChunkSize));
      return await handler(endpoint, request, reply, id);
    } catch (error) {
      if (!isKnownFailure(error)) throw error;
      // tus answers every request with its version, errors too.
      reply.header('Tus-Resumable', '1.0.0');
      return sendAtomError(context, request, reply, apiErrorOf(error, context.services.config.maxFileSize, endpoint.logError));
    }
  };
}
