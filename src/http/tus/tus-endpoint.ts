import { Readable } from 'node:stream';
import { Server } from '@tus/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../../domain/errors.js';
import type { Account } from '../../domain/types.js';
import type { FinishedUpload } from '../../uploads/resumable-uploads-service.js';
import type { HttpContext } from '../context.js';
import { EXPIRES_HEADER } from '../expires-header.js';
import { SHARE_PASSWORD_HEADER } from '../link-credentials.js';
import { sendAtomError } from '../plugins/atom-reply.js';
import { nodeBodyRequest } from './node-body-request.js';
import { type FinishStatus, sendFinished } from './tus-answers.js';
import type { TusCaller } from './tus-caller.js';
import { apiErrorOf } from './tus-errors.js';
import { CSRF_HEADER, FILE_HEADERS, MAX_CHUNK_SIZE_HEADER, UPLOADS_PATH } from './tus-headers.js';
import type { VerifiedBody } from './upload-checksum.js';

/** Our headers a page of another origin may read on tus's answers, besides tus's own (@tus/utils HEADERS). */
export const OWN_EXPOSED_HEADERS = [FILE_HEADERS.id, FILE_HEADERS.download, FILE_HEADERS.delete, EXPIRES_HEADER, MAX_CHUNK_SIZE_HEADER, 'Retry-After'];

/** The services the tus handlers call, and no others. */
export type TusContext = HttpContext<'accounts' | 'clock' | 'config' | 'resumable' | 'sessions' | 'uploadRequests'>;

/** What one request's tus hooks share: the caller, and what became of the upload. */
export interface TusRequestState {
  account: Account;
  /** The upload the handler checked the caller may use (from the path, query excluded); undefined for a creation. */
  id?: string;
  /** Set when this request created an upload (its row and reservation). */
  created?: string;
  /** Signed in through the site: the upload's URL is on {web_url}, the page's origin. */
  viaSite: boolean;
  /** An upload into this upload request (issue 25): its folder, and answers that lead nowhere into the owner's account. */
  request?: { id: string; folderId: string | null };
  /** The error to answer with, in the Atom shape, instead of tus's plain text. */
  error?: ApiError;
  /** Set when this request finished the upload. */
  finished?: FinishedUpload;
  /** The status of the answer that finishes the upload (finishedStatus). */
  finishStatus: FinishStatus;
}

/** What @tus/server made of a request: its answer (headers already on the reply), its body, and the hooks' state. */
export interface TusExchange {
  response: Response;
  body: string;
  state: TusRequestState;
}

/**
 * @tus/server behind the handlers of http/tus/: each handler checks who calls and whose
 * upload it is, then `pass`es the request to tus and `answer`s in the API's shape.
 */
export interface TusEndpoint {
  context: TusContext;
  /** Runs a request through @tus/server (`body`: a PATCH body spooled and verified against its checksum). */
  pass(
    request: FastifyRequest,
    reply: FastifyReply,
    caller: TusCaller | null,
    state: Pick<TusRequestState, 'id' | 'finishStatus'>,
    body?: VerifiedBody,
  ): Promise<TusExchange>;
  /**
   * The answer to an exchange: tus's failure as an Atom error (a creation that failed after
   * its upload was recorded is removed), the finishing answer, or tus's own.
   */
  answer(request: FastifyRequest, reply: FastifyReply, exchange: TusExchange): Promise<FastifyReply>;
  /** Logs a failure that is answered as a 500. */
  logError(cause: unknown): void;
}

/**
 * tus 1.0 (core, creation, creation-with-upload, termination, expiration, checksum, and
 * concatenation's partial uploads; the final is post-handler.ts's own) with
 * @tus/server over the resumable upload service's data store and lock. Locations are
 * absolute under {base_url} (under {web_url} for the site's uploader, whose page may only
 * talk to its own origin), whatever Host or proxy headers say.
 */
