import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Folder } from '../../domain/types.js';
import { entryEl, linkEl, textEl, type XmlElement } from '../atom.js';
import type { HttpContext } from '../context.js';
import { requireAccount } from '../plugins/api-auth.js';
import { sendAtom } from '../plugins/atom-reply.js';
import { apiRoute, refRoute } from '../plugins/method-dispatch.js';
import { formField, indexedFiles } from './form.js';
import { listFoldersHandler, nextLinks, pageSize, queryParam } from './listing-routes.js';
import { decodeCursor } from './page-cursor.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'folders' | 'listing'>;

/** PUT /folders/<id>;files (SPEC.md) and the folder extensions of API.md section 7. */
export function registerFolderRoutes(app: FastifyInstance, context: Context): void {
  const { services, links } = context;

  const folderHead = (folder: Folder, activeBytes: number): XmlElement[] => [
    textEl('id', folder.id),
    textEl('title', folder.name),
    textEl('ed:parent', folder.parentId ?? ''),
    linkEl(['title', 'folder_link'], ['href', links.folder(folder)], ['rel', 'enclosure'], ['length', activeBytes]),
  ];

  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const parent = formField(request, 'parent');
    const folder = await services.folders.create(account, formField(request, 'name'), parent || undefined);
    return sendAtom(context, request, reply, 201, 'Folder', [entryEl(...folderHead(folder, 0))]);
  };

  /**
   * One page of the folder's active files, newest first: `limit` (1 to 500, default 50) and
   * `cursor` as for GET /files, the next page announced by a feed-level `<link rel="next"/>`
   * after the self link. `ed:files` and the folder_link `length` count the whole folder;
   * the sub-folders (`ed:folder`) come with the first page only.
   */
  const show = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const limit = pageSize(request);
    const cursor = queryParam(request, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor('files', cursor);
    const folder = await services.folders.owned(account, id);
    const listing = await services.folders.listing(folder, { limit, after, children: after === undefined });
    const filters: Array<[string, string | undefined]> = [['limit', queryParam(request, 'limit') === undefined ? undefined : String(limit)]];
    const entry = entryEl(
      ...folderHead(listing.folder, listing.activeBytes),
      textEl('ed:files', listing.activeFiles),
      ...listing.children.map((child) => ({
        name: 'ed:folder',
        attrs: [
          ['id', child.id],
          ['href', links.folder(child)],
        ] as const,
        text: child.name,
      })),
      ...listing.files.map((file) => ({
        name: 'ed:file',
        attrs: [
          ['id', file.id],
          ['href', links.download(file)],
          ['length', file.size],
        ] as const,
        text: file.name,
      })),
    );
    return sendAtom(context, request, reply, 200, 'Folder', [entry], nextLinks(request, 'files', filters, listing.next));
  };

  const remove = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const folder = await services.folders.remove(account, id);
    return sendAtom(context, request, reply, 200, 'Folder delete', [entryEl(textEl('id', folder.id), textEl('title', folder.name))]);
  };

  const move = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const result = await services.folders.move(account, id, indexedFiles(request));
    return sendAtom(context, request, reply, 200, 'Add files to folder', [
      entryEl(
        textEl('id', result.folder.id),
        linkEl(['title', 'folder_link'], ['href', links.folder(result.folder)], ['rel', 'enclosure'], ['length', result.activeBytes]),
        textEl('ed:updated', result.moved),
      ),
    ]);
  };

  apiRoute(app, '/folders', { GET: listFoldersHandler(context), POST: create });
  refRoute(app, '/folders/:ref', (id, suffix) => {
    if (suffix === undefined) return { GET: show(id), DELETE: remove(id) };
    return suffix === 'files' ? { PUT: move(id) } : null;
  });
}
