import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { Server } from '@tus/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NodeRequest } from 'srvx/node';
import { UPLOAD_ID } from '../../blob/resumable-storage.js';
import { ApiError, errors } from '../../domain/errors.js';
import type { Account, FileRecord } from '../../domain/types.js';
import type { FinishedUpload } from '../../resumable/resumable-uploads-service.js';
import { entryEl } from '../atom.js';
import type { HttpContext } from '../context.js';
import type { Links } from '../links.js';
import { apiKeyOf, requireAccount } from '../plugins/api-auth.js';
import { sendAtom, sendAtomError } from '../plugins/atom-reply.js';
import { SESSION_COOKIE } from '../web/session-plugin.js';
import { createdFileEntry } from './file-entries.js';
import { CHECKSUM_ALGORITHMS, type VerifiedBody, verifyChecksum } from './upload-checksum.js';

/** Where resumable uploads live, under {base_url}. */
export const UPLOADS_PATH = '/uploads';

/** The header a page of the site sends its session's CSRF token in (the site has no API key). */
export const CSRF_HEADER = 'Filehaven-Csrf';

/** Headers that tell a client which file its finished upload became. */
export const FILE_HEADERS = { id: 'Filehaven-File-Id', download: 'Filehaven-Download-Link', delete: 'Filehaven-Delete-Link' } as const;

/**
 * The largest PATCH body a client should send (--upload-chunk-size), on every answer of
 * the endpoint (OPTIONS, creation, HEAD...): a proxy's body limit below the largest file
 * would refuse a file sent in one PATCH. The name is agreed with the site's uploader.
 */
export const MAX_CHUNK_SIZE_HEADER = 'Filehaven-Max-Chunk-Size';

/** What one request's hooks share: the caller, and what became of the upload. */
interface UploadRequest {
  account: Account;
  /** The upload the route checked the caller may use (from the path, query excluded); undefined for a creation. */
  id?: string;
  /** Set when this request created an upload (its row and reservation). */
  created?: string;
  /** Signed in through the site (a session, not an API key): the upload's URL is on {web_url}, the page's origin. */
  viaSite: boolean;
  /** The error to answer with, in the Atom shape, instead of tus's plain text. */
  error?: ApiError;
  /** Set when this request finished the upload. */
  finished?: FinishedUpload;
  /** The status of the answer that finishes the upload (finishedStatus). */
  finishStatus: 201 | 200 | 204;
}

const ITEM_METHODS = ['HEAD', 'PATCH', 'DELETE', 'OPTIONS'];
const COLLECTION_METHODS = ['POST', 'OPTIONS'];

/**
 * tus 1.0 at {base_url}/uploads (core, creation, creation-with-upload, termination,
 * expiration, checksum) with @tus/server, for API clients (the `Authorization` API key) and the
 * site's uploader (the session cookie plus its CSRF token in `Filehaven-Csrf`). This
 * module only adapts: who calls, whose upload it is, and answers in the API's shape
 * (Atom errors with the SPEC codes; the finishing request carries the file's id and links
 * as headers, and the `File upload result` feed of POST /files when asked: finishedStatus).
 * The use case is ResumableUploadsService.
 */
