import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

// What a page says about itself to browsers and chat apps: OpenGraph/Twitter tags on
// download pages (absolute URLs from {web_url}, escaped) and the favicon.

const WEB_URL = 'https://files.example.test';
// A tiny valid PNG (1×1).
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
let t: TestServer;

before(async () => {
  t = await startTestServer({ webUrl: WEB_URL });
});
after(() => t.close());

/** The content of `<meta property|name="key" content="...">`, or undefined. */
const meta = (body: string, key: string) => new RegExp(`<meta (?:property|name)="${key.replace(/[.:]/g, '\\$&')}" content="([^"]*)">`).exec(body)?.[1];

async function pageOf(downloadLink: string): Promise<string> {
  const response = await t.fetch(new URL(downloadLink).pathname, { headers: { Accept: 'text/html' } });
  assert.equal(response.status, 200);
  return response.text();
}

describe('download page: OpenGraph and Twitter tags', () => {
  test('an image: name, size, absolute page and preview URLs on {web_url}, a large card', async () => {
    const { key } = await t.account();
    const up = await t.upload(key, 'holiday photo.png', PNG);
    const body = await pageOf(up.downloadLink);
    const head = body.slice(0, body.indexOf('</head>'));
    assert.equal(meta(head, 'og:title'), 'holiday photo.png');
    assert.equal(meta(head, 'og:url'), `${WEB_URL}/${up.id}/holiday%20photo.png`);
    assert.match(meta(head, 'og:description') ?? '', /^70 B · uploaded \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    assert.equal(meta(head, 'og:image'), `${WEB_URL}/${up.id}/holiday%20photo.png?preview=1`);
    assert.equal(meta(head, 'og:image:type'), 'image/png');
    assert.equal(meta(head, 'twitter:card'), 'summary_large_image');
    assert.equal(meta(head, 'twitter:image'), meta(head, 'og:image'));
    // The preview URL serves the image itself (what a crawler fetches).
    const image = await t.fetch(`/${up.id}/holiday%20photo.png?preview=1`);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await image.arrayBuffer()), PNG);
  });

  test('not an image (or SVG): a summary card without an image', async () => {
    const { key } = await t.account();
    for (const name of ['notes.txt', 'drawing.svg']) {
      const body = await pageOf((await t.upload(key, name, 'hello')).downloadLink);
      assert.equal(meta(body, 'og:title'), name);
      assert.equal(meta(body, 'og:image'), undefined);
      assert.equal(meta(body, 'twitter:card'), 'summary');
    }
  });

  test('a hostile name is escaped in every tag', async () => {
    const { key } = await t.account();
    // No slash: a name is stripped of any directory part (API.md 2); fetch's FormData
    // sends a `"` in a file name as %22.
    const name = `"><img src=x onerror=alert(1)> '&.png`;
    const body = await pageOf((await t.upload(key, name, PNG)).downloadLink);
    const head = body.slice(0, body.indexOf('</head>'));
    assert.ok(!head.includes('<img'), head);
    assert.ok(!head.includes('"><'), head);
    assert.equal(meta(head, 'og:title'), '%22&gt;&lt;img src=x onerror=alert(1)&gt; &#39;&amp;.png');
  });
});

describe('favicon', () => {
  for (const path of ['/favicon.svg', '/favicon.ico']) {
    test(`${path}: an SVG with cache headers and a CSP that runs nothing`, async () => {
      const response = await t.fetch(path);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/svg+xml');
      assert.equal(response.headers.get('cache-control'), 'public, max-age=604800');
      assert.equal(response.headers.get('content-security-policy'), "default-src 'none'");
      const svg = await response.text();
      assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.ok(!/<script|on\w+=/i.test(svg));
    });
  }

  test('every page links it', async () => {
    for (const path of ['/', '/developers', '/signin', '/no-such-page']) {
      const body = await (await t.fetch(path, { headers: { Accept: 'text/html' } })).text();
      assert.ok(body.includes('<link rel="icon" href="/favicon.svg" type="image/svg+xml">'), `${path}: ${body}`);
    }
  });
});
