import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Folder } from '../../domain/types.js';
import { entryEl, linkEl, textEl, type XmlElement } from '../atom.js';
import type { HttpContext } from '../context.js';
import { requireAccount } from '../plugins/api-auth.js';
import { sendAtom } from '../plugins/atom-reply.js';
import { apiRoute, dispatch, type MethodTable } from '../plugins/method-dispatch.js';
import { formField, indexedFiles } from './form.js';
import { listFoldersHandler } from './listing-routes.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/** PUT /folders/<id>;files (SPEC.md) and the folder extensions of API.md section 7. */
export function registerFolderRoutes(app: FastifyInstance, context: HttpContext): void {
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

  const show = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const listing = await services.folders.listing(await services.folders.owned(account, id));
    return sendAtom(context, request, reply, 200, 'Folder', [
      entryEl(
        ...folderHead(listing.folder, listing.activeBytes),
        textEl('ed:files', listing.files.length),
        ...listing.children.map((child) => ({
          name: 'ed:folder',
          attrs: [['id', child.id], ['href', links.folder(child)]] as const,
          text: child.name,
        })),
        ...listing.files.map((file) => ({
          name: 'ed:file',
          attrs: [['id', file.id], ['href', links.download(file)], ['length', file.size]] as const,
          text: file.name,
        })),
      ),
    ]);
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
  app.route({
    method: [...METHODS],
    url: '/folders/:ref',
    handler: (request, reply) => {
      const ref = (request.params as { ref: string }).ref.replace(/%3B/gi, ';');
      const [id = '', suffix] = ref.split(';', 2);
      let table: MethodTable;
      if (suffix === undefined) table = { GET: show(id), DELETE: remove(id) };
      else if (suffix === 'files') table = { PUT: move(id) };
      else return reply.callNotFound();
      return dispatch(table, request, reply);
    },
  });
}
