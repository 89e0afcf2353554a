#!/usr/bin/env node
// `npx filehaven`: the compiled CLI (dist/, built by `npm install` through the `prepare`
// script, and again by every `npm start`). A checkout that has not been built yet runs
// the TypeScript sources through tsx instead, slower to start but the same program.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/index.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/index.ts');
}
