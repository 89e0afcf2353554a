import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import fresh from 'fresh';
import { type BrowserEntry, browserEntrySource, bundleBrowserScript } from './browser-bundle.js';

/** A script the site serves itself (the page's CSP allows scripts from 'self' only). */
export interface StaticScript {
  /** Its URL: the name and a hash of the content, so a new version is a new URL. */
  readonly path: string;
  /** The JavaScript. */
  readonly source: string;
  /** A strong ETag of the content, for a revalidating cache. */
  readonly etag: string;
}

/** A script at /static/<name>.<first 16 hex of its SHA-256><extension>. */
export function staticScript(name: string, source: string, extension = '.js'): StaticScript {
  const digest = createHash('sha256').update(source).digest('hex');
  return { path: `/static/${name}.${digest.slice(0, 16)}${extension}`, source, etag: `"${digest.slice(0, 32)}"` };
}

/**
 * GET (and HEAD) of a script: cached for a year as immutable (its URL changes with its
 * content), with its ETag, so a revalidation (a reload) gets a 304.
 */
export function registerStaticScript(app: FastifyInstance, script: StaticScript): void {
  app.get(script.path, async (request, reply) => {
    reply.headers({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=31536000, immutable',
      ETag: script.etag,
      'X-Content-Type-Options': 'nosniff',
    });
    if (fresh(request.headers, { etag: script.etag })) return reply.code(304).send();
    return reply.send(script.source);
  });
}

/** Run from sources (tsx: this module is the .ts file), the bundles are made here; built, they are read. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');

const scripts = new Map<BrowserEntry, StaticScript>();

/**
 * One of the browser bundles (browser-bundle.ts): in a build, the file scripts/build.js
 * wrote beside this module (static/<name>.js; missing is an error, never a silent
 * fallback); from sources, bundled from browser/<name>.ts by esbuild on first use, so an
 * edit shows at the next start without a build. Made once per process.
 */
export function browserScript(name: BrowserEntry): StaticScript {
  let script = scripts.get(name);
  if (!script) {
    const source = FROM_SOURCES ? bundleBrowserScript(browserEntrySource(name)) : readFileSync(new URL(`./static/${name}.js`, import.meta.url), 'utf8');
    script = staticScript(name, source);
    scripts.set(name, script);
  }
  return script;
}
