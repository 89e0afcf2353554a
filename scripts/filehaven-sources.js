#!/usr/bin/env node
// `filehaven` from the TypeScript sources (through tsx), whatever dist/ holds: what the
// tests start when scripts/run-tests.js has not built them a copy (one test file run on
// its own), so an edit is tested at once and never a stale build.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
