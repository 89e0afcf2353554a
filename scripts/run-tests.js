#!/usr/bin/env node
// Runs every test/**/*.test.ts with node's test runner through tsx (Node 20 has no glob
// support in --test). Extra arguments are passed on (e.g. a file to run alone).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return find(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

const picked = process.argv.slice(2);
const files = picked.length > 0 ? picked : find('test').sort();
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