export function registerUploadRoutes(app: FastifyInstance, context: HttpContext): void {
  const { services, links } = context;
  const { service, dataStore, locker } = services.resumable;
  const requests = new WeakMap<Request, UploadRequest>();
  const stateOf = (request: Request): UploadRequest => {
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
    // Locations are absolute under {base_url} (under {web_url} for the site's uploader, whose
    // page may only talk to its own origin), whatever Host or proxy headers say.
    generateUrl: (request, { id }) => `${requests.get(request)?.viaSite ? links.webUrl : links.baseUrl}${UPLOADS_PATH}/${id}`,
    namingFunction: () => service.newId(),
    // The id the route checked, never tus's own reading of the URL (which would take an id
    // from a query string past the ownership check).
    getFileIdFromRequest: (request) => requests.get(request)?.id,
    // One string: @tus/server appends the list to its own with ', ' but joins ours with ','.
    exposedHeaders: [[FILE_HEADERS.id, FILE_HEADERS.download, FILE_HEADERS.delete, MAX_CHUNK_SIZE_HEADER, 'Retry-After'].join(', ')],
    allowedHeaders: [CSRF_HEADER],
    onUploadCreate: async (request, upload) => {
      const metadata = upload.metadata ?? {};
      const state = stateOf(request);
      state.created = upload.id;
      await service.create(state.account, upload.id, {
        length: upload.size ?? 0,
        filename: metadata.filename ?? undefined,
        folderId: metadata.folder ?? undefined,
      });
      return {};
    },
    onUploadFinish: async (request, upload) => {
      const state = stateOf(request);
      state.finished = await service.finish(state.account, upload.id);
      return { status_code: state.finishStatus };
    },
    onResponseError: (request, error) => {
      const state = requests.get(request);
      if (state) state.error = apiErrorOf(error, services.config.maxFileSize, logError);
      return undefined;
    },
  });
  const handle = (collection: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const id = collection ? undefined : (request.params as { id: string }).id;
    try {
      const allowed = collection ? COLLECTION_METHODS : ITEM_METHODS;
      if (!allowed.includes(request.method)) throw errors.methodNotAllowed(allowed);
      if (id !== undefined && !UPLOAD_ID.test(id)) throw errors.uploadNotFound();
      reply.header(MAX_CHUNK_SIZE_HEADER, String(services.config.uploadChunkSize));
      // OPTIONS is tus's discovery (and CORS preflight): open to anyone.
      const caller = request.method === 'OPTIONS' ? null : await callerOf(context, request);
      const account = caller?.account ?? null;
      let verified: VerifiedBody | null = null;
      if (account && id !== undefined) {
        const record = await service.owned(account, id);
        if (record.fileId !== null) return await answerStored(context, request, reply, account, id, record.length);
        if (request.method === 'PATCH') {
          await service.beforeWrite(account, record);
          const checksum = request.headers['upload-checksum'];
          const offset = Number(request.headers['upload-offset']);
          if (typeof checksum === 'string') {
            // A wrong offset is told before a byte is spooled (tus checks it again, locked).
            const stored = await dataStore.getUpload(id);
            if (offset !== stored.offset) throw new ApiError('errorUploadFaild', 409, 'Upload failed: Upload-Offset conflict');
            verified = await verifyChecksum(request.raw, checksum, record.length - stored.offset);
          }
        }
      }
      let response: Response;
      const state: UploadRequest = { account: account ?? ({} as Account), viaSite: caller?.viaSite ?? false, id, finishStatus: finishedStatus(request) };
      try {
        const webRequest = verified ? spooledRequest(request, verified) : new NodeRequest({ req: request.raw, res: reply.raw });
        requests.set(webRequest, state);
        response = await tus.handleWeb(webRequest);
      } finally {
        await verified?.discard();
      }
      if (request.method === 'OPTIONS') reply.header('Tus-Checksum-Algorithm', CHECKSUM_ALGORITHMS.join(','));
      copyHeaders(response, reply);
      const body = await response.text();
      if (state.error || response.status >= 400) {
        // A creation that failed after its upload was recorded (the store refused, the
        // body was cut): the client has no URL to resume, so nothing of it may stay.
        if (state.created && !state.finished) await service.terminate(state.created).catch(logError);
        return sendAtomError(context, request, reply, state.error ?? apiErrorOf({ status_code: response.status, body }, services.config.maxFileSize, logError));
      }
      if (state.finished) return sendFinished(context, request, reply, state.finished, state.finishStatus);
      if (account && id !== undefined && request.method === 'HEAD' && finishedOffsets(response)) {
        // The last byte is stored but no file was made (a server died in between): make it
        // now. This answer is the one that stored it, so it shows the delete link.
        const finished = await service.finish(account, id);
        reply.headers({ 'Cache-Control': 'no-store', ...fileHeaders(links, finished.file, finished.deleteSecret) });
      }
      reply.code(response.status);
      return body === '' ? reply.send() : reply.send(body);
    } catch (error) {
      // tus's own refusals (its lock's 423) reach here from a finish outside tus's handlers.
      const known =
        error instanceof ApiError
          ? error
          : typeof (error as { status_code?: unknown } | null)?.status_code === 'number'
            ? apiErrorOf(error, services.config.maxFileSize, logError)
            : null;
      if (!known) throw error;
      // tus answers every request with its version, errors too.
      reply.header('Tus-Resumable', '1.0.0');
      return sendAtomError(context, request, reply, known);
    }
  };

  const config = { streamBody: true };
  app.route({ method: [...new Set([...COLLECTION_METHODS, ...ITEM_METHODS, 'GET', 'PUT'])], url: UPLOADS_PATH, config, handler: handle(true) });
  app.route({
    method: [...new Set([...COLLECTION_METHODS, ...ITEM_METHODS, 'GET', 'PUT', 'POST'])],
    url: `${UPLOADS_PATH}/:id`,
    config,
    handler: handle(false),
  });
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

/** The caller: an API key, or a signed-in browser whose request carries its session's CSRF token. */
async function callerOf(context: HttpContext, request: FastifyRequest): Promise<{ account: Account; viaSite: boolean }> {
  if (apiKeyOf(request) !== undefined) return { account: await requireAccount(context, request), viaSite: false };
  const token = request.cookies?.[SESSION_COOKIE];
  const session = token ? await context.services.sessions.resume(token) : null;
  if (!session) throw errors.wrongApiKey();
  if (!context.services.sessions.checkCsrf(session, request.headers[CSRF_HEADER.toLowerCase()])) {
    throw errors.permissionDenied(`A request from the site must carry the page's CSRF token in ${CSRF_HEADER}`);
  }
  return { account: session.account, viaSite: true };
}

