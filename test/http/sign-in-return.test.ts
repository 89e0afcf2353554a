import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SCRIPT_PATH, SHAREX_PATH } from '../../src/http/web/uploader-configs.js';
import { Browser, csrfOf } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Sign-in returns to the page that asked for it: a path of this site only, never an
// open redirect (return-path.ts). Every page behind a session sends a signed-out visitor
// through it, and so does the page a signed-out form gets.

const PROFILE = '/accounts/profile/misc';
let t: TestServer;

before(async () => {
  t = await startTestServer({ loginAttemptsPerMinute: 1000, signup: 'open' });
});
after(() => t.close());

/** Signs in through the form of `/signin?next=<next>`, posting the hidden field it carries; returns the Location. */
async function signInFrom(next: string): Promise<string | null> {
  const user = await t.account();
  const browser = new Browser(t.url);
  const form = await browser.get(`/signin?next=${encodeURIComponent(next)}`);
  assert.equal(form.status, 200, form.body);
  const field = /<input type="hidden" name="next" value="([^"]*)">/.exec(form.body)?.[1];
  const posted = await browser.post('/signin', {
    csrf: csrfOf(form.body)!,
    login: user.login,
    password: user.password,
    ...(field ? { next: field.replace(/&amp;/g, '&') } : {}),
  });
  assert.equal(posted.status, 303, posted.body);
  return posted.response.headers.get('location');
}

/** Signs in posting `next` directly (a forged form), returns the Location. */
async function signInPosting(next: string): Promise<string | null> {
  const user = await t.account();
  const browser = new Browser(t.url);
  const csrf = await browser.csrfFrom('/signin');
  const posted = await browser.post('/signin', { csrf, login: user.login, password: user.password, next });
  assert.equal(posted.status, 303, posted.body);
  return posted.response.headers.get('location');
}

/**
 * Every GET page that needs a session, with a query where the page reads one: `{folder}`
 * stands for a folder of the account that signs in. The console is not here: to a
 * visitor it is the plain 404 (web-console.test.ts), so it shows nothing to come back to.
 */
const SESSION_PAGES = [
  '/my/files',
  '/my/files?view=grid',
  '/my/files?folder={folder}',
  '/my/files?folder={folder}&sort=name-asc&q=report',
  '/accounts/profile/misc',
  '/accounts/profile/misc?changed=password#password',
  SHAREX_PATH,
  SCRIPT_PATH,
];

/** The 303 a signed-out GET gets: its Location. */
function redirected(page: { status: number; body: string; response: Response }): string {
  assert.equal(page.status, 303, page.body);
  return page.response.headers.get('location') ?? '';
}

describe('pages behind a session', () => {
  for (const template of SESSION_PAGES) {
    test(`${template}: signed out, to sign-in and back to it`, async () => {
      const user = await t.account();
      const folder = await t.fetch('/folders', { method: 'POST', headers: { Authorization: user.key }, body: new URLSearchParams({ name: 'Reports' }) });
      const folderId = /<entry>\s*<id>([^<]+)<\/id>/.exec(await folder.text())?.[1] ?? '';
      const path = template.replace('{folder}', folderId);
      // The fragment never reaches the server: the return path is what was asked for.
      const asked = path.replace(/#.*/, '');
      const browser = new Browser(t.url);
      const signIn = redirected(await browser.get(asked));
      assert.equal(signIn, `/signin?next=${encodeURIComponent(asked)}`);

      const form = await browser.get(signIn);
      assert.equal(form.status, 200, form.body);
      const next = /<input type="hidden" name="next" value="([^"]*)">/.exec(form.body)?.[1]?.replace(/&amp;/g, '&');
      assert.equal(next, asked);
      const posted = await browser.post('/signin', { csrf: csrfOf(form.body)!, login: user.login, password: user.password, next });
      assert.equal(redirected(posted), asked);
      const landed = await browser.get(asked);
      assert.equal(landed.status, 200, landed.body);
    });
  }

  test('a form sent after the session ended: its page’s Sign in returns to the page the form was on', async () => {
    const from = `${t.url}/my/files?folder=K7Q2M9X4PA&sort=name-asc`;
    const page = await new Browser(t.url, { Referer: from }).post('/my/files/folders', { csrf: 'stale', name: 'New' });
    assert.equal(page.status, 403, page.body);
    assert.match(page.body, /You are signed out/);
    assert.ok(
      page.body.includes(`<a class="button" href="/signin?next=${encodeURIComponent('/my/files?folder=K7Q2M9X4PA&sort=name-asc')}">Sign in</a>`),
      page.body,
    );
  });

  test('a signed-out form whose Referer is another site, or none: plain sign-in', async () => {
    for (const headers of [{ Referer: 'https://evil.example/my/files' }, {}] as Record<string, string>[]) {
      const page = await new Browser(t.url, headers).post('/my/files/folders', { csrf: 'stale', name: 'New' });
      assert.equal(page.status, 403, page.body);
      assert.ok(page.body.includes('<a class="button" href="/signin">Sign in</a>'), page.body);
    }
  });
});

