import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { get } from 'node:http';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { TUS_CLIENT_PATH } from '../../src/http/web/tus-client-script.js';
import { UPLOAD_PAGE_CSP } from '../../src/http/web/upload-form.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// tus-js-client's browser build, served by the site (no CDN: the page's CSP allows only
// 'self'): a URL with the version and the content's hash, cached for a year, an ETag, and
// the package's own file with only its source-map comment left out.

describe('the tus-js-client script', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t?.close());

  test('its URL names the package version and a hash of the content', () => {
    const { version } = createRequire(import.meta.url)('tus-js-client/package.json') as { version: string };
    assert.match(TUS_CLIENT_PATH, new RegExp(`^/static/tus-js-client-${version.replace(/\./g, '\\.')}\\.[0-9a-f]{16}\\.min\\.js$`));
  });

  test('served immutable with an ETag; If-None-Match gets a 304; HEAD works', async () => {
    const response = await t.fetch(TUS_CLIENT_PATH);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const etag = response.headers.get('etag');
    assert.match(etag ?? '', /^"[0-9a-f]{32}"$/);
    const body = await response.text();
    const original = await readFile(createRequire(import.meta.url).resolve('tus-js-client/dist/tus.min.js'), 'utf8');
    assert.ok(original.includes('//# sourceMappingURL='), 'the package still carries its map comment (else this test checks nothing)');
    assert.equal(body, original.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n'));
    assert.doesNotMatch(body, /sourceMappingURL/);

    // A browser's revalidation (fetch() would add Cache-Control: no-cache, an end-to-end reload).
    const again = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      get(`${t.url}${TUS_CLIENT_PATH}`, { headers: { 'If-None-Match': etag! } }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      }).on('error', reject);
    });
    assert.equal(again.status, 304);
    assert.equal(again.body, '');
    const head = await t.fetch(TUS_CLIENT_PATH, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('etag'), etag);
  });

  test('another hash is not served, and the page policy allows the script and its requests', async () => {
    const stale = TUS_CLIENT_PATH.replace(/\.[0-9a-f]{16}\.min\.js$/, '.0000000000000000.min.js');
    assert.equal((await t.fetch(stale)).status, 404);
    assert.match(UPLOAD_PAGE_CSP, /script-src 'self'/);
    assert.match(UPLOAD_PAGE_CSP, /connect-src 'self'/);
  });
});
