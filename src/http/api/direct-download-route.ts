import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Account, FileRecord } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { apiKeyOf } from '../plugins/api-auth.js';
import { sendDownload } from '../send-download.js';
import { directInBrowser, isBrowserNavigation } from '../web/direct-in-browser.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'config' | 'directLinks' | 'downloads' | 'sessions'>;

/**
 * `GET /direct/<id>/<token>/<name>`: the premium direct download of API.md 6, charged to
 * the link's account's premium traffic by the download use case (downloads/). The token
 * and the API key (or, in the owner's browser, the site session) say who asks.
 */
export function registerDirectDownloadRoute(app: FastifyInstance, context: Context): void {
  const { services } = context;

  const serve = (request: FastifyRequest, reply: FastifyReply, file: FileRecord, account: Account) =>
    sendDownload(services.downloads, request, reply, file, { requester: { link: 'direct', account }, purpose: 'download' });

  app.get('/direct/:id/:token/:name', async (request, reply) => {
    // A person opening the link in a browser: the site session may stand in for the key.
    if (isBrowserNavigation(context, request)) return directInBrowser(context, request, reply, (file, account) => serve(request, reply, file, account));
    const { id, token } = request.params as { id: string; token: string };
    const { file, account } = await services.directLinks.authorizeDirect(id, token, apiKeyOf(request));
    return serve(request, reply, file, account);
  });
}
