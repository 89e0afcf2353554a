import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The site's browser scripts: TypeScript in ./browser/ (type-checked by its own
 * tsconfig.json, DOM and no Node), each entry bundled with what it imports (the same
 * helpers the server uses: units.ts, format.ts, upload-messages.ts) into one classic
 * script. `npm run build` writes the bundles beside the compiled server (scripts/build.js
 * calls bundleBrowserScript from there); a server run from sources through tsx bundles
 * them itself when first asked (browser-scripts.ts). Both go through this one function, so
 * they serve the same bytes.
 */
export const BROWSER_ENTRIES = ['my-files', 'passkeys', 'profile', 'request-upload'] as const;

export type BrowserEntry = (typeof BROWSER_ENTRIES)[number];

/** The source of an entry, ./browser/<name>.ts beside this module in src/. */
export function browserEntrySource(name: BrowserEntry, sourceDir = fileURLToPath(new URL('./browser/', import.meta.url))): string {
  return `${sourceDir.replace(/\/?$/, '/')}${name}.ts`;
}

/**
 * Bundles one entry into a minified script (an IIFE: the pages load it with `<script
 * defer>`; no module loader, no source map, as the map would not be served). Synchronous:
 * the server bundles at most once per script and process, when it first needs the URL.
 * `esbuild` is the caller's copy (scripts/build.js passes its own, for a build written
 * outside the checkout, where this module could not resolve the package); by default it
 * is loaded here, not at the top: a built server reads the prebuilt bundles and never
 * loads esbuild.
 */
export function bundleBrowserScript(entryFile: string, esbuild: Pick<typeof import('esbuild'), 'buildSync'> = loadEsbuild()): string {
  const result = esbuild.buildSync({
    entryPoints: [entryFile],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    // What the scripts use (`??=`, class fields, :is() in selectors); every current browser has it.
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild wrote nothing for ${entryFile}`);
  return output.text;
}

function loadEsbuild(): typeof import('esbuild') {
  return createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
}
