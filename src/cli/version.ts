import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The version in filehaven's package.json: the first one found going up from this module,
 * which is two folders up from src/cli and dist/cli alike, and more from a test build.
 */
export function filehavenVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'filehaven' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json here (or not ours): look further up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
