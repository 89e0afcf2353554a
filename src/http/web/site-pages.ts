import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { sendDevelopersPage } from './developers-page.js';
import { sendPage } from './layout.js';

const stylesheet = readFileSync(new URL('./static/site.css', import.meta.url), 'utf8');

/** Home, developers page, health check and the stylesheet. */
export function registerSitePages(app: FastifyInstance, context: HttpContext): void {
  app.get('/static/site.css', async (_request, reply) =>
    reply.headers({ 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }).send(stylesheet),
  );

  app.get('/', { config: { web: true } }, async (_request, reply) =>
    sendPage(
      reply,
      200,
      'Welcome',
      html`<section class="card"><h1>filehaven</h1><p>A file host with an Atom REST API. Upload with your API key; share the download link.</p>
<p><a href="/developers">API reference for client authors</a></p></section>`,
    ),
  );

  app.get('/developers', { config: { web: true } }, async (_request, reply) => sendDevelopersPage(reply, context));
}
