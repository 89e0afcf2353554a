#!/usr/bin/env node
// `npm run build` (and `npm install`, through `prepare`): compiles src/ to dist/, what
// `npm start` and `npx filehaven` run, copies the site's static files beside the modules
// that read them, and bundles the browser scripts (src/http/web/browser/*.ts) into
// dist/http/web/static/<name>.js with esbuild, through the compiled browser-bundle.js: the
// same function and options a server run from sources bundles with. The tests build their
// own copy (scripts/run-tests.js).
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// `--out DIR` builds elsewhere (the test of the build does, leaving dist/ alone).
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const outFlag = process.argv.indexOf('--out');
const out = outFlag > 0 ? path.resolve(process.argv[outFlag + 1]) : path.join(root, 'dist');
rmSync(out, { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json'), '--outDir', out],
  { stdio: 'inherit' },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
const staticOut = path.join(out, 'http', 'web', 'static');
cpSync(path.join(root, 'src', 'http', 'web', 'static'), staticOut, { recursive: true });
const { BROWSER_ENTRIES, browserEntrySource, bundleBrowserScript } = await import(pathToFileURL(path.join(out, 'http', 'web', 'browser-bundle.js')).href);
const sources = path.join(root, 'src', 'http', 'web', 'browser');
// This checkout's esbuild: `--out` may be a folder with no node_modules above it.
const esbuild = await import('esbuild');
for (const name of BROWSER_ENTRIES) writeFileSync(path.join(staticOut, `${name}.js`), bundleBrowserScript(browserEntrySource(name, sources), esbuild));
