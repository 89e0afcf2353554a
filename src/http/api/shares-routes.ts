import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sqlDateTime } from '../../domain/dates.js';
import type { ShareFields, ShareView } from '../../sharing/shares-service.js';
import { entryEl, linkEl, textEl, type XmlElement } from '../atom.js';
import type { HttpContext } from '../context.js';
import { requireAccount } from '../plugins/api-auth.js';
import { sendAtom } from '../plugins/atom-reply.js';
import { apiRoute, refRoute } from '../plugins/method-dispatch.js';
import { bodyField, formField } from './form.js';
import { nextLinks, pageSize, queryParam } from './listing-routes.js';
import { decodeCursor } from './page-cursor.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'shares'>;

/**
 * Shares (issue 25, docs/api.md "Shares"): `POST /shares` and `GET /shares` (the caller's,
 * newest first, paged like GET /files), `GET`, `PUT` and `DELETE /shares/<id>`. Feed title
 * `Share` (`Share list` for the list); one entry per share, children in this order: `id`,
 * `title`, the share_link, `ed:target`, `ed:expires` (`YYYY-MM-DD HH:MM:SS` UTC, empty
 * when never), `ed:max_downloads` (empty when unlimited), `ed:downloads`, `ed:protected`,
 * `ed:fast`. The password travels only in the form body, never in the URL.
 */
export function registerShareRoutes(app: FastifyInstance, context: Context): void {
  const { services, links } = context;

  const shareEntry = ({ share, title }: ShareView): XmlElement =>
    entryEl(
      textEl('id', share.id),
      textEl('title', title),
      linkEl(['title', 'share_link'], ['href', links.share(share)]),
      textEl('ed:target', share.fileId ?? share.folderId ?? ''),
      textEl('ed:expires', sqlDateTime(share.expiresAt)),
      textEl('ed:max_downloads', share.maxDownloads ?? ''),
      textEl('ed:downloads', share.downloads),
      textEl('ed:protected', share.passwordHash === null ? 'no' : 'yes'),
      textEl('ed:fast', share.fast ? 'yes' : 'no'),
    );

  const fields = (request: FastifyRequest): ShareFields => ({
    file: formField(request, 'file'),
    folder: formField(request, 'folder'),
    expiresIn: formField(request, 'expires_in'),
    // A secret: from the body only, so it never sits in a URL or a log.
    password: bodyField(request, 'password'),
    maxDownloads: formField(request, 'max_downloads'),
    fast: formField(request, 'fast'),
  });

  /** A share's link is the key to what it shares: like a delete link, never kept by a cache. */
  const send = (request: FastifyRequest, reply: FastifyReply, status: number, title: string, entries: XmlElement[], more?: XmlElement[]) =>
    sendAtom(context, request, reply.header('Cache-Control', 'no-store'), status, title, entries, more);

  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const view = await services.shares.create(account, fields(request));
    return send(request, reply, 201, 'Share', [shareEntry(view)]);
  };

  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const limit = pageSize(request);
    const cursor = queryParam(request, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor('shares', cursor);
    const page = await services.shares.list(account, { limit, after });
    const filters: Array<[string, string | undefined]> = [['limit', queryParam(request, 'limit') === undefined ? undefined : String(limit)]];
    return send(request, reply, 200, 'Share list', page.items.map(shareEntry), nextLinks(request, 'shares', filters, page.next));
  };

  const show = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    return send(request, reply, 200, 'Share', [shareEntry(await services.shares.get(account, id))]);
  };

  const change = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    return send(request, reply, 200, 'Share', [shareEntry(await services.shares.change(account, id, fields(request)))]);
  };

  const revoke = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    return send(request, reply, 200, 'Share', [shareEntry(await services.shares.revoke(account, id))]);
  };

  apiRoute(app, '/shares', { GET: list, POST: create });
  refRoute(app, '/shares/:ref', (id, suffix) => (suffix === undefined ? { GET: show(id), PUT: change(id), DELETE: revoke(id) } : null));
}