describe('sign-in returns to the page that asked', () => {
  test('a path of this site, with its query, is where the browser lands', async () => {
    assert.equal(await signInFrom('/my/files?folder=root'), '/my/files?folder=root');
    assert.equal(await signInFrom('/K7Q2M9X4PA/report%202026.pdf'), '/K7Q2M9X4PA/report%202026.pdf');
  });

  test('no next: the profile, as before', async () => {
    assert.equal(await signInPosting(''), PROFILE);
  });

  const HOSTILE = [
    '//evil.example',
    '//evil.example/path',
    'https://evil.example',
    'http:evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    ' //evil.example',
    '%2F%2Fevil.example',
    '/%2F/evil.example',
    '/%2Fevil.example',
    '/%5Cevil.example',
    '/%5C%5Cevil.example',
    'javascript:alert(1)',
    'evil.example',
    '/%E0%A4%A',
    `/${'a'.repeat(3000)}`,
  ];
  for (const next of HOSTILE) {
    test(`hostile next ${JSON.stringify(next.slice(0, 40))}: the profile, on this site`, async () => {
      assert.equal(await signInPosting(next), PROFILE);
      assert.equal(await signInFrom(next), PROFILE);
    });
  }

  test('a signed-in visit to /signin?next= goes there at once; a hostile one to the profile', async () => {
    const user = await t.account();
    const browser = new Browser(t.url);
    await browser.signIn(user.login, user.password);
    assert.equal((await browser.get('/signin?next=%2Fdevelopers')).response.headers.get('location'), '/developers');
    assert.equal((await browser.get('/signin?next=%2F%2Fevil.example')).response.headers.get('location'), PROFILE);
  });

  test('the header and the download page link to sign-in with the page to return to', async () => {
    const page = await new Browser(t.url).get('/developers');
    assert.ok(page.body.includes('<a href="/signin?next=%2Fdevelopers">Sign in</a>'), page.body);
    const home = await new Browser(t.url).get('/');
    assert.ok(home.body.includes('<a href="/signin">Sign in</a>'), home.body);
  });

  test('sign-up carries the return path too', async () => {
    const browser = new Browser(t.url);
    const signInPage = await browser.get('/signin?next=%2Fdevelopers');
    assert.ok(signInPage.body.includes('href="/signup?next=%2Fdevelopers"'), signInPage.body);
    const form = await browser.get('/signup?next=%2Fdevelopers');
    const posted = await browser.post('/signup', {
      csrf: csrfOf(form.body)!,
      login: `newcomer-${process.pid}`,
      password: 'a long enough password',
      password_again: 'a long enough password',
      next: '/developers',
    });
    assert.equal(posted.status, 303, posted.body);
    assert.equal(posted.response.headers.get('location'), '/developers');
  });
});
