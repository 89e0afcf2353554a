import assert from 'node:assert/strict';
import { get } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { browserEntrySource, bundleBrowserScript } from '../../src/http/web/browser-bundle.js';
import { browserScript } from '../../src/http/web/browser-scripts.js';
import { Browser } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The site's own browser scripts (issue 23): TypeScript in src/http/web/browser/, bundled
// with the server modules they share by esbuild (here, run from sources, at start; a build
// writes the same bundle, test/cli/build.test.ts). Served from the site ('self' only, as
// the CSP says) at a URL with the content's hash: cached for a year, with an ETag.

/** A GET with If-None-Match, as a browser revalidates (fetch() would add Cache-Control: no-cache). */
const revalidate = (url: string, etag: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    get(url, { headers: { 'If-None-Match': etag } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    }).on('error', reject);
  });

describe('the browser scripts', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t?.close());

  test('each page loads its bundle from the site, at a URL with its hash; the bundles are the sources through esbuild', async () => {
    const user = await t.account();
    const b = new Browser(t.url);
    await b.signIn(user.login, user.password);
    for (const [page, name] of [
      ['/my/files', 'my-files'],
      ['/', 'my-files'],
      ['/accounts/profile/misc', 'profile'],
    ] as const) {
      const answer = await b.get(page);
      assert.equal(answer.status, 200, page);
      const src = new RegExp(`<script src="(/static/${name}\\.[0-9a-f]{16}\\.js)" defer></script>`).exec(answer.body)?.[1];
      assert.equal(src, browserScript(name).path, `${page}: ${answer.body}`);
      assert.match(answer.response.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    }
    for (const name of ['my-files', 'profile'] as const) {
      const served = await t.fetch(browserScript(name).path);
      assert.equal(served.status, 200);
      const body = await served.text();
      assert.equal(body, bundleBrowserScript(browserEntrySource(name)));
      // A classic script (an IIFE) with nothing of Node in it.
      assert.match(body, /^"use strict";\(\(\)=>\{/);
      assert.doesNotMatch(body, /\brequire\(|node:|process\.env/);
    }
    // The uploader's words are the server's own module (upload-messages.ts), not a copy.
    assert.ok((await t.fetch(browserScript('my-files').path).then((r) => r.text())).includes('larger than the limit of'));
  });

  test('served immutable with an ETag; If-None-Match gets a 304; HEAD works; the old unhashed URLs are gone', async () => {
    for (const name of ['my-files', 'profile'] as const) {
      const { path, etag } = browserScript(name);
      const response = await t.fetch(path);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
      assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(response.headers.get('etag'), etag);
      assert.match(etag, /^"[0-9a-f]{32}"$/);
      await response.arrayBuffer();
      assert.deepEqual(await revalidate(`${t.url}${path}`, etag), { status: 304, body: '' });
      const head = await t.fetch(path, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('etag'), etag);
      assert.equal((await t.fetch(path.replace(/\.[0-9a-f]{16}\.js$/, '.0000000000000000.js'))).status, 404);
    }
    for (const old of ['/static/my-files.js', '/static/upload-text.js', '/static/profile.js']) {
      const response = await t.fetch(old);
      await response.arrayBuffer();
      assert.notEqual(response.headers.get('content-type'), 'text/javascript; charset=utf-8', old);
    }
  });
});
