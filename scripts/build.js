#!/usr/bin/env node
// `npm run build` (and `npm install`, through `prepare`): compiles src/ to dist/, what
// `npm start` and `npx filehaven` run, and copies the site's static files beside the
// modules that read them. The tests build their own copy (scripts/run-tests.js).
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';

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
cpSync(path.join(root, 'src', 'http', 'web', 'static'), path.join(out, 'http', 'web', 'static'), { recursive: true });
