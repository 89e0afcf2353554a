#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so `npx filehaven` works right after
// `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
