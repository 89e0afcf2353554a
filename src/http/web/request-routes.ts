import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UploadRequestRecord } from '../../db/repositories/repositories.js';
import { ApiError, errors } from '../../domain/errors.js';
import { entryEl, textEl } from '../atom.js';
import type { HttpContext } from '../context.js';
import { linkCredentials } from '../link-credentials.js';
import { receiveSingleFile } from '../multipart-upload.js';
import { sendAtom } from '../plugins/atom-reply.js';
import { wantsHtml } from '../request-kind.js';
import { sendPage } from './layout.js';
import { requestPage, requestPasswordPage, requestReceivedPage } from './request-page.js';
import { registerRequestScripts } from './request-scripts.js';
import { bodyField, cookieOptions, redirectTo } from './session-plugin.js';
import { UPLOAD_PAGE_CSP } from './upload-form.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'config' | 'uploadRequests' | 'accounts' | 'sessions'>;

/** Multipart framing around the file: boundaries, part headers, small fields (as POST /files). */
const MULTIPART_SLACK = 1024 * 1024;

/**
 * The uploader's side of upload requests (issue 25), no account needed:
 * - `GET /r/<id>`: the request's page (title, message, limits, the upload box), or only a
 *   password form while it is protected and this browser has not given the password;
 * - `POST /r/<id>/password`: the form's password; the right one sets the link's cookie;
 * - `POST /r/<id>`: one file as multipart (part `upload`, the rules of POST /files), the
 *   password in `Filehaven-Share-Password` or the cookie; 201 `Upload request upload` with
 *   the file's id, name and size only: nothing that reaches into the owner's account.
 */
export function registerRequestPages(app: FastifyInstance, context: Context): void {
  const { services } = context;
  const requests = services.uploadRequests;
  registerRequestScripts(app);

  app.post<{ Params: { id: string } }>('/r/:id', { config: { streamBody: true } }, async (request, reply) => {
    // Until the body is read, a refusal closes the connection rather than drain it.
    let reading = false;
    try {
      const record = await requests.unlock(request.params.id, linkCredentials(request, requests.cookieName(request.params.id)));
      const declared = Number(request.headers['content-length']);
      const largest = Math.min(services.config.maxFileSize, record.maxFileSize ?? Number.POSITIVE_INFINITY);
      if (Number.isFinite(declared) && declared > largest + MULTIPART_SLACK) throw errors.fileSize(largest);
      const file = await requests.upload(record, {
        kind: 'stream',
        declaredBytes: Number.isFinite(declared) ? declared : undefined,
        receive: async ({ stage, discard }) => {
          reading = true;
          const received = await receiveSingleFile(request.raw, stage, discard);
          return { staged: received.staged, name: received.filename };
        },
      });
      reply.header('Cache-Control', 'no-store');
      // A browser's plain form (no script) gets a page; everyone else the Atom answer.
      if (wantsHtml(request)) return sendPage(reply, 201, 'File received', requestReceivedPage(record.id, file.name, file.size));
      return sendAtom(context, request, reply, 201, 'Upload request upload', [
        entryEl(textEl('id', file.id), textEl('title', file.name), textEl('ed:size', file.size)),
      ]);
    } catch (error) {
      if (!reading) reply.header('Connection', 'close');
      throw error;
    }
  });

  app.get<{ Params: { id: string } }>('/r/:id', { config: { web: true } }, async (request, reply) => {
    const record = await pageRequest(context, request, reply);
    if (!record) return reply;
    const limits = await pageLimits(context, record);
    return sendPage(reply, 200, record.title || 'Upload files', requestPage(record, limits, services.config.uploadChunkSize), UPLOAD_PAGE_CSP);
  });

  app.post<{ Params: { id: string } }>('/r/:id/password', { config: { web: true } }, async (request, reply) => {
    const id = request.params.id;
    const record = await requests.open(id);
    try {
      await requests.unlock(id, { password: bodyField(request, 'password') ?? '', ip: request.ip });
    } catch (error) {
      if (error instanceof ApiError && error.code === 'errorSharePassword') {
        if (error.headers['Retry-After']) reply.header('Retry-After', error.headers['Retry-After']);
        const message = error.status === 429 ? 'Too many wrong passwords. Wait a minute, then try again.' : 'That password is not right. Try again.';
        return sendPage(reply, error.status, 'Password needed', requestPasswordPage(record.id, message));
      }
      throw error;
    }
    const cookie = requests.accessCookie(record);
    if (cookie) {
      // Path /: the page's resumable uploads go to /uploads with it. The name is the link's
      // own, so it opens this request only.
      reply.setCookie(cookie.name, cookie.value, cookieOptions(request, context.links));
    }
    return redirectTo(reply, `/r/${record.id}`);
  });
}

/**
 * The request for its page, or null when the password form was sent instead: a protected
 * request shows nothing of itself (not even its title) before the right password.
 */
async function pageRequest(context: Context, request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply): Promise<UploadRequestRecord | null> {
  const requests = context.services.uploadRequests;
  const id = request.params.id;
  const record = await requests.open(id);
  if (record.passwordHash === null) return record;
  try {
    // The cookie only: a page view is no password guess.
    return await requests.unlock(id, { token: request.cookies?.[requests.cookieName(id)], ip: request.ip });
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'errorSharePassword') throw error;
    sendPage(reply, 401, 'Password needed', requestPasswordPage(record.id, null));
    return null;
  }
}

/** The limits the page shows: the request's own, under the server's largest file. */
async function pageLimits(context: Context, record: UploadRequestRecord): Promise<{ maxFileSize: number; filesLeft: number | null; bytesLeft: number | null }> {
  const { config } = context.services;
  return {
    maxFileSize: Math.min(config.maxFileSize, record.maxFileSize ?? Number.POSITIVE_INFINITY),
    filesLeft: record.maxFiles === null ? null : Math.max(0, record.maxFiles - record.files),
    bytesLeft: record.maxBytes === null ? null : Math.max(0, record.maxBytes - record.bytes),
  };
}
