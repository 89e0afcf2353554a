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
//
// Then the tree is bundled for the run (bundleForRun): the `filehaven` the tests start (CLI
// commands, child servers: FILEHAVEN_TEST_CLI) and every test file, which run-tests.js runs
// from test-bundle/. Node resolved, read and linked some 500 module files at each start.
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
  await bundleForRun(esbuild, out);
  return files.length;
}

/**
 * Packages never bundled, loaded from node_modules as before: native addons (found through
 * their own folder), esbuild (its binary), pg's optional native half.
 */
const NOT_BUNDLED = ['better-sqlite3', 'sharp', 'esbuild', 'pg-native'];
/** What in a package's file finds files beside it, which a bundle's chunk would not. */
const FINDS_ITS_FILES = /__dirname|__filename|import\.meta|require\.resolve/;

/** The top-level package of a file under node_modules ("@aws-sdk/client-s3"), else null. */
function packageOf(file) {
  const parts = file.split(path.sep);
  const at = parts.indexOf('node_modules');
  if (at < 0) return null;
  return parts[at + 1].startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1];
}

/**
 * Bundles `entryPoints` (name -> file) of the tree at `out` into `outdir`, split into chunks
 * so what an entry loads on first use stays unloaded until then. Every module of src/ and
 * test/ keeps its own import.meta.url (its file in the tree), so what it reads beside itself
 * (the site's static files, docs, fixtures, package.json) it finds where it did unbundled.
 * A package whose files use __dirname, import.meta or require.resolve (pino's worker,
 * playwright's files) stays in node_modules, found by a first pass that writes nothing.
 */
async function bundle(esbuild, entryPoints, outdir) {
  const flagged = new Set();
  const ownUrl = {
    name: 'own-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        const owner = packageOf(args.path);
        if (owner !== null) {
          if (FINDS_ITS_FILES.test(text)) flagged.add(owner);
          return undefined;
        }
        return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'js' };
      });
    },
  };
  const options = {
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [ownUrl],
    // The CommonJS packages in the bundle call require() for Node's own modules and the packages left out.
    banner: { js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);" },
    logLevel: 'error',
  };
  await esbuild.build({ ...options, external: NOT_BUNDLED, write: false });
  await esbuild.build({ ...options, external: [...NOT_BUNDLED, ...flagged] });
}

/**
 * The bundles the run starts: `<out>/cli-bundle/index.js`, the `filehaven` of the CLI, crash
 * and fuzz tests (FILEHAVEN_TEST_CLI), and `<out>/test-bundle/test/**.test.js`, each test file
 * bundled. Node resolved, read and linked about 500 module files at each start: 0.45 s of
 * CPU of a CLI command (0.2 s bundled), 0.65 s of a test file's importing its server helper
 * (0.16 s bundled).
 */
async function bundleForRun(esbuild, out) {
  await bundle(esbuild, { index: path.join(out, 'src', 'cli', 'index.js') }, path.join(out, 'cli-bundle'));
  const tests = typescriptFiles(path.join(out, 'test'))
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => file.replace(/\.ts$/, '.js'));
  await bundle(esbuild, Object.fromEntries(tests.map((file) => [path.relative(out, file).replace(/\.js$/, ''), file])), path.join(out, 'test-bundle'));
}

// Run as a script: `node scripts/test-tree.js OUT` (what run-tests.js does as one of its gates).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const out = path.resolve(process.argv[2] ?? path.join(root, 'test-output', 'test-tree'));
  const count = await buildTestTree(root, out);
  console.log(`compiled ${count} files into ${out}`);
}
