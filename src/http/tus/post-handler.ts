import { HEADERS, Metadata } from '@tus/utils';
import type { FastifyRequest } from 'fastify';
import { UPLOAD_ID } from '../../blob/resumable-storage.js';
import { errors } from '../../domain/errors.js';
import { finishedStatus, sendFinished } from './tus-answers.js';
import { callerOf, requestCallerOf, requestOfMetadata } from './tus-caller.js';
import { OWN_EXPOSED_HEADERS, type TusEndpoint } from './tus-endpoint.js';
import type { TusHandler } from './tus-handler.js';
import { UPLOADS_PATH } from './tus-headers.js';

/**
 * POST /uploads: tus's creation, and creation-with-upload. The upload is recorded with its
 * volume reserved (ResumableUploadsService.create, from tus's onUploadCreate); a body that
 * carries the whole file finishes it at once, answered 201 with the file. An upload into
 * an upload request names it in the metadata (`request`) and needs no API key: the
 * request's password or link cookie instead (issue 25).
 *
 * tus's concatenation: `Upload-Concat: partial` creates a partial upload (through tus, as
 * any creation); `Upload-Concat: final;<url> <url>...` makes those partials one file now
 * (ResumableUploadsService.concatenate), answered 201 with its Location and the file, as a
 * creation that carried the whole file is.
 */
export const handlePost: TusHandler = async (endpoint, request, reply) => {
  const concat = request.headers['upload-concat'];
  if (concat !== undefined) {
    if (concat === 'partial') {
      if (requestOfMetadata(request) !== undefined) throw intoRequestRefused();
    } else if (typeof concat === 'string' && concat.startsWith('final;')) {
      return handleFinal(endpoint, request, reply, concat.slice('final;'.length));
    } else {
      throw errors.uploadMalformed('Upload-Concat must be "partial" or "final;" followed by the partial uploads\' URLs');
    }
  }
  const requestId = requestOfMetadata(request);
  const caller = requestId === undefined ? await callerOf(endpoint.context, request) : await requestCallerOf(endpoint.context, request, requestId);
  return endpoint.answer(request, reply, await endpoint.pass(request, reply, caller, { finishStatus: finishedStatus(request) }));
};

/** A final upload: no body and no Upload-Length (tus: its length is its partials'), the file's name and folder in its metadata. */
const handleFinal = async (endpoint: TusEndpoint, request: FastifyRequest, reply: Parameters<TusHandler>[2], urls: string): Promise<ReturnType<TusHandler>> => {
  const { context } = endpoint;
  // As tus answers its own creations (no allowedOrigins: any origin), so a page elsewhere
  // that sent the partials can read the final's answer too, a refusal included.
  reply.headers({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': [...HEADERS, ...OWN_EXPOSED_HEADERS].join(', ') });
  if (requestOfMetadata(request) !== undefined) throw intoRequestRefused();
  const caller = await callerOf(context, request);
  const length = request.headers['content-length'];
  if ((length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined)
    throw errors.uploadMalformed("a final upload (Upload-Concat: final) carries no body: its bytes are its partial uploads'");
  if (request.headers['upload-length'] !== undefined || request.headers['upload-defer-length'] !== undefined)
    throw errors.uploadMalformed("a final upload (Upload-Concat: final) has no Upload-Length: its length is the sum of its partial uploads'");
  const partIds = urls
    .trim()
    .split(/ +/)
    .filter((url) => url !== '')
    .map(uploadIdOfUrl);
  const metadata = metadataOf(request);
  const id = context.services.resumable.service.newId();
  const finished = await context.services.resumable.service.concatenate(caller.account, id, partIds, {
    filename: metadata.filename ?? undefined,
    folderId: metadata.folder ?? undefined,
    expiresIn: metadata.expires_in ?? undefined,
  });
  reply.headers({
    'Tus-Resumable': '1.0.0',
    Location: `${caller.viaSite ? context.links.webUrl : context.links.baseUrl}${UPLOADS_PATH}/${finished.finalId}`,
    'Upload-Concat': `final;${urls.trim()}`,
  });
  return sendFinished(context, request, reply, finished, 201);
};

/** The upload a partial's URL names (absolute, or a path on this server). */
function uploadIdOfUrl(url: string): string {
  let path: string;
  try {
    path = new URL(url, 'http://server.invalid').pathname;
  } catch {
    path = '';
  }
  const prefix = `${UPLOADS_PATH}/`;
  const at = path.lastIndexOf(prefix);
  const id = at === -1 ? '' : path.slice(at + prefix.length);
  if (!UPLOAD_ID.test(id)) throw errors.uploadMalformed(`Upload-Concat names "${url.slice(0, 200)}", which is no upload URL of this server`);
  return id;
}

/** The creation's Upload-Metadata (tus 1.0: `key base64value` pairs, comma separated). */
function metadataOf(request: FastifyRequest): Record<string, string | null> {
  const header = request.headers['upload-metadata'];
  if (header === undefined) return {};
  try {
    return Metadata.parse(Array.isArray(header) ? header.join(',') : header);
  } catch {
    throw errors.uploadMalformed('Upload-Metadata is malformed (tus: comma-separated "key base64value" pairs)');
  }
}

function intoRequestRefused() {
  return errors.uploadMalformed('parallel uploads (Upload-Concat) into an upload request are not supported; send the file as one upload');
}
