// The SDK stands alone (STYLE.md: src/client imports nothing from the server) and knows
// every error code the server can send.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { API_ERROR_CODES } from '../../src/client/index.js';
import { ERROR_MEANINGS } from '../../src/domain/errors.js';

const CLIENT = fileURLToPath(new URL('../../src/client/', import.meta.url));

test("the SDK's error codes are the server's catalogue", () => {
  assert.deepEqual([...API_ERROR_CODES].sort(), Object.keys(ERROR_MEANINGS).sort());
});

test('src/client imports only its own modules, node: built-ins, its two parser packages and the tus client', async () => {
  const allowed = new Set(['fast-xml-parser', 'content-disposition', 'tus-js-client']);
  for (const name of await readdir(CLIENT)) {
    const source = await readFile(`${CLIENT}${name}`, 'utf8');
    // `import x from 'y'`, `export … from "y"`, a bare `import 'y'` and `import('y')`, either quote.
    const specifiers = source.matchAll(/(?:^\s*(?:import|export)\s[^;]*?from\s+|^\s*import\s+|import\(\s*)(['"])([^'"]+)\1/gm);
    for (const match of specifiers) {
      const target = match[2]!;
      const ok = (target.startsWith('./') && !target.includes('..')) || target.startsWith('node:') || allowed.has(target);
      assert.ok(ok, `${name} imports ${target}`);
    }
  }
});