export function createTusEndpoint(app: FastifyInstance, context: TusContext): TusEndpoint {
  const { services, links } = context;
  const { service, dataStore, locker } = services.resumable;
  const requests = new WeakMap<Request, TusRequestState>();
  const stateOf = (request: Request): TusRequestState => {
    const state = requests.get(request);
    if (!state) throw new Error('a tus hook ran for a request this route did not see');
    return state;
  };
  const logError = (cause: unknown) => app.log.error({ err: cause }, 'a resumable upload request failed');

  const tus = new Server({
    path: UPLOADS_PATH,
    datastore: dataStore,
    locker,
    maxSize: services.config.maxFileSize,
    generateUrl: (request, { id }) => `${requests.get(request)?.viaSite ? links.webUrl : links.baseUrl}${UPLOADS_PATH}/${id}`,
    namingFunction: () => service.newId(),
    // The id the handler checked, never tus's own reading of the URL (which would take an
    // id from a query string past the ownership check).
    getFileIdFromRequest: (request) => requests.get(request)?.id,
    // One string: @tus/server appends the list to its own with ', ' but joins ours with ','.
    exposedHeaders: [OWN_EXPOSED_HEADERS.join(', ')],
    allowedHeaders: [CSRF_HEADER, SHARE_PASSWORD_HEADER],
    onUploadCreate: async (request, upload) => {
      const metadata = upload.metadata ?? {};
      const state = stateOf(request);
      state.created = upload.id;
      await service.create(state.account, upload.id, {
        length: upload.size ?? 0,
        filename: metadata.filename ?? undefined,
        expiresIn: metadata.expires_in ?? undefined,
        // Into a request: its folder, whatever the metadata says.
        folderId: state.request ? (state.request.folderId ?? undefined) : (metadata.folder ?? undefined),
        ...(state.request ? { requestId: state.request.id } : {}),
        // The handler let only `partial` through (a final never reaches tus).
        partial: request.headers.get('upload-concat') === 'partial',
      });
      return {};
    },
    onUploadFinish: async (request, upload) => {
      const state = stateOf(request);
      const finished = await service.finish(state.account, upload.id);
      // A partial upload becomes no file: tus's own answer (204) says it is whole.
      if (!finished) return {};
      state.finished = finished;
      return { status_code: state.finishStatus };
    },
    onResponseError: (request, error) => {
      const state = requests.get(request);
      if (state) state.error = apiErrorOf(error, services.config.maxFileSize, logError);
      return undefined;
    },
  });

  return {
    context,
    logError,
    async pass(request, reply, caller, { id, finishStatus }, body) {
      const state: TusRequestState = {
        account: caller?.account ?? ({} as Account),
        viaSite: caller?.viaSite ?? false,
        id,
        finishStatus,
        ...(caller?.request ? { request: { id: caller.request.id, folderId: caller.request.folderId } } : {}),
      };
      let response: Response;
      try {
        const webRequest = body ? spooledRequest(request, body) : nodeBodyRequest(request.raw, reply.raw);
        requests.set(webRequest, state);
        response = await tus.handleWeb(webRequest);
      } finally {
        await body?.discard();
      }
      copyHeaders(response, reply);
      return { response, body: await response.text(), state };
    },
    async answer(request, reply, { response, body, state }) {
      if (state.error || response.status >= 400) {
        // A creation that failed after its upload was recorded (the store refused, the
        // body was cut): the client has no URL to resume, so nothing of it may stay.
        if (state.created && !state.finished) await service.terminate(state.created).catch(logError);
        return sendAtomError(context, request, reply, state.error ?? apiErrorOf({ status_code: response.status, body }, services.config.maxFileSize, logError));
      }
      if (state.finished) return sendFinished(context, request, reply, state.finished, state.finishStatus, state.request !== undefined);
      reply.code(response.status);
      return body === '' ? reply.send() : reply.send(body);
    },
  };
}

/** A PATCH whose body was verified against its checksum, as tus reads it: from the spooled file. */
function spooledRequest(request: FastifyRequest, body: VerifiedBody): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name === 'upload-checksum') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  headers.set('content-length', String(body.size));
  return new Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, {
    method: request.method,
    headers,
    body: Readable.toWeb(body.open()) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
}

/** tus's headers onto the reply; the body is sent by Fastify, which sets its own length. */
function copyHeaders(response: Response, reply: FastifyReply): void {
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'content-type') reply.header(name, value);
  });
}
