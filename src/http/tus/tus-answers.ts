import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ResumableUploadRecord } from '../../db/repositories/repositories.js';
import type { FileRecord } from '../../domain/types.js';
import type { FinishedUpload } from '../../uploads/resumable-uploads-service.js';
import { isPartial, PARTIAL, partsOfFinal } from '../../uploads/upload-concat.js';
import { createdFileEntry } from '../api/file-entries.js';
import { entryEl, textEl } from '../atom.js';
import type { HttpContext } from '../context.js';
import { expiresHeaders } from '../expires-header.js';
import type { Links } from '../links.js';
import { sendAtom } from '../plugins/atom-reply.js';
import type { TusCaller } from './tus-caller.js';
import { FILE_HEADERS, UPLOADS_PATH } from './tus-headers.js';

/** The status of an answer that finishes an upload (finishedStatus). */
export type FinishStatus = 201 | 200 | 204;

/**
 * The status of the answer that finishes an upload. tus 1.0 answers every successful
 * PATCH with 204 No Content, and strict clients (go-tus) take anything else for a
 * failure; the file's id and links are in headers. The `File upload result` feed of
 * POST /files comes, with 200, to a client that asks for it: `Accept` naming
 * application/atom+xml, or `Prefer: return=representation` (RFC 7240). A creation that
 * carried the whole file is still a creation: 201 with its Location (tus-js-client
 * requires it), and the feed, as ever.
 */
export function finishedStatus(request: FastifyRequest): FinishStatus {
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
export function sendFinished(
  context: HttpContext<'clock'>,
  request: FastifyRequest,
  reply: FastifyReply,
  finished: FinishedUpload,
  status: FinishStatus,
  intoRequest = false,
): FastifyReply {
  const { links } = context;
  // The delete link is a secret, shown this once: no cache may keep it.
  reply.headers({
    'Cache-Control': 'no-store',
    ...(intoRequest ? requestFileHeaders(finished.file) : fileHeaders(links, finished.file, finished.deleteSecret)),
  });
  if (status === 204) return reply.code(204).send();
  if (request.method === 'PATCH' && prefersRepresentation(request.headers.prefer)) reply.header('Preference-Applied', 'return=representation');
  // Someone uploading into a request gets the file's id, name and size only, as from
  // POST /r/<id>: no link into the owner's account (issue 25).
  if (intoRequest) {
    const { file } = finished;
    return sendAtom(context, request, reply, status, 'Upload request upload', [
      entryEl(textEl('id', file.id), textEl('title', file.name), textEl('ed:size', file.size)),
    ]);
  }
  return sendAtom(context, request, reply, status, 'File upload result', [entryEl(...createdFileEntry(links, finished.file, finished.deleteSecret, 'self'))]);
}

/** The headers of a file an upload into a request became: its id only. */
export function requestFileHeaders(file: FileRecord): Record<string, string> {
  return { [FILE_HEADERS.id]: file.id };
}

/** The headers that name the file an upload became; the delete link only when the secret is known (the answer that stored it). */
export function fileHeaders(links: Links, file: FileRecord, deleteSecret: string | null): Record<string, string> {
  const headers: Record<string, string> = { [FILE_HEADERS.id]: file.id, [FILE_HEADERS.download]: links.download(file) };
  if (deleteSecret !== null) headers[FILE_HEADERS.delete] = links.delete(file, deleteSecret);
  return { ...headers, ...expiresHeaders(file) };
}

/**
 * Upload-Concat of a partial or final upload (tus concatenation: HEAD answers with it),
 * the final's partials as URLs where the caller reaches them; null for a whole upload.
 */
export function uploadConcatHeader(links: Links, caller: TusCaller, record: ResumableUploadRecord): string | null {
  if (isPartial(record)) return PARTIAL;
  const parts = partsOfFinal(record);
  if (parts === null) return null;
  const base = caller.viaSite ? links.webUrl : links.baseUrl;
  return `final;${parts.map((id) => `${base}${UPLOADS_PATH}/${id}`).join(' ')}`;
}
