import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.js';
import { ID_PATTERN } from '../../domain/ids.js';
import { type Account, type FileRecord, FileStatus } from '../../domain/types.js';
import type { TrafficTransfer } from '../../services/reservations-service.js';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { apiKeyOf } from '../plugins/api-auth.js';
import { sendAtomError } from '../plugins/atom-reply.js';
import { isApiPath } from '../request-kind.js';
import { sendFile } from '../send-blob.js';
import { directInBrowser, isBrowserNavigation } from './direct-in-browser.js';
import { sendDownloadPage, sendPreview } from './download-page.js';
import { humanDate, humanSize } from './format.js';
import { sendFreeFile } from './free-download.js';
import { sendErrorPage, sendPage } from './layout.js';
import { registerThumbnailRoute } from './thumbnail-route.js';

type IdParams = { id: string };

/**
 * The public file URLs of API.md section 1: the download page and its raw download,
 * the premium direct download, and the delete link.
 */
export function registerFilePages(app: FastifyInstance, context: HttpContext): void {
  const { services } = context;
  registerThumbnailRoute(app, context);

  /** The file for a public page, or an error page (404 unknown/deleted, 410 blocked). */
  const publicFile = async (reply: FastifyReply, id: string): Promise<FileRecord | null> => {
    const file = ID_PATTERN.test(id) ? await services.store.files.byId(id) : null;
    if (!file || file.status === FileStatus.Deleted) {
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
      return sendFreeFile(context, request, reply, file, { countsAsDownload: true });
    }
    if ((request.query as Record<string, unknown>).preview !== undefined) return sendPreview(context, request, reply, file);
    return sendDownloadPage(context, request, reply, file);
  });

  /** Sends a direct download charged to `account`'s premium traffic (API.md 6). */
  const serveDirect = (request: FastifyRequest, reply: FastifyReply, file: FileRecord, account: Account) => {
    let transfer: TrafficTransfer | null = null;
    let metered: ((sent: number) => void) | undefined;
    return sendFile(request, reply, {
      file,
      open: (range) => services.downloads.open(file, range),
      beforeBody: async (length) => {
        // Take the whole response first so concurrent downloads cannot overdraw (API.md 6);
        // the transfer charges what is sent and gives back the rest, also after a crash.
        transfer = await services.downloads.reserveTraffic(account, length);
        // Counting the download start must not fail the reserved download.
        if (!request.headers.range || request.headers.range.startsWith('bytes=0-')) {
          await services.files.recordDownload(file.id).catch((error) => request.log.error(error, 'counting a download failed'));
        }
        // Last: afterBody, which ends the meter, runs only when beforeBody went through.
        metered = services.metrics.downloadStarted('direct');
      },
      progress: (sent) => transfer?.progress(sent),
      afterBody: (sent) => {
        metered?.(sent);
        transfer?.finish(sent).catch((error) => request.log.error(error, 'settling the traffic of a download failed'));
        services.files.recordBytesServed(file.id, sent).catch((error) => request.log.error(error, 'counting bytes served failed'));
      },
    });
  };

  app.get('/direct/:id/:token/:name', async (request, reply) => {
    // A person opening the link in a browser: the site session may stand in for the key.
    if (isBrowserNavigation(context, request)) return directInBrowser(context, request, reply, (file, account) => serveDirect(request, reply, file, account));
    const { id, token } = request.params as { id: string; token: string };
    const { file, account } = await services.downloads.authorizeDirect(id, token, apiKeyOf(request));
    return serveDirect(request, reply, file, account);
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
