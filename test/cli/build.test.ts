import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BROWSER_ENTRIES, browserEntrySource, bundleBrowserScript } from '../../src/http/web/browser-bundle.js';
import { staticScript } from '../../src/http/web/browser-scripts.js';
import { cleanEnv } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `npm start` runs the compiled dist/ (what production runs: ~50 MiB less than compiling
 * TypeScript at run time). The build must produce a server that starts and serves the site
 * with its static files and the API; built into a temp folder, dist/ is left alone.
 */
test('the build compiles a server that serves pages, static files and the API', async () => {
  // Inside the checkout, so the compiled modules find node_modules as dist/ does.
  await mkdir(path.join(ROOT, 'test-output'), { recursive: true });
  const work = await mkdtemp(path.join(ROOT, 'test-output', 'build-'));
  try {
    const out = path.join(work, 'dist');
    // scripts/run-tests.js has just run this same build for the whole run (FILEHAVEN_TEST_ENTRY
    // is its cli/index.js): a copy of it is what `npm run build` makes, without compiling
    // everything a second time. Run alone, the test builds.
    const built = process.env.FILEHAVEN_TEST_ENTRY;
    if (built) {
      cpSync(path.dirname(path.dirname(built)), out, { recursive: true });
    } else {
      const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.js'), '--out', out], { encoding: 'utf8' });
      assert.equal(build.status, 0, build.stdout + build.stderr);
    }
    // `npx filehaven` (bin/filehaven.js) runs the compiled CLI beside it: here there are no
    // sources for it to fall back on, so only dist/ can answer.
    await mkdir(path.join(work, 'bin'));
    await copyFile(path.join(ROOT, 'bin', 'filehaven.js'), path.join(work, 'bin', 'filehaven.js'));
    const help = spawnSync(process.execPath, [path.join(work, 'bin', 'filehaven.js'), 'help'], { cwd: work, env: cleanEnv(), encoding: 'utf8' });
    assert.equal(help.status, 0, help.stdout + help.stderr);
    assert.match(
      help.stdout,
      /^usage:\n\nFor users of a filehaven site[\s\S]*\n {2}filehaven login [\s\S]*For operators of this server[\s\S]*\n {2}filehaven serve /,
    );

    // The SDK as a program imports it: `filehaven/client` through package.json "exports",
    // the compiled module and its declarations.
    await copyFile(path.join(ROOT, 'package.json'), path.join(work, 'package.json'));
    await writeFile(
      path.join(work, 'consumer.mjs'),
      "import { FilehavenClient, FilehavenApiError } from 'filehaven/client';\nconsole.log(typeof FilehavenClient, new FilehavenApiError('errorFileNotFound', 404, 'x').code);\n",
    );
    const consumer = spawnSync(process.execPath, [path.join(work, 'consumer.mjs')], { cwd: work, env: cleanEnv(), encoding: 'utf8' });
    assert.equal(consumer.stdout + consumer.stderr, 'function errorFileNotFound\n');
    await writeFile(
      path.join(work, 'consumer.ts'),
      "import { FilehavenClient, type AccountInfo } from 'filehaven/client';\nconst client = new FilehavenClient({ server: 'http://127.0.0.1:8080', key: 'k' });\nexport const account: Promise<AccountInfo> = client.account();\n// @ts-expect-error: the SDK's types reach the consumer\nexport const wrong: Promise<number> = client.account();\n",
    );
    const typed = spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        '--typeRoots',
        path.join(ROOT, 'node_modules', '@types'),
        path.join(work, 'consumer.ts'),
      ],
      { cwd: work, encoding: 'utf8' },
    );
    assert.equal(typed.status, 0, typed.stdout + typed.stderr);
    const server = spawn(
      process.execPath,
      [path.join(out, 'cli', 'index.js'), 'serve', '--port', '0', '--data', path.join(work, 'data'), '--log-level', 'warn'],
      {
        cwd: work,
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let seen = '';
        server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          seen += chunk;
          const match = /listening on (http:\/\/\S+)/.exec(seen);
          if (match) resolve(match[1]!);
        });
        let errors = '';
        server.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
        server.on('exit', (code) => reject(new Error(`server exited ${code}: ${seen}${errors}`)));
      });
      const home = await fetch(`${url}/`, { headers: { Accept: 'text/html' } });
      assert.equal(home.status, 200);
      assert.match(await home.text(), /<!doctype html>/);
      const css = await fetch(`${url}/static/site.css`);
      assert.equal(css.status, 200);
      assert.match(await css.text(), /--accent/);
      // The browser scripts: bundled by the build into static/, read by the built server
      // (which never loads esbuild), the same bytes and so the same URL as from sources.
      for (const name of BROWSER_ENTRIES) {
        const fromSources = staticScript(name, bundleBrowserScript(browserEntrySource(name)));
        const served = await fetch(`${url}${fromSources.path}`);
        assert.equal(served.status, 200, name);
        assert.equal(await served.text(), fromSources.source);
      }
      const account = await fetch(`${url}/account`);
      assert.equal(account.status, 401);
      assert.match(await account.text(), /<title>errorPermissionDenied<\/title>\s*<content type="text">Wrong apikey<\/content>/);
    } finally {
      server.kill('SIGTERM');
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
