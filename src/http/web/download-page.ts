import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ID_PATTERN } from '../../domain/ids.js';
import type { FileRecord } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { sendDownload } from '../send-download.js';
import { humanDate, humanSize } from './format.js';
import { pageCsp, sendErrorPage, sendPage } from './layout.js';
import { myFilesUrl } from './my-files-paths.js';
import { pageCspAddition, previewCsp, previewOf } from './preview.js';
import { signInUrl } from './return-path.js';
import { CSRF_FIELD, redirectTo, requireSessionForm } from './session-plugin.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'downloads' | 'files' | 'sessions'>;

/** The path of a file's download page (`/<id>/<url-encoded name>`), for same-origin references. */
const pagePath = (context: Context, file: Pick<FileRecord, 'id' | 'name'>) => new URL(context.links.download(file)).pathname;

/** The path the copy form posts to. */
export const copyPath = (file: Pick<FileRecord, 'id'>) => `/${file.id}/copy`;

/** The preview element for the page, or nothing when the type has none or the file is too big to embed. */
function previewBlock(file: FileRecord, src: string): { block: Html | string; csp: string } {
  const preview = previewOf(file.name);
  if (!preview) return { block: '', csp: '' };
  if (file.size > preview.maxEmbedBytes) return { block: html`<p class="meta">This file is too large to preview here.</p>`, csp: '' };
  const label = `Preview of ${file.name}`;
  const csp = pageCspAddition(preview.kind);
  switch (preview.kind) {
    case 'image':
      return { block: html`<figure class="preview preview-image"><img src="${src}" alt="${label}"></figure>`, csp };
    case 'audio':
      return {
        block: html`<figure class="preview preview-audio"><audio controls preload="metadata" src="${src}" aria-label="${label}"></audio></figure>`,
        csp,
      };
    case 'video':
      return {
        block: html`<figure class="preview preview-video"><video controls preload="metadata" src="${src}" aria-label="${label}"></video></figure>`,
        csp,
      };
    case 'text':
      // An empty sandbox: the text document gets an opaque origin and can run nothing.
      return { block: html`<iframe class="preview-frame" sandbox src="${src}" title="${label}"></iframe>`, csp };
    case 'pdf':
      // No sandbox attribute: Chromium and Firefox refuse to show a PDF in a sandboxed
      // frame. The preview response itself carries CSP `sandbox` (preview.ts), which
      // gives the PDF document the same opaque origin and is honoured by the viewers.
      return {
        block: html`<iframe class="preview-frame pdf" src="${src}" title="${label}"></iframe>
<p class="meta fine-print">No preview above? Some browsers do not show PDFs inside a page; use the download button.</p>`,
        csp,
      };
  }
}

/**
 * OpenGraph and Twitter card tags, so a shared link unfurls in chat apps: the name, size
 * and date, the page's absolute address (from {web_url}: crawlers never see a relative
 * one) and, for an image small enough to embed, the image itself through its preview URL.
 * Everything is escaped by html``, like the page.
 */
export function socialTags(context: Context, file: FileRecord): Html {
  const url = context.links.download(file);
  const description = `${humanSize(file.size)} · uploaded ${humanDate(file.createdAt)}`;
  const preview = previewOf(file.name);
  const image = preview?.kind === 'image' && file.size <= preview.maxEmbedBytes ? { url: `${url}?preview=1`, type: preview.contentType } : null;
  return html`
<meta name="description" content="${file.name} · ${description}">
<meta property="og:type" content="website">
<meta property="og:site_name" content="filehaven">
<meta property="og:title" content="${file.name}">
<meta property="og:description" content="${description}">
<meta property="og:url" content="${url}">${
    image
      ? html`
<meta property="og:image" content="${image.url}">
<meta property="og:image:type" content="${image.type}">
<meta property="og:image:alt" content="Preview of ${file.name}">`
      : ''
  }
<meta name="twitter:card" content="${image ? 'summary_large_image' : 'summary'}">
<meta name="twitter:title" content="${file.name}">
<meta name="twitter:description" content="${description}">${
    image
      ? html`
<meta name="twitter:image" content="${image.url}">`
      : ''
  }`;
}

