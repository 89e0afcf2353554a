import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.js';
import { ID_PATTERN } from '../../domain/ids.js';
import { type FileRecord, FileStatus } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { sendAtomError } from '../plugins/atom-reply.js';
import { isApiPath } from '../request-kind.js';
import { sendDownload } from '../send-download.js';
import { sendDownloadPage, sendPreview } from './download-page.js';
import { humanDate, humanSize } from './format.js';
import { sendErrorPage, sendPage } from './layout.js';
import { registerThumbnailRoute } from './thumbnail-route.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'downloads' | 'files' | 'sessions' | 'thumbnails'>;

type IdParams = { id: string };

/**
 * The public file URLs of API.md section 1: the download page and its raw download, and
 * the delete link. (The premium direct download is an API endpoint: api/direct-download-route.ts.)
 */
export function registerFilePages(app: FastifyInstance, context: Context): void {
  const { services } = context;
  registerThumbnailRoute(app, context);

  /** The file for a public page, or an error page (404 unknown/deleted, 410 blocked). */
  const publicFile = async (reply: FastifyReply, id: string): Promise<FileRecord | null> => {
    const file = await services.files.live(id);
    if (!file) {
      sendErrorPage(reply, 404, 'File not found', 'This file does not exist or was deleted.');
      return null;
    }
    if (file.status === FileStatus.Blocked) {
      sendErrorPage(reply, 410, 'File unavailable', 'This file has been blocked by the operator.');
      return null;
    }
    return file;
  };

  app.get('/:id/:name', { config: { web: true } }, async (request, reply) => {
    const { id } = request.params as IdParams;
    // Not an id: some other unknown path (API.md 3 wants Atom for API clients).
    if (!ID_PATTERN.test(id)) return reply.callNotFound();
    const file = await publicFile(reply, id);
    if (!file) return reply;
    if ((request.query as Record<string, unknown>).download !== undefined) {
      return sendDownload(services.downloads, request, reply, file, { requester: { link: 'public', address: request.ip }, purpose: 'download' });
    }
    if ((request.query as Record<string, unknown>).preview !== undefined) return sendPreview(context, request, reply, file);
    return sendDownloadPage(context, request, reply, file);
  });

  const deleteTarget = async (request: FastifyRequest, reply: FastifyReply): Promise<FileRecord | null> => {
    // `/files/delete/...` fits this route's pattern but is an API path: it answers the
    // API's Atom 404 (API.md 3), whatever the client reads.
    if (isApiPath(request.url)) {
      sendAtomError(context, request, reply, errors.notFound());
      return null;
    }
    const { id, secret } = request.params as { id: string; secret: string };
    const file = await services.files.byDeleteSecret(id, secret);
    if (!file) sendErrorPage(reply, 404, 'Link not found', 'This delete link is not valid, or the file is already deleted.');
    return file;
  };

  app.get('/:id/delete/:secret', { config: { web: true } }, async (request, reply) => {
    const file = await deleteTarget(request, reply);
    if (!file) return reply;
    return sendPage(
      reply,
      200,
      `Delete ${file.name}`,
      html`<section class="card">
<h1>Delete “${file.name}”?</h1>
<p class="meta">${humanSize(file.size)} · uploaded ${humanDate(file.createdAt)}</p>
<p>The file will be removed for everyone who has its link. This cannot be undone.</p>
<form method="post"><button class="button danger" type="submit">Delete file</button></form>
</section>`,
    );
  });

  app.post('/:id/delete/:secret', { config: { web: true } }, async (request, reply) => {
    const file = await deleteTarget(request, reply);
    if (!file) return reply;
    const { secret } = request.params as { secret: string };
    if (!(await services.files.deleteWithSecret(file.id, secret))) {
      return sendErrorPage(reply, 404, 'Link not found', 'The file is already deleted.');
    }
    return sendPage(
      reply,
      200,
      'File deleted',
      html`<section class="card"><h1>File deleted</h1><p>“${file.name}” has been deleted.</p><p><a href="/">Home</a></p></section>`,
    );
  });
}
