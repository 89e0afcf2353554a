import type { FastifyInstance } from 'fastify';
import fresh from 'fresh';
import type { FileRecord } from '../../domain/types.js';
import { thumbnailKey } from '../../services/thumbnails-service.js';
import type { HttpContext } from '../context.js';
import { sendErrorPage } from './layout.js';

/** The services this module calls. */
type Context = HttpContext<'thumbnails'>;

/**
 * The URL of a file's thumbnail (`/thumb/<file id>/<version>-<digest prefix>`), for pages
 * that show one (My files' grid, a public file page). Safe to use for any file: content
 * without a thumbnail answers an icon.
 */
export const thumbnailPath = (file: Pick<FileRecord, 'id' | 'sha256'>) => `/thumb/${file.id}/${thumbnailKey(file)}`;

/** A year: the URL changes whenever the answer could (RFC 8246 immutable). */
const IMMUTABLE = 'private, max-age=31536000, immutable';

/**
 * What files without a thumbnail show: a plain document icon, the site's own markup
 * (fixed text, nothing from the file), so it is safe to serve from the site's origin.
 */
const FALLBACK_ICON = Buffer.from(
  `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 64 64" role="img" aria-label="No preview">
<path d="M16 6h22l12 12v38a2 2 0 0 1-2 2H16a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2z" fill="#eef1f5" stroke="#8a94a6" stroke-width="2"/>
<path d="M38 6v12h12" fill="none" stroke="#8a94a6" stroke-width="2"/>
</svg>
`,
);

/**
 * `GET /thumb/<id>/<key>` (docs/web.md "Thumbnails"): the thumbnail of an active file, for
 * whoever may see the file's page (anyone with its id, its owner among them); blocked and
 * deleted files have none (404). Made on first request and stored; answered with a strong
 * ETag and immutable caching, private so a shared cache never keeps a file the operator
 * blocks later. A file whose content has no thumbnail gets an icon, cached the same way
 * when that cannot change, not cached at all after a failure worth trying again.
 * Thumbnails are not counted as downloads and take no download slot: their size is
 * bounded, and making them is bounded by the service's own queue.
 */
export function registerThumbnailRoute(app: FastifyInstance, context: Context): void {
  const { services } = context;
  app.get('/thumb/:id/:key', { config: { web: true } }, async (request, reply) => {
    const { id, key } = request.params as { id: string; key: string };
    const target = await services.thumbnails.target(id, key);
    if (target.kind === 'missing') return sendErrorPage(reply, 404, 'No thumbnail', 'This file does not exist, was deleted or is blocked.');
    // Another digest or version: an old or made-up URL, never an answer to cache under it.
    if (target.kind === 'outdated') return sendErrorPage(reply, 404, 'No thumbnail', 'This thumbnail address is out of date.');
    const { file } = target;

    const etag = `"thumb-${thumbnailKey(file)}"`;
    reply.headers({ 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" });
    if (fresh(request.headers, { etag })) return reply.code(304).headers({ ETag: etag, 'Cache-Control': IMMUTABLE }).send();

    const thumbnail = await services.thumbnails.of(file);
    if (thumbnail.kind === 'image') {
      return reply.headers({ 'Content-Type': thumbnail.contentType, ETag: etag, 'Cache-Control': IMMUTABLE }).send(thumbnail.bytes);
    }
    reply.header('Content-Type', 'image/svg+xml');
    if (thumbnail.lasting) reply.headers({ ETag: etag, 'Cache-Control': IMMUTABLE });
    else reply.header('Cache-Control', 'no-store');
    return reply.send(FALLBACK_ICON);
  });
}
