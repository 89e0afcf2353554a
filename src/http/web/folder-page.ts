import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { humanSize } from './format.js';
import { sendPage } from './layout.js';

/** folder_link: the public page listing a folder's active files (API.md 1). */
export function registerFolderPage(app: FastifyInstance, context: HttpContext): void {
  const { services, links } = context;
  app.get('/folder/:id', { config: { web: true } }, async (request, reply) => {
    const folder = await services.folders.find((request.params as { id: string }).id);
    const listing = await services.folders.listing(folder);
    const rows = listing.files.map(
      (file) => html`<tr><td><a href="${links.download(file)}">${file.name}</a></td><td class="size">${humanSize(file.size)}</td></tr>`,
    );
    const subfolders = listing.children.map((child) => html`<li><a href="${links.folder(child)}">${child.name}</a></li>`);
    return sendPage(
      reply,
      200,
      folder.name,
      html`<section class="card">
<h1>${folder.name}</h1>
<p class="meta">${listing.files.length} file${listing.files.length === 1 ? '' : 's'} · ${humanSize(listing.activeBytes)}</p>
${subfolders.length > 0 ? html`<h2>Folders</h2><ul>${subfolders}</ul>` : ''}
${rows.length > 0 ? html`<table><thead><tr><th>Name</th><th class="size">Size</th></tr></thead><tbody>${rows}</tbody></table>` : html`<p>This folder is empty.</p>`}
</section>`,
    );
  });
}
