import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { ERROR_MEANINGS } from '../../src/domain/errors.js';
import { ENDPOINTS, endpointsMarkdown } from '../../src/http/api/api-catalogue.js';
import { assertAtomError, read } from '../helpers/api-checks.js';
import { Browser, csrfOf } from '../helpers/browser.js';
import { bodyBytes, randomPayload, sha256, uploadNamed } from '../helpers/downloads.js';
import { atomError, startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

// The public pages of the issue: download page with safe previews and "copy to my
// account", folder page, error pages, developers page. Real server, real HTTP.

let t: TestServer;
let owner: TestAccount;
let visitor: TestAccount;
before(async () => {
  t = await startTestServer({}, new TestClock());
  owner = await t.account({ login: 'owner-web' });
  visitor = await t.account({ login: 'visitor-web' });
});
after(() => t.close());

const pathOf = (url: string) => new URL(url).pathname;
const fileRowsWithDigest = (digest: string) => t.storage.count('files', { sha256: digest });

/** A page: HTML with the page security headers; returns the body. */
async function page(response: Response, status: number): Promise<string> {
  const body = await response.text();
  assert.equal(response.status, status, body);
  assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
  assertStrictCsp(response.headers.get('content-security-policy'));
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  assert.match(body, /^<!doctype html>/i);
  return body;
}

/** The page policy: nothing by default, no inline code, no plugins, no framing. */
function assertStrictCsp(csp: string | null): void {
  assert.ok(csp, 'a Content-Security-Policy header');
  const directives = new Map(
    csp
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values.join(' ')]),
  );
  assert.equal(directives.get('default-src'), "'none'", csp);
  assert.equal(directives.get('frame-ancestors'), "'none'", csp);
  assert.ok(!csp.includes('unsafe-'), csp);
  assert.ok(!csp.includes('*'), csp);
  for (const [name, value] of directives) {
    if (name !== 'default-src' && name !== 'frame-ancestors' && name !== 'base-uri') assert.equal(value, "'self'", `${name} in ${csp}`);
  }
}

/** A stack trace or internals must never reach a page. */
function assertNoInternals(body: string): void {
  assert.doesNotMatch(body, /\bat [\w.<>]+ \(|\bat (file|node):|node_modules|\.ts:\d+|Error: |BlobNotFound|ENOENT|errorInternal/);
  assert.ok(!body.includes(t.dataDir), 'no server path');
}

interface PreviewCase {
  name: string;
  type: string;
  element: RegExp;
  pageCsp: string | null;
}

const PREVIEWS: PreviewCase[] = [
  { name: 'photo.png', type: 'image/png', element: /<img src="\/[A-Z0-9]{10}\/photo\.png\?preview=1" alt="Preview of photo\.png">/, pageCsp: null },
  { name: 'photo.JPEG', type: 'image/jpeg', element: /<img src="[^"]+\?preview=1"/, pageCsp: null },
  { name: 'clip.mp4', type: 'video/mp4', element: /<video controls preload="metadata" src="[^"]+\?preview=1"/, pageCsp: "media-src 'self'" },
  { name: 'song.mp3', type: 'audio/mpeg', element: /<audio controls preload="metadata" src="[^"]+\?preview=1"/, pageCsp: "media-src 'self'" },
  {
    name: 'notes.txt',
    type: 'text/plain; charset=utf-8',
    element: /<iframe class="preview-frame" sandbox src="[^"]+\?preview=1"/,
    pageCsp: "frame-src 'self'",
  },
  {
    name: 'data.json',
    type: 'text/plain; charset=utf-8',
    element: /<iframe class="preview-frame" sandbox src="[^"]+\?preview=1"/,
    pageCsp: "frame-src 'self'",
  },
  { name: 'paper.pdf', type: 'application/pdf', element: /<iframe class="preview-frame pdf" src="[^"]+\?preview=1"/, pageCsp: "frame-src 'self'" },
];

