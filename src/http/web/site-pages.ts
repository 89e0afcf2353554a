import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { sendDevelopersPage } from './developers-page.js';
import { humanSize } from './format.js';
import { sendPage } from './layout.js';
import { UPLOAD_PAGE_CSP, UPLOAD_SCRIPTS, uploadForm } from './upload-form.js';
import { type Usage, uploadVolumeBlock, usageOf } from './usage-section.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'config' | 'limits' | 'signUp' | 'uploads'>;

const stylesheet = readFileSync(new URL('./static/site.css', import.meta.url), 'utf8');
const favicon = readFileSync(new URL('./static/favicon.svg', import.meta.url));

/** A week: the icon changes with a release, if ever. No script can run in it (CSP). */
const FAVICON_HEADERS = {
  'Content-Type': 'image/svg+xml',
  'Cache-Control': 'public, max-age=604800',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'",
};

/** The home page of a visitor: what this site is, and the way in. */
function visitorHome(signUpOpen: boolean, maxFileSize: number): Html {
  return html`<section class="card home-hero">
<h1>Share files with a link</h1>
<p>filehaven is a file host run by this site’s owner. Upload a file, get a link, send it: whoever has the link sees a download page with a preview and a download button, no account needed.</p>
<ul class="home-points">
<li>Files up to ${humanSize(maxFileSize)}; large uploads resume after a lost connection.</li>
<li>Folders you can share as one link.</li>
<li>An API, a command-line client and ready-made ShareX and curl uploaders for your own tools.</li>
</ul>
<p class="home-actions"><a class="button" href="/signin">Sign in</a>${signUpOpen ? html`<a class="button secondary" href="/signup">Create an account</a>` : ''}</p>
${signUpOpen ? '' : html`<p class="meta">Accounts are created by the operator of this site.</p>`}
</section>
<section class="card">
<h2>For developers</h2>
<p>Every answer of the REST API is an Atom feed. <a href="/developers">Read the API reference</a>.</p>
</section>`;
}

/** The home page of a signed-in account: upload right there, and what is left of its limits. */
function memberHome(login: string, usage: Usage, upload: Html): Html {
  return html`<section class="card home-hero" id="upload">
<h1>Welcome back, <bdi>${login}</bdi></h1>
${upload}
<p class="home-actions"><a class="button secondary" href="/my/files">My files</a><a class="button secondary" href="/accounts/profile/misc">Your account</a></p>
</section>
<section class="card" id="usage">
<h2>Your usage</h2>
${uploadVolumeBlock(usage)}
<dl class="facts usage-facts">
<dt>Largest file</dt><dd>${humanSize(usage.maxFileSize)}</dd>
<dt>Premium traffic left</dt><dd>${humanSize(usage.trafficLeft)}${usage.premium ? '' : html` <span class="meta">(needs active premium)</span>`}</dd>
</dl>
</section>
${UPLOAD_SCRIPTS}`;
}

/** Home, developers page, the stylesheet and the favicon. */
export function registerSitePages(app: FastifyInstance, context: Context): void {
  app.get('/static/site.css', async (_request, reply) =>
    reply.headers({ 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }).send(stylesheet),
  );

  // The layout links /favicon.svg; /favicon.ico is what browsers and crawlers ask for on
  // their own. Every current browser takes an SVG icon by its Content-Type at either.
  app.get('/favicon.svg', async (_request, reply) => reply.headers(FAVICON_HEADERS).send(favicon));
  app.get('/favicon.ico', async (_request, reply) => reply.headers(FAVICON_HEADERS).send(favicon));

  app.get('/', { config: { web: true } }, async (request, reply) => {
    const session = request.webSession;
    if (!session) return sendPage(reply, 200, 'Welcome', visitorHome(context.services.signUp.open, context.services.config.maxFileSize));
    const [usage, allowance] = await Promise.all([usageOf(context.services, session.account), context.services.uploads.allowance(session.account)]);
    const upload = uploadForm({
      csrfToken: session.csrfToken,
      accountId: session.account.id,
      allowance,
      maxChunkSize: context.services.config.uploadChunkSize,
    });
    return sendPage(reply, 200, 'Home', memberHome(session.account.login, usage, upload), UPLOAD_PAGE_CSP);
  });

  app.get('/developers', { config: { web: true } }, async (_request, reply) => sendDevelopersPage(reply, context));
}