/** The copy part: a form for a signed-in visitor, a note for the owner, a sign-in hint otherwise. */
function copyBlock(request: FastifyRequest, file: FileRecord, path: string): Html {
  const session = request.webSession;
  if (!session) return html`<p class="meta copy-hint"><a href="${signInUrl(path)}">Sign in</a> to copy this file into your own account.</p>`;
  if (session.account.id === file.ownerId)
    return html`<p class="meta copy-hint">This file is in your account: see <a href="${myFilesUrl(file.folderId)}">My files</a>.</p>`;
  return html`<form class="copy-form" method="post" action="${copyPath(file)}">
<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">
<button class="button secondary" type="submit">Copy to my account</button>
<span class="meta">Adds a copy with its own link to your files; nothing is uploaded again.</span>
</form>`;
}

/**
 * download_link (API.md 1): name, size, upload date, a preview for safe types, the
 * download button and "copy to my account". The page's CSP grows by exactly the one
 * source its preview element needs.
 */
export function sendDownloadPage(context: Context, request: FastifyRequest, reply: FastifyReply, file: FileRecord): FastifyReply {
  const { block, csp } = previewBlock(file, `${pagePath(context, file)}?preview=1`);
  const copied = (request.query as Record<string, unknown>).copied !== undefined && request.webSession?.account.id === file.ownerId;
  return sendPage(
    reply,
    200,
    file.name,
    html`<section class="card file-card">
${copied ? html`<p class="notice ok" role="status">Copied into your account. This copy has its own link, the address of this page.</p>` : ''}
<h1>${file.name}</h1>
<p class="meta">${humanSize(file.size)} · uploaded ${humanDate(file.createdAt)}</p>
${block}
<p class="download-row"><a class="button big" href="${context.links.download(file)}?download=1" download>Download <span class="button-note">${humanSize(file.size)}</span></a></p>
${copyBlock(request, file, pagePath(context, file))}
</section>`,
    pageCsp(csp),
    socialTags(context, file),
  );
}

/**
 * `?preview=1`: the bytes inline, only for the allowlisted types of preview.ts (404
 * otherwise), with the exact type, nosniff and a sandboxing CSP; Range and conditional
 * requests as for downloads (media seeking). Previews are free downloads too: the same
 * per-address slots and speed cap, so they are no way around them.
 */
export async function sendPreview(context: Context, request: FastifyRequest, reply: FastifyReply, file: FileRecord): Promise<FastifyReply> {
  const preview = previewOf(file.name);
  if (!preview) {
    return sendErrorPage(reply, 404, 'No preview', 'Files of this type are not shown in the browser. Use the download button on the file’s page instead.');
  }
  // Looking at a preview is not a download start (expiry counts those); its bytes are traffic.
  return sendDownload(context.services.downloads, request, reply, file, {
    requester: { link: 'public', address: request.ip },
    purpose: 'preview',
    headers: {
      'Content-Type': preview.contentType,
      'Content-Disposition': contentDisposition(file.name, { type: 'inline' }),
      'Content-Security-Policy': previewCsp(preview.kind),
    },
  });
}

/**
 * "Copy to my account" (the copy operation of SPEC.md, for a signed-in browser): a
 * CSRF-checked form POST; then the copy's own download page.
 */
export function registerCopyToAccount(app: FastifyInstance, context: Context): void {
  app.post(
    '/:id/copy',
    {
      config: { web: true },
      preHandler: [
        // Not a file id: an unknown path like any other (API clients get Atom).
        async (request: FastifyRequest, reply: FastifyReply) => {
          if (ID_PATTERN.test((request.params as { id: string }).id)) return undefined;
          reply.callNotFound();
          return reply;
        },
        requireSessionForm(context),
      ],
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const { file } = await context.services.files.copy(request.webSession!.account, id);
      return redirectTo(reply, `${pagePath(context, file)}?copied=1`);
    },
  );
}
