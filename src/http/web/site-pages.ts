import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { sendPage } from './layout.js';

const stylesheet = readFileSync(new URL('./static/site.css', import.meta.url), 'utf8');

/** Endpoints listed on the developers page ({ed_namespace}). */
const ENDPOINTS: Array<[string, string, string]> = [
  ['POST', '/apikeys', 'API key from login and password (password or pass)'],
  ['POST', '/files', 'Upload one file as multipart part "upload" (alias /file)'],
  ['GET', '/files/<id>', 'File details (premium)'],
  ['GET', '/files/<id>;DirectLink', 'Signed direct download link (premium)'],
  ['DELETE', '/files/<id>', 'Delete one of your files'],
  ['POST', '/files/copy/<id>', 'Copy a file into your account (alias /files/copy:<id>)'],
  ['POST', '/folders', 'Create a folder (name, optional parent)'],
  ['GET', '/folders/<id>', 'List one of your folders'],
  ['DELETE', '/folders/<id>', 'Remove an empty folder'],
  ['PUT', '/folders/<id>;files', 'Move files[0], files[1], ... into a folder'],
  ['GET', '/account', 'Account and premium details'],
];

/** Home, developers page, health check and the stylesheet. */
export function registerSitePages(app: FastifyInstance, context: HttpContext): void {
  app.get('/healthz', async (_request, reply) => reply.type('text/plain; charset=utf-8').send('ok\n'));

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

  app.get('/developers', { config: { web: true } }, async (_request, reply) =>
    sendPage(
      reply,
      200,
      'Developers',
      html`<section class="card"><h1>API reference</h1>
<p>Base address: <code>${context.links.baseUrl}</code>. Send the API key in the <code>Authorization</code> header. Every answer is an Atom feed; the <code>ed</code> prefix is bound to <code>${context.links.namespace}</code>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>What it does</th></tr></thead><tbody>
${ENDPOINTS.map(([method, path, what]) => html`<tr><td>${method}</td><td><code>${path}</code></td><td>${what}</td></tr>`)}
</tbody></table>
<h2>Example</h2>
<pre>curl -d login=me -d password=secret ${context.links.baseUrl}/apikeys
curl -H "Authorization: $KEY" -F upload=@report.pdf ${context.links.baseUrl}/files</pre>
</section>`,
    ),
  );
}
