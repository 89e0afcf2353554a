import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UploadRequestRecord } from '../../db/repositories/repositories.js';
import { sqlDateTime } from '../../domain/dates.js';
import type { UploadRequestFields } from '../../sharing/upload-requests-service.js';
import { entryEl, linkEl, textEl, type XmlElement } from '../atom.js';
import type { HttpContext } from '../context.js';
import type { Links } from '../links.js';
import { requireAccount } from '../plugins/api-auth.js';
import { sendAtom } from '../plugins/atom-reply.js';
import { apiRoute, refRoute } from '../plugins/method-dispatch.js';
import { bodyField, formField } from './form.js';
import { nextLinks, pageSize, queryParam } from './listing-routes.js';
import { decodeCursor } from './page-cursor.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'uploadRequests'>;

/**
 * The entry of an upload request (docs/api.md "Upload requests"): the children of issue 25
 * in its order, then our `ed:max_file_size` and `ed:message`. Unset values (never expires,
 * unlimited, the top folder) are empty elements, never self-closed (API.md 3).
 */
export function requestEntry(links: Links, request: UploadRequestRecord): XmlElement {
  return entryEl(
    textEl('id', request.id),
    textEl('title', request.title),
    linkEl(['title', 'request_link'], ['href', links.uploadRequest(request)]),
    textEl('ed:folder', request.folderId ?? ''),
    textEl('ed:expires', sqlDateTime(request.expiresAt)),
    textEl('ed:max_files', request.maxFiles ?? ''),
    textEl('ed:files', request.files),
    textEl('ed:max_bytes', request.maxBytes ?? ''),
    textEl('ed:bytes', request.bytes),
    textEl('ed:protected', request.passwordHash === null ? 'no' : 'yes'),
    textEl('ed:max_file_size', request.maxFileSize ?? ''),
    textEl('ed:message', request.message),
  );
}

/** The fields of a creation or change; the password from the body only, never the URL. */
function fields(request: FastifyRequest): UploadRequestFields {
  return {
    folder: formField(request, 'folder'),
    title: formField(request, 'title'),
    message: formField(request, 'message'),
    expiresIn: formField(request, 'expires_in'),
    password: bodyField(request, 'password'),
    maxFiles: formField(request, 'max_files'),
    maxBytes: formField(request, 'max_bytes'),
    maxFileSize: formField(request, 'max_file_size'),
  };
}

/**
 * The owner's side of upload requests (issue 25): `POST/GET /requests`,
 * `GET/PUT/DELETE /requests/<id>` (DELETE closes; the files stay). Feed title `Upload
 * request`; the list is `Upload request list`, newest first, paged like GET /files.
 */
export function registerRequestRoutes(app: FastifyInstance, context: Context): void {
  const { services, links } = context;
  const requests = services.uploadRequests;
  const one = (status: number, record: UploadRequestRecord, request: FastifyRequest, reply: FastifyReply) =>
    sendAtom(context, request, reply, status, 'Upload request', [requestEntry(links, record)]);

  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    return one(201, await requests.create(account, fields(request)), request, reply);
  };

  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const limit = pageSize(request);
    const cursor = queryParam(request, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor('requests', cursor);
    const page = await requests.list(account, { limit, after });
    const filters: Array<[string, string | undefined]> = [['limit', queryParam(request, 'limit') === undefined ? undefined : String(limit)]];
    return sendAtom(
      context,
      request,
      reply,
      200,
      'Upload request list',
      page.items.map((record) => requestEntry(links, record)),
      nextLinks(request, 'requests', filters, page.next),
    );
  };

  const show = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    return one(200, await requests.owned(account, id), request, reply);
  };
  const change = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    return one(200, await requests.change(account, id, fields(request)), request, reply);
  };
  const close = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    return one(200, await requests.close(account, id), request, reply);
  };

  apiRoute(app, '/requests', { GET: list, POST: create });
  refRoute(app, '/requests/:ref', (id, suffix) => (suffix === undefined ? { GET: show(id), PUT: change(id), DELETE: close(id) } : null));
}
