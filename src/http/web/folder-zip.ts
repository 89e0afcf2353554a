import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../context.js';
import { sendFolderZip } from '../send-folder-zip.js';

/** The services this module calls. */
type Context = HttpContext<'downloads' | 'folders'>;

/** The ZIP of a folder, beside its public page. */
export const folderZipPath = (folder: { id: string }) => `/folder/${folder.id}/zip`;

/**
 * `GET /folder/<id>/zip`: the folder and everything below it as one streamed ZIP (docs/web.md
 * "A folder as one ZIP"). Whoever may see the folder page (anyone with its link, its
 * owner among them) may download it as a public download: what it costs (a free slot held
 * from before its plan until the response ends, however it ends, and the speed cap) and
 * what it counts is the download use case's (downloads/downloads-service.ts); this route
 * adapts it to HTTP. No ranges: the archive is made as it streams.
 */
export function registerFolderZip(app: FastifyInstance, context: Context): void {
  const { services } = context;
  app.get('/folder/:id/zip', { config: { web: true } }, async (request, reply) => {
    const folder = await services.folders.find((request.params as { id: string }).id);
    return sendFolderZip(services.downloads, request, reply, folder, { link: 'public', address: request.ip });
  });
}
