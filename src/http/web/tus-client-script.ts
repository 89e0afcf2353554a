import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import fresh from 'fresh';

const fromHere = createRequire(import.meta.url);
const { version } = fromHere('tus-js-client/package.json') as { version: string };

/**
 * tus-js-client's browser build (a dependency, so it ships with every install), served by
 * the site itself: the page's CSP allows scripts from 'self' only, and no upload page
 * should depend on a CDN. Its source-map comment is dropped: the map is not served, and a
 * browser's developer tools would otherwise ask for a missing file.
 */
const source = readFileSync(fromHere.resolve('tus-js-client/dist/tus.min.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n');
const digest = createHash('sha256').update(source).digest('hex');

/**
 * Its URL names the version and the content's hash, so it can be cached for a year: an
 * update of the package is a new URL, never a stale copy in a browser.
 */
export const TUS_CLIENT_PATH = `/static/tus-js-client-${version}.${digest.slice(0, 16)}.min.js`;

const ETAG = `"${digest.slice(0, 32)}"`;

/** GET (and HEAD) of TUS_CLIENT_PATH: immutable, with an ETag for a revalidating cache (304). */
export function registerTusClientScript(app: FastifyInstance): void {
  app.get(TUS_CLIENT_PATH, async (request, reply) => {
    reply.headers({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=31536000, immutable',
      ETag: ETAG,
      'X-Content-Type-Options': 'nosniff',
    });
    if (fresh(request.headers, { etag: ETAG })) return reply.code(304).send();
    return reply.send(source);
  });
}
