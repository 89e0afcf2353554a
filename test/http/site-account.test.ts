import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MY_FILES_SCRIPT } from '../../src/http/web/upload-form.js';
import { Browser, csrfOf } from '../helpers/browser.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

// The home page (visitor and signed in) and the account part of the profile: usage and
// limits in human sizes, and changing the password.

const PROFILE = '/accounts/profile/misc';
const MiB = 1024 * 1024;
const clock = new TestClock();
let t: TestServer;
let closedSignUp: TestServer;

before(async () => {
  t = await startTestServer({ loginAttemptsPerMinute: 5, signup: 'open', uploadVolumeFree: 50 * MiB, maxFileSize: 20 * MiB }, clock);
  closedSignUp = await startTestServer({});
});
after(async () => {
  await t.close();
  await closedSignUp.close();
});

async function signedIn(options: Parameters<TestServer['account']>[0] = {}) {
  const user = await t.account(options);
  const browser = new Browser(t.url);
  assert.equal((await browser.signIn(user.login, user.password)).status, 303);
  return { user, browser };
}

describe('home page', () => {
  test('a visitor: what the site is, sign in, sign up when it is open', async () => {
    const body = (await new Browser(t.url).get('/')).body;
    assert.ok(body.includes('Share files with a link'), body);
    assert.ok(body.includes('<a class="button" href="/signin">Sign in</a>'), body);
    assert.ok(body.includes('<a class="button secondary" href="/signup">Create an account</a>'), body);
    assert.ok(body.includes('Files up to 20.0 MiB'), body);
    const closed = (await new Browser(closedSignUp.url).get('/')).body;
    assert.ok(!closed.includes('/signup'), closed);
    assert.ok(closed.includes('Accounts are created by the operator'), closed);
  });

  test('signed in: a way to upload, and the upload volume used and left in human sizes', async () => {
    const { user, browser } = await signedIn();
    assert.equal((await t.upload(user.key, 'a.bin', Buffer.alloc(3 * MiB))).response.status, 201);
    const body = (await browser.get('/')).body;
    assert.ok(body.includes(`Welcome back, <bdi>${user.login}</bdi>`), body);
    assert.ok(body.includes('<strong>47.0 MiB left</strong>'), body);
    assert.ok(body.includes('<span>3.0 MiB used</span><span>50.0 MiB</span>'), body);
    assert.ok(!body.includes('Create an account'), body);
  });

  test('signed in: upload right there, with the same box as My files (and its limits), which works without JavaScript', async () => {
    const { user, browser } = await signedIn();
    const home = await browser.get('/');
    assert.match(home.body, /<form class="upload-form" id="upload-form" method="post" action="\/my\/files\/upload" enctype="multipart\/form-data"/);
    assert.ok(home.body.includes(`<script src="${MY_FILES_SCRIPT.path}" defer></script>`), home.body);
    assert.match(home.body, /id="upload-limits" data-max-file-size="20971520"/);
    // The script sends its uploads to the site: the page lets it.
    assert.match(home.response.headers.get('content-security-policy') ?? '', /connect-src 'self'/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(home.body)?.[1];
    assert.ok(csrf);
    const form = new FormData();
    form.set('csrf', csrf);
    form.set('upload', new Blob(['from the home page']), 'home «page».txt');
    const sent = await fetch(`${t.url}/my/files/upload`, { method: 'POST', body: form, headers: { Accept: 'text/html', Cookie: browser.cookieHeader()! } });
    assert.equal(sent.status, 200, await sent.clone().text());
    const stored = await t.server.services.store.files.list({ ownerId: user.account.id, limit: 10 });
    assert.deepEqual(
      stored.map((f) => f.name),
      ['home «page».txt'],
    );
  });
});

describe('profile: usage and limits', () => {
  test('volume used and left, largest file, traffic, in human sizes; the volume leaves the window after 24 h', async () => {
    const { user, browser } = await signedIn({ premiumDays: 0 });
    await t.upload(user.key, 'b.bin', Buffer.alloc(MiB + 512 * 1024));
    const body = (await browser.get(PROFILE)).body;
    assert.ok(body.includes('<h2>Usage and limits</h2>'), body);
    assert.ok(body.includes('<strong>48.5 MiB left</strong>'), body);
    assert.ok(body.includes('<dt>Largest file</dt><dd>20.0 MiB</dd>'), body);
    assert.ok(body.includes('<dt>Free downloads</dt>'), body);
    clock.advance(25 * 3_600_000);
    try {
      assert.ok((await browser.get(PROFILE)).body.includes('<strong>50.0 MiB left</strong>'));
    } finally {
      clock.advance(-25 * 3_600_000);
    }
  });
});

describe('profile: change password', () => {
  async function change(browser: Browser, fields: { current_password: string; new_password: string; new_password_again?: string }) {
    const csrf = csrfOf((await browser.get(PROFILE)).body.split('id="password"')[1] ?? '')!;
    return browser.post('/accounts/profile/misc/password', { csrf, new_password_again: fields.new_password, ...fields });
  }

  test('with the current password: changed, audited, other sessions signed out, this browser stays in, the key stays', async () => {
    const { user, browser } = await signedIn();
    const other = new Browser(t.url);
    await other.signIn(user.login, user.password);
    assert.equal((await other.get(PROFILE)).status, 200);

    const done = await change(browser, { current_password: user.password, new_password: 'a brand new password' });
    assert.equal(done.status, 303, done.body);
    assert.equal(done.response.headers.get('location'), `${PROFILE}?changed=password#password`);
    const after = await browser.get(`${PROFILE}?changed=password`);
    assert.equal(after.status, 200);
    assert.ok(after.body.includes('Your password has been changed.'), after.body);
    // The other browser is signed out; the old password no longer signs in, the new one does.
    assert.equal((await other.get(PROFILE)).status, 303);
    assert.equal((await new Browser(t.url).signIn(user.login, user.password)).status, 401);
    assert.equal((await new Browser(t.url).signIn(user.login, 'a brand new password')).status, 303);
    assert.equal((await t.fetch('/account', { headers: { Authorization: user.key } })).status, 200);
    const [entry] = await t.server.services.audit.list({ limit: 1 });
    assert.equal(entry?.action, 'accounts.set-password');
    assert.equal(entry?.actor, `web:${user.login}`);
    assert.equal(entry?.object, `account:${user.login}`);
    assert.ok(!JSON.stringify(entry).includes('brand new'), 'no password in the audit log');
  });

  test('a wrong current password, a short one, two that differ: a clear message, nothing changed', async () => {
    const { user, browser } = await signedIn();
    const wrong = await change(browser, { current_password: 'not my password', new_password: 'another password' });
    assert.equal(wrong.status, 401);
    assert.ok(wrong.body.includes('The current password is wrong. Your password was not changed.'), wrong.body);
    const short = await change(browser, { current_password: user.password, new_password: 'short' });
    assert.equal(short.status, 400);
    assert.ok(short.body.includes('Password must be at least 8 characters. Your password was not changed.'), short.body);
    const differ = await change(browser, { current_password: user.password, new_password: 'another password', new_password_again: 'another passwort' });
    assert.equal(differ.status, 400);
    assert.ok(differ.body.includes('The two new passwords differ.'), differ.body);
    assert.equal((await new Browser(t.url).signIn(user.login, user.password)).status, 303);
  });

  test('without the CSRF token: 403, nothing changed; guessing the current password hits the sign-in limit', async () => {
    const { user, browser } = await signedIn();
    const forged = await browser.post('/accounts/profile/misc/password', {
      current_password: user.password,
      new_password: 'x'.repeat(12),
      new_password_again: 'x'.repeat(12),
    });
    assert.equal(forged.status, 403);
    let last = 0;
    for (let i = 0; i < 7; i++) last = (await change(browser, { current_password: `guess number ${i}`, new_password: 'another password' })).status;
    // The sign-in limit (5 a minute here) covers the current-password check too.
    assert.equal(last, 429);
  });
});
