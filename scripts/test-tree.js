// The compiled tree the full test run (scripts/run-tests.js) runs: a copy of src/ and test/
// with every .ts file compiled beside itself to .js by esbuild (types stripped, nothing
// bundled), the browser scripts bundled into src/http/web/static/ as scripts/build.js does,
// and every other top-level entry of the checkout (docs, bench, scripts, node_modules,
// package.json, test-output, ...) linked in, so paths a test derives from its own place
// (`new URL('../../docs/api.md', import.meta.url)`) land where they do in the checkout.
//
// Why: loading TypeScript through tsx costs each test process more CPU than many tests
// themselves spend (the loader thread, the transforms, the source maps; about 2.5 s of CPU
// per file on the 2-core machine, measured in session 13), and the run is bound by the CPU.
// Compiling the 500-odd files once takes about a second. The files a developer runs alone
// (`node scripts/run-tests.js FILE`) still go through tsx, with exact line numbers.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The .ts files (not .d.ts) under a folder. */
function typescriptFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return typescriptFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Builds the tree at `out` (removed first) from the checkout at `root`; returns how many files it compiled. */
export async function buildTestTree(root, out) {
  const esbuild = await import('esbuild');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  // dist/ too when it does not exist yet: a test may build it (the bench does) and then run it from here.
  for (const entry of new Set([...readdirSync(root), 'dist'])) {
    if (entry === 'src' || entry === 'test' || entry === '.git') continue;
    symlinkSync(path.join(root, entry), path.join(out, entry));
  }
  for (const dir of ['src', 'test']) cpSync(path.join(root, dir), path.join(out, dir), { recursive: true });
  // The project's own settings, so class fields and imports compile as tsc would have them.
  const { compilerOptions } = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
  const tsconfigRaw = { compilerOptions: { target: compilerOptions.target, verbatimModuleSyntax: compilerOptions.verbatimModuleSyntax } };
  const files = [...typescriptFiles(path.join(out, 'src')), ...typescriptFiles(path.join(out, 'test'))];
  for (const file of files) {
    const { code } = esbuild.transformSync(readFileSync(file, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', tsconfigRaw, sourcefile: file });
    writeFileSync(file.replace(/\.ts$/, '.js'), code);
  }
  // Built, browser-scripts.js reads the bundles beside it (static/<name>.js) rather than bundle at run time.
  const { BROWSER_ENTRIES, browserEntrySource, bundleBrowserScript } = await import(
    pathToFileURL(path.join(out, 'src', 'http', 'web', 'browser-bundle.js')).href
  );
  const sources = path.join(out, 'src', 'http', 'web', 'browser');
  for (const name of BROWSER_ENTRIES) {
    writeFileSync(path.join(out, 'src', 'http', 'web', 'static', `${name}.js`), bundleBrowserScript(browserEntrySource(name, sources), esbuild));
  }
  return files.length;
}

// Run as a script: `node scripts/test-tree.js OUT` (what run-tests.js does as one of its gates).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const out = path.resolve(process.argv[2] ?? path.join(root, 'test-output', 'test-tree'));
  const count = await buildTestTree(root, out);
  console.log(`compiled ${count} files into ${out}`);
}
