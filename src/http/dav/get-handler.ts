import { html } from '../html.js';
import { sendDownload } from '../send-download.js';
import type { DavExchange } from './dav-exchange.js';
import { requireResource } from './dav-write.js';

/**
 * GET and HEAD (RFC 4918 9.4). A file's bytes go through the download use case as the
 * owner's own read (requester.ts 'owner': no free slot or speed cap, no traffic, no
 * download start; the tree holds only the owner's files), with sendFile's HTTP: Range, the ETag "<sha256>", If-None-Match / If-Modified-Since, streamed
 * at flat memory. The bytes stay an attachment with nosniff, never inline HTML of this
 * site's origin. A collection answers a small HTML list of its members (absolute links: dav.href).
 */
export async function handleGet(dav: DavExchange): Promise<unknown> {
  const resource = await requireResource(dav);
  const { request, reply } = dav;
  if (resource.kind === 'file') {
    return sendDownload(dav.context.services.downloads, request, reply, resource.file, {
      requester: { link: 'owner', account: dav.owner },
      purpose: 'download',
    });
  }
  const children = await dav.context.services.dav.tree.children(dav.owner, resource);
  const title = resource.path.text;
  const page = html`<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title></head>
<body><h1>${title}</h1>
<ul>
${children.map((child) => html`<li><a href="${dav.href(child.path, child.kind !== 'file')}">${child.path.names.at(-1) ?? ''}${child.kind === 'file' ? '' : '/'}</a></li>\n`)}</ul>
</body></html>
`;
  return reply
    .code(200)
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', "default-src 'none'")
    .header('X-Content-Type-Options', 'nosniff')
    .send(request.method === 'HEAD' ? undefined : page.value);
}
