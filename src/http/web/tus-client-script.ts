import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { registerStaticScript, staticScript } from './browser-scripts.js';

const fromHere = createRequire(import.meta.url);
const { version } = fromHere('tus-js-client/package.json') as { version: string };

/**
 * tus-js-client's browser build (a dependency, so it ships with every install), served by
 * the site itself: the page's CSP allows scripts from 'self' only, and no upload page
 * should depend on a CDN. Its source-map comment is dropped: the map is not served, and a
 * browser's developer tools would otherwise ask for a missing file. It stays a script of
 * its own, beside the site's bundle: it changes only with the package, so a browser keeps
 * it cached across the site's own updates. Its URL names the version and the content's
 * hash (/static/tus-js-client-<version>.<hash>.min.js).
 */
const script = staticScript(
  `tus-js-client-${version}`,
  readFileSync(fromHere.resolve('tus-js-client/dist/tus.min.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n'),
  '.min.js',
);

export const TUS_CLIENT_PATH = script.path;

/** GET (and HEAD) of TUS_CLIENT_PATH: immutable, with an ETag for a revalidating cache (304). */
export function registerTusClientScript(app: FastifyInstance): void {
  registerStaticScript(app, script);
}
