import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser, csrfOf } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Sign-in returns to the page that asked for it: a path of this site only, never an
// open redirect (return-path.ts).

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
