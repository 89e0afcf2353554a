import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Browser } from '../helpers/browser.js';
import { directLink, trafficLeft } from '../helpers/downloads.js';
import { atomError, startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

// A premium direct link opened in a browser (docs/api.md "Direct links in a browser"): the
// owner's site session stands in for the API key on navigations that started on the site
// or were typed; everything else gets a page; API clients get SPEC.md's answers unchanged.

const MiB = 1024 * 1024;
const HOUR = 3_600_000;
const clock = new TestClock();
let t: TestServer;

before(async () => {
  t = await startTestServer({}, clock);
});
after(() => t.close());

/** What Chromium sends when a person opens a link: typed (none) or clicked on this site (same-origin). */
const navigation = (site: 'none' | 'same-origin' | 'same-site' | 'cross-site') => ({
  'Sec-Fetch-Mode': 'navigate',
  'Sec-Fetch-Site': site,
  'Sec-Fetch-Dest': 'document',
  Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
});

async function premiumOwnerWithLink(content = 'the bytes of a direct download\n', name = 'report.txt', trafficBytes = 10 * MiB) {
  const owner = await t.account({ premiumDays: 30, trafficBytes });
  const up = await t.upload(owner.key, name, content);
  assert.equal(up.response.status, 201, up.body);
  const url = await directLink(t, owner.key, up.id);
  return { owner, content, url, path: new URL(url).pathname, id: up.id };
}

/** One answered GET. */
interface Opened {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A GET through node:http, which sends the Sec-Fetch headers as given (fetch() always
 * writes its own `Sec-Fetch-Mode: cors`), with the cookies of `browser` if any.
 */
function open(path: string, headers: Record<string, string>, browser?: Browser): Promise<Opened> {
  const cookie = browser?.cookieHeader();
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${t.url}${path}`, { headers: { ...headers, ...(cookie ? { Cookie: cookie } : {}) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

/** A browser (cookie jar) signed in as `user`; its navigations go through open(). */
async function signedIn(user: TestAccount): Promise<Browser> {
  const browser = new Browser(t.url);
  assert.equal((await browser.signIn(user.login, user.password)).status, 303);
  return browser;
}

function htmlPage(page: Opened, status: number): string {
  assert.equal(page.status, status, page.body);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.equal(page.headers['content-disposition'], undefined);
  return page.body;
}

describe('a direct link opened in the browser', () => {
  test('by its signed-in owner, typed or clicked on the site: the download, charged as for the API', async () => {
    const { owner, content, path } = await premiumOwnerWithLink();
    for (const site of ['none', 'same-origin'] as const) {
      const before = await trafficLeft(t, owner.key);
      const page = await open(path, navigation(site), await signedIn(owner));
      assert.equal(page.status, 200, page.body);
      assert.equal(page.body, content);
      assert.match(String(page.headers['content-disposition']), /^attachment; filename="?report\.txt"?$/);
      assert.equal(await trafficLeft(t, owner.key), before - Buffer.byteLength(content));
    }
  });

  test('an old browser without Sec-Fetch headers: served when the Referer is this site, else asked', async () => {
    const { owner, content, path } = await premiumOwnerWithLink();
    const html = { Accept: 'text/html' };
    const fromSite = await open(path, { ...html, Referer: `${t.url}/accounts/profile/misc` }, await signedIn(owner));
    assert.equal(fromSite.body, content);
    const before = await trafficLeft(t, owner.key);
    const noReferer = htmlPage(await open(path, html, await signedIn(owner)), 200);
    assert.ok(noReferer.includes('Download “report.txt”?'), noReferer);
    assert.equal(await trafficLeft(t, owner.key), before);
  });

  test('started on another site (CSRF): no byte, no traffic; a page whose own link confirms', async () => {
    const { owner, path } = await premiumOwnerWithLink();
    const before = await trafficLeft(t, owner.key);
    for (const site of ['cross-site', 'same-site'] as const) {
      const body = htmlPage(await open(path, navigation(site), await signedIn(owner)), 200);
      assert.ok(body.includes('Another site sent you to this direct link.'), body);
      assert.ok(body.includes(`<a class="button" href="${path}" download>`), body);
    }
    assert.equal(await trafficLeft(t, owner.key), before);
  });

  test('without a session: a 401 page with a sign-in link that returns to the link', async () => {
    const { owner, content, path } = await premiumOwnerWithLink();
    const browser = new Browser(t.url);
    const body = htmlPage(await open(path, navigation('none'), browser), 401);
    const signInHref = `/signin?next=${encodeURIComponent(path)}`;
    assert.ok(body.includes(`<a class="button" href="${signInHref}">Sign in and download</a>`), body);
    // Signing in there lands back on the link, which now downloads.
    const csrf = /name="csrf" value="([^"]+)"/.exec((await browser.get(signInHref)).body)?.[1] ?? '';
    const signIn = await browser.post('/signin', { csrf, login: owner.login, password: owner.password, next: path });
    assert.equal(signIn.status, 303);
    assert.equal(signIn.response.headers.get('location'), path);
    assert.equal((await open(path, navigation('same-origin'), browser)).body, content);
  });

  test('signed in as another account: a 403 page, the owner is not charged', async () => {
    const { owner, path } = await premiumOwnerWithLink();
    const other = await t.account({ premiumDays: 30, trafficBytes: 10 * MiB });
    const before = await trafficLeft(t, owner.key);
    const body = htmlPage(await open(path, navigation('none'), await signedIn(other)), 403);
    assert.ok(body.includes('belongs to another account'), body);
    assert.equal(await trafficLeft(t, owner.key), before);
  });

  test('a forged token is a 404 page, an expired link a 403 page, not enough traffic a 403 page', async () => {
    const { owner, path } = await premiumOwnerWithLink();
    const browser = await signedIn(owner);
    const forged = path.replace(
      /\/([^/]+)\/([^/]+)$/,
      (_all, token: string, name: string) => `/${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}/${name}`,
    );
    assert.ok(htmlPage(await open(forged, navigation('none'), browser), 404).includes('File does not exist'));

    const big = await premiumOwnerWithLink('x'.repeat(2 * MiB), 'big.bin', MiB);
    assert.ok(htmlPage(await open(big.path, navigation('none'), await signedIn(big.owner)), 403).includes('Not enough premium traffic'));

    clock.advance(25 * HOUR);
    try {
      assert.ok(htmlPage(await open(path, navigation('none'), browser), 403).includes('expired'));
    } finally {
      clock.advance(-25 * HOUR);
    }
  });

  test('a hostile file name is escaped on the confirm page', async () => {
    const { owner, path } = await premiumOwnerWithLink('x', '<img src=x onerror=alert(1)> "q".txt');
    const body = htmlPage(await open(path, navigation('cross-site'), await signedIn(owner)), 200);
    assert.ok(!body.includes('<img src=x'), body);
    assert.ok(body.includes('&lt;img src=x onerror=alert(1)&gt;'), body);
  });
});

describe('API clients keep SPEC.md answers', () => {
  test('no navigation: the same Atom 401 byte for byte, with or without a session cookie', async () => {
    const { owner, path } = await premiumOwnerWithLink();
    const session = await signedIn(owner);
    const cookie = session.cookieHeader()!;
    const bare = await t.fetch(path, { headers: { Accept: 'application/atom+xml' } });
    const bareBody = await bare.text();
    assert.equal(bare.status, 401);
    assert.equal(atomError(bareBody)?.code, 'errorPermissionDenied');
    const asApiClient: Record<string, string>[] = [
      { Accept: 'application/atom+xml', Cookie: cookie },
      { Cookie: cookie },
      // A script's fetch() in a page is no navigation, even asking for HTML.
      { Accept: 'text/html', 'Sec-Fetch-Mode': 'cors', 'Sec-Fetch-Site': 'same-origin', Cookie: cookie },
    ];
    for (const headers of asApiClient) {
      const response = await open(path, headers);
      assert.equal(response.status, 401);
      assert.equal(response.headers['content-type'], 'application/atom+xml; charset=utf-8');
      assert.equal(response.body, bareBody);
      assert.equal(response.headers['set-cookie'], undefined);
    }
  });

  test('a navigation that carries the key is the API download', async () => {
    const { owner, content, path } = await premiumOwnerWithLink();
    const response = await open(path, { ...navigation('cross-site'), Authorization: owner.key });
    assert.equal(response.status, 200);
    assert.equal(response.body, content);
  });
});