describe('previews', () => {
  for (const item of PREVIEWS) {
    test(`${item.name}: the page embeds it, ?preview=1 answers inline ${item.type}, sandboxed`, async () => {
      const payload = randomPayload(4096);
      const up = await t.upload(owner.key, item.name, payload);
      assert.equal(up.response.status, 201, up.body);

      const pageResponse = await fetch(up.downloadLink);
      const body = await page(pageResponse, 200);
      assert.match(body, item.element);
      const csp = pageResponse.headers.get('content-security-policy')!;
      for (const extra of ["media-src 'self'", "frame-src 'self'"]) {
        assert.equal(csp.includes(extra), extra === item.pageCsp, `${extra} in ${csp}`);
      }

      const preview = await fetch(`${up.downloadLink}?preview=1`);
      assert.equal(preview.status, 200);
      assert.equal(preview.headers.get('content-type'), item.type);
      assert.match(preview.headers.get('content-disposition') ?? '', /^inline; filename=/);
      assert.equal(preview.headers.get('x-content-type-options'), 'nosniff');
      const previewCsp = preview.headers.get('content-security-policy') ?? '';
      // Media keep their origin so the player can fetch its own URL; nothing may run script.
      assert.match(
        previewCsp,
        item.type.startsWith('audio/') || item.type.startsWith('video/') ? /^sandbox allow-same-origin; default-src 'none';/ : /^sandbox; default-src 'none';/,
      );
      assert.match(previewCsp, /frame-ancestors 'self'$/);
      assert.ok(!previewCsp.includes('script') && !previewCsp.includes('unsafe'), previewCsp);
      assert.equal(preview.headers.get('accept-ranges'), 'bytes');
      assert.ok((await bodyBytes(preview)).equals(payload));
    });
  }

  test('media seeking: a preview answers Range requests with 206', async () => {
    const payload = randomPayload(100_000);
    const up = await t.upload(owner.key, 'seek.mp4', payload);
    const response = await fetch(`${up.downloadLink}?preview=1`, { headers: { Range: 'bytes=50000-50999' } });
    assert.equal(response.status, 206);
    assert.equal(response.headers.get('content-range'), 'bytes 50000-50999/100000');
    assert.equal(response.headers.get('content-type'), 'video/mp4');
    assert.ok((await bodyBytes(response)).equals(payload.subarray(50000, 51000)));
  });

  test('text looking like HTML is still text/plain in a .txt preview', async () => {
    const hostile = '<!doctype html><html><script>alert(document.cookie)</script></html>';
    const up = await t.upload(owner.key, 'page.txt', hostile);
    const preview = await fetch(`${up.downloadLink}?preview=1`);
    assert.equal(preview.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.match(preview.headers.get('content-security-policy') ?? '', /^sandbox;/);
    assert.equal(await preview.text(), hostile);
  });

  for (const name of ['index.html', 'logo.svg', 'app.js', 'setup.exe', 'page.htm', 'feed.xml', 'no-extension']) {
    test(`${name}: no preview on the page, ?preview=1 is a 404 page, never the bytes`, async () => {
      const secret = `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg> ${name}`;
      const up = await t.upload(owner.key, name, secret);
      const body = await page(await fetch(up.downloadLink), 200);
      assert.ok(!body.includes('?preview=1'), body);
      assert.doesNotMatch(body, /<(img|video|audio|iframe)\b/);
      const preview = await fetch(`${up.downloadLink}?preview=1`);
      const previewBody = await page(preview, 404);
      assert.ok(!previewBody.includes(secret));
      assert.equal(preview.headers.get('content-disposition'), null);
      // The raw download is still an attachment.
      const raw = await fetch(`${up.downloadLink}?download=1`);
      assert.equal(raw.headers.get('content-type'), 'application/octet-stream');
      assert.match(raw.headers.get('content-disposition') ?? '', /^attachment;/);
      assert.equal(raw.headers.get('x-content-type-options'), 'nosniff');
      await raw.arrayBuffer();
    });
  }

  test('a file renamed to look safe is judged by its stored name, not the URL', async () => {
    const up = await t.upload(owner.key, 'evil.html', '<script>alert(1)</script>');
    const disguised = up.downloadLink.replace(/evil\.html$/, 'evil.png');
    assert.equal((await fetch(`${disguised}?preview=1`)).status, 404);
  });

  test('blocked and deleted files have no preview either (410 and 404 pages)', async () => {
    const blocked = await t.upload(owner.key, 'blocked.png', randomPayload(100));
    await t.server.services.files.block(blocked.id);
    await page(await fetch(`${blocked.downloadLink}?preview=1`), 410);
    const deleted = await t.upload(owner.key, 'deleted.png', randomPayload(100));
    assert.equal((await fetch(deleted.deleteLink, { method: 'POST' })).status, 200);
    await page(await fetch(`${deleted.downloadLink}?preview=1`), 404);
  });
});

describe('download page', () => {
  test('shows name, human size, upload date and a big download button', async () => {
    const up = await t.upload(owner.key, 'big report.zip', randomPayload(3 * 1024 * 1024 + 100));
    const body = await page(await fetch(up.downloadLink), 200);
    assert.match(body, /<h1>big report\.zip<\/h1>/);
    assert.ok(body.includes('3.0 MiB'), body);
    assert.match(body, /uploaded 2026-11-21 10:04 UTC/);
    assert.ok(body.includes(`<a class="button big" href="${up.downloadLink}?download=1" download>Download <span class="button-note">3.0 MiB</span></a>`), body);
  });
});

describe('copy to my account', () => {
  test('signed out: a hint with a link to sign in, no form', async () => {
    const up = await t.upload(owner.key, 'shared.bin', randomPayload(10));
    const body = await page(await fetch(up.downloadLink), 200);
    // The sign-in link returns to this page (return-path.ts).
    const here = new URL(up.downloadLink).pathname;
    assert.ok(body.includes(`<a href="/signin?next=${encodeURIComponent(here)}">Sign in</a> to copy this file`), body);
    assert.ok(!body.includes(`/${up.id}/copy`), body);
  });

  test('signed in: the CSRF-checked form makes a copy with its own page, sharing the bytes', async () => {
    const payload = randomPayload(20_000);
    const up = await t.upload(owner.key, 'copy me.bin', payload);
    const browser = new Browser(t.url);
    assert.equal((await browser.signIn(visitor.login, visitor.password)).status, 303);

    const pagePath = pathOf(up.downloadLink);
    const before = await browser.get(pagePath);
    assert.equal(before.status, 200);
    assert.match(before.body, new RegExp(`<form class="copy-form" method="post" action="/${up.id}/copy">`));
    const csrf = csrfOf(before.body.slice(before.body.indexOf('copy-form')));
    assert.ok(csrf);
    const blobsBefore = await t.storage.blobKeys();

    // Without the token, with a wrong one, or signed out: refused, nothing made.
    assert.equal((await browser.post(`/${up.id}/copy`, {})).status, 403);
    assert.equal((await browser.post(`/${up.id}/copy`, { csrf: `${csrf}x` })).status, 403);
    const stranger = await fetch(`${t.url}/${up.id}/copy`, { method: 'POST', headers: { Accept: 'text/html' }, body: new URLSearchParams({ csrf }) });
    assert.equal(stranger.status, 403);
    await stranger.text();
    assert.equal(await fileRowsWithDigest(sha256(payload)), 1);

    const done = await browser.post(`/${up.id}/copy`, { csrf });
    assert.equal(done.status, 303, done.body);
    const location = done.response.headers.get('location') ?? '';
    const match = /^\/([A-Z0-9]{10})\/copy%20me\.bin\?copied=1$/.exec(location);
    assert.ok(match, location);
    const copyId = match[1]!;
    assert.notEqual(copyId, up.id);

    const copyPage = await browser.get(location);
    assert.equal(copyPage.status, 200);
    assert.match(copyPage.body, /Copied into your account/);
    assert.match(copyPage.body, /This file is in your account/);
    const copy = await t.server.services.store.files.byId(copyId);
    assert.equal(copy?.ownerId, visitor.account.id);
    assert.equal(copy?.sha256, sha256(payload));
    // Two rows, one blob: the bytes were not duplicated.
    assert.equal(await fileRowsWithDigest(sha256(payload)), 2);
    assert.deepEqual(await t.storage.blobKeys(), blobsBefore);
    const raw = await fetch(`${t.url}/${copyId}/x?download=1`);
    assert.ok((await bodyBytes(raw)).equals(payload));
    // The note is the owner's: others see the copy's page without it.
    assert.ok(!(await (await fetch(`${t.url}${location}`)).text()).includes('Copied into'));
  });

  test('a blocked file cannot be copied (403 page); an unknown one is a 404 page', async () => {
    const up = await t.upload(owner.key, 'soon blocked.bin', randomPayload(30));
    const browser = new Browser(t.url);
    await browser.signIn(visitor.login, visitor.password);
    const csrf = csrfOf((await browser.get(pathOf(up.downloadLink))).body.split('copy-form')[1] ?? '')!;
    await t.server.services.files.block(up.id);
    const refused = await browser.post(`/${up.id}/copy`, { csrf });
    assert.equal(refused.status, 403);
    assert.match(refused.body, /Blocked files cannot be copied/);
    const unknown = await browser.post('/ZZZZZZZZZZ/copy', { csrf });
    assert.equal(unknown.status, 404);
    assert.equal(await fileRowsWithDigest((await t.server.services.store.files.byId(up.id))!.sha256), 1);
  });

  test('a POST to /<not an id>/copy is an ordinary unknown path (Atom for API clients)', async () => {
    // /files/<ref> is the API's own route: its Atom answer, not the copy form's.
    const response = await t.fetch('/files/copy', { method: 'POST', headers: { Authorization: visitor.key } });
    assert.ok(atomError(await response.text()));
    const other = await t.fetch('/whatever/copy', { method: 'POST' });
    assert.equal(other.status, 404);
    assert.equal(atomError(await other.text())?.code, 'errorNotFound');
  });
});

describe('folder page', () => {
  async function folder(key: string, name: string, parent?: string): Promise<string> {
    const response = await t.fetch('/folders', {
      method: 'POST',
      headers: { Authorization: key },
      body: new URLSearchParams({ name, ...(parent ? { parent } : {}) }),
    });
    const body = await response.text();
    assert.equal(response.status, 201, body);
    return /<entry>\s*<id>([^<]+)<\/id>/.exec(body)![1]!;
  }

  async function move(key: string, folderId: string, ids: string[]): Promise<void> {
    const form = new URLSearchParams({ _method: 'PUT' });
    for (const [i, id] of ids.entries()) form.append(`files[${i}]`, id);
    const response = await t.fetch(`/folders/${folderId};files`, { method: 'POST', headers: { Authorization: key }, body: form });
    assert.equal(response.status, 200, await response.text());
  }

  test('lists sub-folders with their size, files with sizes and links; the way up only for the owner', async () => {
    const top = await folder(owner.key, 'Holiday');
    const sub = await folder(owner.key, 'Day <1>', top);
    const emptySub = await folder(owner.key, 'Day 2', top);
    const inTop = await t.upload(owner.key, 'map.pdf', randomPayload(2048));
    const inSub = await t.upload(owner.key, 'beach.jpg', randomPayload(5000));
    await move(owner.key, top, [inTop.id]);
    await move(owner.key, sub, [inSub.id]);

    const topBody = await page(await t.fetch(`/folder/${top}`), 200);
    assert.match(topBody, /<h1>Holiday<\/h1>/);
    assert.ok(topBody.includes('1 file · 2.0 KiB · 2 folders'), topBody);
    assert.ok(topBody.includes(`<a class="folder-link" href="${t.url}/folder/${sub}">Day &lt;1&gt;</a></td><td class="size">1 file · 4.9 KiB</td>`), topBody);
    assert.ok(topBody.includes(`href="${t.url}/folder/${emptySub}">Day 2</a></td><td class="size">0 files · 0 B</td>`), topBody);
    assert.ok(topBody.includes(`<a href="${inTop.downloadLink}">map.pdf</a>`), topBody);
    assert.ok(!topBody.includes('beach.jpg'), 'files of sub-folders are on their own page');

    // A visitor of the sub-folder's link sees its files, not the folder above it.
    const subBody = await page(await t.fetch(`/folder/${sub}`), 200);
    assert.ok(subBody.includes(`<a href="${inSub.downloadLink}">beach.jpg</a>`), subBody);
    assert.ok(!subBody.includes('Holiday') && !subBody.includes(`/folder/${top}`), subBody);

    // Its owner gets breadcrumbs.
    const browser = new Browser(t.url);
    await browser.signIn(owner.login, owner.password);
    const ownerView = await browser.get(`/folder/${sub}`);
    assert.equal(ownerView.status, 200);
    assert.ok(ownerView.body.includes(`<nav class="crumbs" aria-label="Folders above this one"><a href="${t.url}/folder/${top}">Holiday</a>`), ownerView.body);
  });
});

describe('error pages', () => {
  function assertErrorPage(body: string, status: number): void {
    assert.ok(body.includes(`Error ${status}`), body);
    assert.ok(body.includes('<a class="button secondary" href="/">Go to the home page</a>'), body);
    assertNoInternals(body);
  }

  test('404: unknown address (browser), unknown file, wrong delete secret', async () => {
    for (const pathname of ['/no/such/page/here', '/ZZZZZZZZZZ/missing.txt', '/ZZZZZZZZZZ/delete/0123456789abcdef0123456789abcdef']) {
      assertErrorPage(await page(await t.fetch(pathname, { headers: { Accept: 'text/html' } }), 404), 404);
    }
  });

  test('410: a blocked file', async () => {
    const up = await t.upload(owner.key, 'b.txt', 'blocked');
    await t.server.services.files.block(up.id);
    assertErrorPage(await page(await fetch(up.downloadLink), 410), 410);
  });

  test('500: a storage failure on any web route is the 500 page, without details', async () => {
    const payload = randomPayload(999);
    const up = await t.upload(owner.key, 'lost.png', payload);
    const digest = sha256(payload);
    // The bytes cannot be read (a broken disk, an operator's mistake): a symlink loop in
    // their place fails with ELOOP, a bucket policy with 403. (Bytes that are simply gone
    // are a 404: downloads-missing-blob.test.ts.)
    await t.storage.makeUnreadable(digest);
    for (const url of [`${up.downloadLink}?download=1`, `${up.downloadLink}?preview=1`]) {
      const response = await fetch(url);
      const body = await page(response, 500);
      assertErrorPage(body, 500);
      assert.equal(response.headers.get('content-disposition'), null);
      assert.match(body, /Something went wrong/);
    }
  });

  test('429: too many downloads at once from one address', { timeout: 60_000 }, async () => {
    const limited = await startTestServer({ freeDownloadsPerIp: 1, freeDownloadSpeed: 64 * 1024 });
    try {
      const { key } = await limited.account();
      const up = await limited.upload(key, 'slow.png', randomPayload(2 * 1024 * 1024));
      // The first download holds the address's only slot while it trickles.
      const held = await new Promise<http.ClientRequest>((resolve) => {
        const request = http.get(`${up.downloadLink}?download=1`, { agent: false }, (response) => {
          response.pause();
          resolve(request);
        });
        request.on('error', () => {});
      });
      try {
        const response = await fetch(`${up.downloadLink}?preview=1`);
        const body = await response.text();
        assert.equal(response.status, 429, body);
        assertStrictCsp(response.headers.get('content-security-policy'));
        assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
        assertErrorPage(body, 429);
        assert.match(body, /Too many downloads at once/);
      } finally {
        held.destroy();
      }
    } finally {
      await limited.close();
    }
  });
});

describe('Content-Security-Policy on every page', () => {
  test('home, developers, sign-in, download, delete confirm, folder, profile, errors', async () => {
    const up = await t.upload(owner.key, 'csp.txt', 'x');
    const browser = new Browser(t.url);
    await browser.signIn(owner.login, owner.password);
    const folders = await t.fetch('/folders', { method: 'POST', headers: { Authorization: owner.key }, body: new URLSearchParams({ name: 'csp' }) });
    const folderId = /<entry>\s*<id>([^<]+)<\/id>/.exec(await folders.text())![1]!;
    const pages = ['/', '/developers', pathOf(up.downloadLink), pathOf(up.deleteLink), `/folder/${folderId}`, '/accounts/profile/misc', '/nothing/here'];
    const signedOut = new Browser(t.url);
    for (const [who, pathname] of [...pages.map((p) => [browser, p] as const), ...['/', '/signin', '/nothing/here'].map((p) => [signedOut, p] as const)]) {
      const response = await who.get(pathname);
      assert.ok(response.status === 200 || response.status === 404, `${pathname}: ${response.status}`);
      assertStrictCsp(response.response.headers.get('content-security-policy'));
      assert.equal(response.response.headers.get('x-frame-options'), 'DENY');
    }
  });
});

describe('developers page', () => {
  test('lists every endpoint and every error code of the catalogues, with curl examples on the real address', async () => {
    const body = await page(await t.fetch('/developers'), 200);
    // <wbr> marks where a path may wrap on a phone (developers-page.ts); the text is the same.
    const text = body
      .replace(/<wbr>/g, '')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&');
    for (const endpoint of ENDPOINTS) {
      assert.ok(text.includes(`<span class="method">${endpoint.method}</span> <code>${endpoint.path}</code>`), `${endpoint.method} ${endpoint.path}`);
      for (const alias of endpoint.aliases) assert.ok(text.includes(`<code>${alias}</code>`), alias);
      assert.ok(text.includes(endpoint.curl.replaceAll('{base}', t.url)), endpoint.curl);
      assert.ok(text.includes(`feed title <code>${endpoint.success.title}</code>`), endpoint.success.title);
    }
    for (const code of Object.keys(ERROR_MEANINGS)) assert.ok(body.includes(`<tr id="${code}"><td><code>${code}</code>`), code);
    // Statuses and messages come from the constructors the server uses.
    assert.ok(text.includes('<span class="http-status">401</span> <q>Wrong apikey</q>'));
    assert.ok(text.includes(`<q>File size exceeds the limit of ${t.server.services.config.maxFileSize} bytes</q>`));
    // The golden-format notes and examples with the real addresses.
    assert.ok(text.includes(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ed="${t.url}/developers">`));
    assert.ok(text.includes(`<link title="download_link" href="${t.url}/K7Q2M9X4PA/report%202026.pdf" rel="enclosure" length="48213"/>`));
    assert.ok(text.includes('Sat, 21 Nov 2026 10:04:05 +0000'));
    for (const note of ['_method=PUT', '%3B', 'RFC 822', 'application/atom+xml']) assert.ok(text.includes(note), note);
  });

  test('the server routes every catalogue endpoint (no errorNotFound, no 405)', async () => {
    for (const endpoint of ENDPOINTS) {
      for (const documented of [endpoint.path, ...endpoint.aliases]) {
        const pathname = documented.replace('<id>', 'ZZZZZZZZZZ');
        const response = await t.fetch(pathname, { method: endpoint.method, headers: { Authorization: owner.key } });
        const code = atomError(await response.text())?.code;
        assert.ok(code !== 'errorNotFound' && code !== 'errorMethodNotAllowed', `${endpoint.method} ${pathname}: ${response.status} ${code}`);
      }
    }
  });

  test('the docs/api.md endpoint table is the one generated from the catalogue', async () => {
    const doc = await readFile(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const match = /<!-- endpoints:start[^>]*-->\n([\s\S]*?)\n<!-- endpoints:end -->/.exec(doc);
    assert.ok(match, 'docs/api.md has the endpoints markers');
    assert.equal(match[1], endpointsMarkdown(), 'run: node --import tsx scripts/readme-endpoints.ts');
  });
});

test('uploadNamed helper keeps hostile names for the page tests', async () => {
  // A name with quotes and angle brackets gets a preview of its real type and stays escaped.
  const up = await uploadNamed(t, owner.key, `"><img src=x>.png`, randomPayload(10));
  const body = await page(await fetch(up.downloadLink), 200);
  assert.ok(!body.includes('<img src=x>'), body);
  assert.ok(body.includes('alt="Preview of &quot;&gt;&lt;img src=x&gt;.png"'), body);
});

test("a delete-link path under an API word answers the API's Atom 404, also to a browser", async () => {
  const t2 = await startTestServer();
  try {
    for (const method of ['GET', 'POST'] as const) {
      const response = await read(await t2.fetch('/files/delete/', { method, headers: { Accept: 'text/html' } }));
      assertAtomError(response, 404, 'errorNotFound');
    }
  } finally {
    await t2.close();
  }
});