/** An upload that already became a file: HEAD and PATCH tell which, DELETE only forgets the upload. */
async function answerStored(
  context: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  account: Account,
  id: string,
  length: number,
): Promise<FastifyReply> {
  const { services, links } = context;
  reply.header('Tus-Resumable', '1.0.0');
  if (request.method === 'DELETE') {
    await services.resumable.service.terminate(id);
    return reply.code(204).send();
  }
  const finished = await services.resumable.service.finish(account, id);
  if (request.method === 'PATCH') {
    if (Number(request.headers['upload-offset']) !== length)
      throw new ApiError('errorUploadFaild', 409, 'Upload failed: the upload is complete; its Upload-Offset is its length');
    reply.header('Upload-Offset', String(length));
    return sendFinished(context, request, reply, finished, finishedStatus(request));
  }
  return reply
    .code(200)
    .headers({ 'Upload-Offset': String(length), 'Upload-Length': String(length), 'Cache-Control': 'no-store', ...fileHeaders(links, finished.file, null) })
    .send();
}

/**
 * The status of the answer that finishes an upload. tus 1.0 answers every successful
 * PATCH with 204 No Content, and strict clients (go-tus) take anything else for a
 * failure; the file's id and links are in headers. The `File upload result` feed of
 * POST /files comes, with 200, to a client that asks for it: `Accept` naming
 * application/atom+xml, or `Prefer: return=representation` (RFC 7240). A creation that
 * carried the whole file is still a creation: 201 with its Location (tus-js-client
 * requires it), and the feed, as ever.
 */
function finishedStatus(request: FastifyRequest): 201 | 200 | 204 {
  if (request.method === 'POST') return 201;
  return acceptsAtom(request.headers.accept) || prefersRepresentation(request.headers.prefer) ? 200 : 204;
}

/** Whether an Accept header names application/atom+xml itself (not through a wildcard), with a q above 0. */
function acceptsAtom(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    return type === 'application/atom+xml' && !params.some((param) => /^q\s*=\s*0(\.0*)?$/.test(param));
  });
}

/** Whether a Prefer header (RFC 7240; repeated headers arrive joined by commas) holds `return=representation`. */
function prefersRepresentation(prefer: string | string[] | undefined): boolean {
  const values = Array.isArray(prefer) ? prefer : prefer === undefined ? [] : [prefer];
  return values.some((value) => value.split(',').some((preference) => /^return\s*=\s*"?representation"?$/i.test(preference.split(';')[0]!.trim())));
}

/** The answer of the request that finished an upload: the file's id and links as headers, and the `File upload result` feed of POST /files unless 204. */
function sendFinished(context: HttpContext, request: FastifyRequest, reply: FastifyReply, finished: FinishedUpload, status: 201 | 200 | 204): FastifyReply {
  const { links } = context;
  // The delete link is a secret, shown this once: no cache may keep it.
  reply.headers({ 'Cache-Control': 'no-store', ...fileHeaders(links, finished.file, finished.deleteSecret) });
  if (status === 204) return reply.code(204).send();
  if (request.method === 'PATCH' && prefersRepresentation(request.headers.prefer)) reply.header('Preference-Applied', 'return=representation');
  return sendAtom(context, request, reply, status, 'File upload result', [entryEl(...createdFileEntry(links, finished.file, finished.deleteSecret, 'self'))]);
}

function fileHeaders(links: Links, file: FileRecord, deleteSecret: string | null): Record<string, string> {
  const headers: Record<string, string> = { [FILE_HEADERS.id]: file.id, [FILE_HEADERS.download]: links.download(file) };
  if (deleteSecret !== null) headers[FILE_HEADERS.delete] = links.delete(file, deleteSecret);
  return headers;
}

/** Whether a tus HEAD answer says every byte is stored. */
function finishedOffsets(response: Response): boolean {
  const offset = response.headers.get('upload-offset');
  return offset !== null && offset === response.headers.get('upload-length');
}

/** tus's headers onto the reply; the body is sent by Fastify, which sets its own length. */
function copyHeaders(response: Response, reply: FastifyReply): void {
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'content-type') reply.header(name, value);
  });
}

/**
 * Any failure as an ApiError with the SPEC code a client of the API expects: ours as
 * they are, tus's by status (its plain-text reason kept as the message), anything else a
 * logged 500 that says nothing of its cause.
 */
function apiErrorOf(error: unknown, maxFileSize: number, log: (cause: unknown) => unknown): ApiError {
  if (error instanceof ApiError) return error;
  const tus = error as { status_code?: unknown; body?: unknown } | null;
  if (tus && typeof tus.status_code === 'number') {
    const status = tus.status_code;
    const reason = typeof tus.body === 'string' && tus.body.trim() !== '' ? tus.body.trim() : (STATUS_CODES[status] ?? 'Error');
    if (status === 404 || status === 410) return errors.uploadNotFound();
    if (status === 413)
      return new ApiError('errorFileSize', 413, reason === 'Maximum size exceeded' ? errors.fileSize(maxFileSize).message : `Upload failed: ${reason}`);
    if (status >= 500 && status !== 501) {
      log(error);
      return errors.uploadStorage();
    }
    return new ApiError('errorUploadFaild', status, `Upload failed: ${reason}`);
  }
  log(error);
  return errors.uploadStorage();
}
