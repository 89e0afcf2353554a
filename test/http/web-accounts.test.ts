import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { browserScript } from '../../src/http/web/browser-scripts.js';
import { Browser, csrfOf, type Page, setCookieFor } from '../helpers/browser.js';
import { atomError, startTestServer, TestClock, type TestServer } from '../helpers/server.js';

// Accounts on the web ("The public site", part 1): sessions, CSRF, sign-in, sign-out,
// sign-up, the profile page SPEC.md names ({web_url}/accounts/profile/misc).

const PROFILE = '/accounts/profile/misc';
/** Where the profile sends a visitor without a session: sign-in, which returns to it. */
const SIGN_IN_TO_PROFILE = `/signin?next=${encodeURIComponent(PROFILE)}`;
const REGENERATE = '/accounts/profile/misc/regenerate-key';
const DAY = 86_400_000;
const HOSTILE_NAME = `<script>alert("x")</script> 'single' "double" \u202Eevil\u200F & more`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Asserts an HTML page with the page headers; returns the body. */
function html(page: Page, status: number): string {
  assert.equal(page.status, status, page.body);
  assert.equal(page.response.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(page.response.headers.get('cache-control'), 'no-store');
  assert.match(page.response.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/);
  assert.match(page.body, /^<!doctype html>/i);
  // The CSP forbids inline code: every script has a src; no tag has a style or on* attribute
  // (attribute values, where escaped user text lives, are left out of the check).
  assert.doesNotMatch(page.body, /<script(?![^>]*\ssrc=)/);
  for (const tag of page.body.match(/<[a-zA-Z][^>]*>/g) ?? []) {
    assert.doesNotMatch(tag.replace(/"[^"]*"/g, '""'), /\s(style|on[a-z]+)=/i, tag);
  }
  return page.body;
}

/** Asserts a 303 to `location` that no cache keeps. */
function redirect(page: Page, location: string): void {
  assert.equal(page.status, 303, page.body);
  assert.equal(page.response.headers.get('location'), location);
  assert.equal(page.response.headers.get('cache-control'), 'no-store');
}

/** Nothing of a hostile value reaches the page as markup. */
function assertEscaped(body: string): void {
  assert.ok(!body.includes('<script>alert'), body);
  assert.ok(!body.includes('"double"'), body);
  assert.ok(!body.includes("'single'"), body);
  assert.ok(!body.includes('<svg'), body);
}

/** Whether the header greets a signed-in `login`. */
const signedInAs = (body: string, login: string) =>
  body.includes(
    `<span class="who" title="Signed in"><bdi>${login}</bdi></span><a href="${PROFILE}">Profile</a><form class="inline" method="post" action="/signout">`,
  );
const signedOut = (body: string) => body.includes('<a href="/signin">Sign in</a>') && !body.includes('action="/signout"');

/** The key shown on a profile page. */
const keyOn = (body: string) => /<code class="key" id="api-key-value">([^<]+)<\/code>/.exec(body)?.[1];

async function apiAccount(t: TestServer, key: string): Promise<number> {
  return (await t.fetch('/account', { headers: { Authorization: key } })).status;
}

describe('web accounts', () => {
  let t: TestServer;
  const clock = new TestClock();
  before(async () => {
    // A high sign-in limit: the failures of these tests must not add up to it.
    t = await startTestServer({ loginAttemptsPerMinute: 1000 }, clock);
  });
  after(() => t.close());

  const browser = () => new Browser(t.url);

  describe('sign-in', () => {
    test('the form works without JavaScript and binds a short-lived pre-session cookie', async () => {
      const b = browser();
      const page = await b.get('/signin');
      const body = html(page, 200);
      assert.ok(body.includes('<form class="stack" method="post" action="/signin">'), body);
      assert.ok(csrfOf(body));
      const pre = setCookieFor(page, 'fh_presession');
      assert.ok(pre, page.setCookies.join('\n'));
      assert.equal(pre.attributes.get('max-age'), '7200');
      assert.ok(pre.attributes.has('httponly'));
      assert.equal(pre.attributes.get('samesite'), 'Lax');
      assert.ok(signedOut(body));
      // Closed sign-up is not advertised.
      assert.ok(!body.includes('/signup'), body);
    });

    test('a wrong password answers 401 with the form again and starts no session', async () => {
      const { login } = await t.account();
      const b = browser();
      const page = await b.signIn(login, 'wrong password!');
      const body = html(page, 401);
      assert.ok(body.includes('Wrong login or password.'), body);
      assert.equal(setCookieFor(page, 'fh_session'), undefined);
      assert.ok(!b.cookies.has('fh_session'));
      // The login is kept, the password is not.
      assert.ok(body.includes(`value="${login}"`), body);
      assert.ok(!body.includes('wrong password!'), body);
      // An unknown login reads the same.
      assert.ok(html(await b.signIn('nobody-here', 'whatever123'), 401).includes('Wrong login or password.'));
    });

    test('the right password: 303 to the profile with an HttpOnly, SameSite=Lax session cookie', async () => {
      const { login, password, account } = await t.account();
      const b = browser();
      const page = await b.signIn(login, password);
      redirect(page, PROFILE);
      const cookie = setCookieFor(page, 'fh_session');
      assert.ok(cookie, page.setCookies.join('\n'));
      assert.match(cookie.value, /^[A-Za-z0-9_-]{43}$/);
      assert.ok(cookie.attributes.has('httponly'));
      assert.equal(cookie.attributes.get('samesite'), 'Lax');
      assert.equal(cookie.attributes.get('path'), '/');
      assert.equal(cookie.attributes.get('max-age'), String(30 * 86_400));
      // Served over plain http with an http web_url: not Secure (the browser would drop it).
      assert.ok(!cookie.attributes.has('secure'));
      // The pre-session is over.
      assert.equal(setCookieFor(page, 'fh_presession')?.attributes.get('max-age'), '0');
      // The database holds the token's hash, never the token.
      const sessions = t.server.services.store.sessions;
      assert.equal(await sessions.byId(cookie.value), null);
      assert.equal((await sessions.byId(sha256(cookie.value)))?.accountId, account.id);

      const profile = html(await b.get(PROFILE), 200);
      assert.ok(signedInAs(profile, login), profile);
      // Signed in, /signin leads to the profile.
      redirect(await b.get('/signin'), PROFILE);
    });

    test('session fixation: every sign-in issues a new token and ends the one the browser held', async () => {
      const { login, password } = await t.account();
      const b = browser();
      // A token an attacker planted (well-formed, never issued) is not adopted.
      const planted = 'A'.repeat(43);
      b.cookies.set('fh_session', planted);
      redirect(await b.signIn(login, password), PROFILE);
      const first = b.cookies.get('fh_session')!;
      assert.notEqual(first, planted);

      // Signing in again while signed in (a signed-in GET /signin redirects, so the form
      // comes from before the session cookie was there).
      const form = browser();
      const pre = await form.get('/signin');
      form.cookies.set('fh_session', first);
      redirect(await form.post('/signin', { csrf: csrfOf(pre.body)!, login, password }), PROFILE);
      const second = form.cookies.get('fh_session')!;
      assert.notEqual(second, first);
      // The old session is gone, the new one works.
      redirect(await b.get(PROFILE), SIGN_IN_TO_PROFILE);
      assert.ok(signedInAs(html(await form.get(PROFILE), 200), login));
    });

    test('a disabled account cannot sign in', async () => {
      const { login, password, account } = await t.account();
      await t.server.services.store.accounts.setDisabled(account.id, true);
      html(await browser().signIn(login, password), 401);
    });
  });

  describe('sessions', () => {
    test('the header shows the login, Profile and a sign-out form on every page', async () => {
      const { login, password, key } = await t.account({ premiumDays: 30 });
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const up = await t.upload(key, 'notes.txt', 'hello');
      for (const path of ['/', '/developers', new URL(up.downloadLink).pathname, '/no/such/page/here']) {
        const page = await b.get(path);
        assert.ok(signedInAs(page.body, login), `${path}: ${page.body}`);
        assert.equal(page.response.headers.get('cache-control'), 'no-store', path);
      }
      assert.ok(signedOut((await browser().get('/')).body));
    });

    test('the API never accepts the session cookie in place of a key', async () => {
      const { login, password } = await t.account();
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const response = await t.fetch('/account', { headers: { Cookie: b.cookieHeader()! } });
      assert.equal(response.status, 401);
      assert.equal(atomError(await response.text())?.code, 'errorPermissionDenied');
    });

    test('a disabled account loses its session at once, and enabling it does not bring it back', async () => {
      const { login, password, account } = await t.account();
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const token = b.cookies.get('fh_session')!;
      html(await b.get(PROFILE), 200);
      await t.server.services.store.accounts.setDisabled(account.id, true);
      const after = await b.get(PROFILE);
      redirect(after, SIGN_IN_TO_PROFILE);
      assert.equal(setCookieFor(after, 'fh_session')?.attributes.get('max-age'), '0');
      assert.equal(await t.server.services.store.sessions.byId(sha256(token)), null);
      await t.server.services.store.accounts.setDisabled(account.id, false);
      b.cookies.set('fh_session', token);
      redirect(await b.get(PROFILE), SIGN_IN_TO_PROFILE);
    });

    test("an operator's password reset signs the account out everywhere", async () => {
      const { login, password } = await t.account();
      const [one, two] = [browser(), browser()];
      redirect(await one.signIn(login, password), PROFILE);
      redirect(await two.signIn(login, password), PROFILE);
      await t.server.services.accounts.setPassword(login, 'a brand new password');
      redirect(await one.get(PROFILE), SIGN_IN_TO_PROFILE);
      redirect(await two.get(PROFILE), SIGN_IN_TO_PROFILE);
      html(await one.signIn(login, password), 401);
      redirect(await one.signIn(login, 'a brand new password'), PROFILE);
    });

    test('a download renews the session cookie too (the download takes its response over)', async () => {
      const { login, password, key } = await t.account();
      const uploaded = await t.upload(key, 'renew.txt', 'renewing bytes');
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const token = b.cookies.get('fh_session')!;
      clock.advance(20 * DAY);
      const download = await b.get(`${new URL(uploaded.downloadLink).pathname}?download=1`);
      assert.equal(download.status, 200);
      assert.equal(download.body, 'renewing bytes');
      const renewed = setCookieFor(download, 'fh_session');
      assert.equal(renewed?.value, token, 'the renewed cookie rides on the download');
      assert.ok(Number(renewed?.attributes.get('max-age')) > 20 * 86_400);
    });

    test('sessions slide for 30 days of disuse and end 90 days after sign-in', async () => {
      const { login, password } = await t.account();
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const token = b.cookies.get('fh_session')!;
      for (let i = 0; i < 4; i++) {
        clock.advance(20 * DAY);
        const page = await b.get(PROFILE);
        html(page, 200);
        // Each use renews the cookie's lifetime too (same token).
        const renewed = setCookieFor(page, 'fh_session');
        assert.equal(renewed?.value, token);
        assert.ok(Number(renewed?.attributes.get('max-age')) > 0);
      }
      // 91 days after sign-in, 11 days after the last use: over.
      clock.advance(11 * DAY);
      redirect(await b.get(PROFILE), SIGN_IN_TO_PROFILE);

      // Unused for more than 30 days: over.
      const c = browser();
      redirect(await c.signIn(login, password), PROFILE);
      clock.advance(30 * DAY + 1000);
      redirect(await c.get(PROFILE), SIGN_IN_TO_PROFILE);
    });
  });

  describe('profile', () => {
    test('needs a session', async () => {
      redirect(await browser().get(PROFILE), SIGN_IN_TO_PROFILE);
    });

    test('shows the key POST /apikeys returns, the account details, premium and traffic', async () => {
      const { login, password, key } = await t.account({ premiumDays: 30, trafficBytes: 7 * 1024 ** 3, name: 'Ada Lovelace', email: 'ada@example.org' });
      await t.server.services.accounts.setBalance(login, 1250);
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const body = html(await b.get(PROFILE), 200);
      assert.equal(keyOn(body), key);
      assert.ok(body.includes('<dt>Name</dt><dd><bdi>Ada Lovelace</bdi></dd>'), body);
      assert.ok(body.includes('<dt>E-mail</dt><dd><bdi>ada@example.org</bdi></dd>'), body);
      assert.ok(body.includes('<dt>Balance</dt><dd>12.50</dd>'), body);
      assert.match(body, /<span class="badge ok">Active<\/span> until [^<]+ · 30 days left/);
      assert.ok(body.includes('<progress class="bar" max="30" value="30"'), body);
      assert.ok(body.includes(`<meter class="bar" min="0" max="${10 * 1024 ** 3}"`), body);
      assert.ok(body.includes(`value="${7 * 1024 ** 3}"`), body);
      assert.ok(body.includes('<strong>7.0 GiB</strong>'), body);
      // The copy button is JavaScript's to show; the script comes from /static/.
      assert.ok(body.includes('data-copy="api-key-value" hidden>Copy</button>'), body);
      assert.ok(body.includes(`<script src="${browserScript('profile').path}" defer></script>`), body);
      const script = await t.fetch(browserScript('profile').path);
      assert.equal(script.status, 200);
      assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
      assert.ok((await script.text()).includes('navigator.clipboard'));
    });

    test('an account without premium says so', async () => {
      const { login, password } = await t.account({ name: '' });
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const body = html(await b.get(PROFILE), 200);
      assert.ok(body.includes('<span class="badge">Not premium</span>'), body);
      assert.ok(body.includes('<dt>Name</dt><dd><span class="meta">not set</span></dd>'), body);
      assert.ok(!body.includes('<progress'), body);
    });

    test('regenerating the key needs the CSRF token and the confirmation; the old key stops working', async () => {
      const { login, password, key } = await t.account();
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const csrf = csrfOf((await b.get(PROFILE)).body)!;

      html(await b.post(REGENERATE, { confirm: 'yes' }), 403);
      html(await b.post(REGENERATE, { confirm: 'yes', csrf: `${csrf.slice(0, -2)}${csrf.endsWith('xx') ? 'yy' : 'xx'}` }), 403);
      assert.equal(await apiAccount(t, key), 200);

      const unconfirmed = html(await b.post(REGENERATE, { csrf }), 400);
      assert.ok(unconfirmed.includes('Your key was not changed.'), unconfirmed);
      assert.equal(keyOn(unconfirmed), key);
      assert.equal(await apiAccount(t, key), 200);

      redirect(await b.post(REGENERATE, { csrf, confirm: 'yes' }), `${PROFILE}?key=new#api-key`);
      const body = html(await b.get(`${PROFILE}?key=new`), 200);
      const fresh = keyOn(body)!;
      assert.notEqual(fresh, key);
      assert.ok(body.includes('The old one no longer works.'), body);
      assert.equal(await apiAccount(t, key), 401);
      assert.equal(await apiAccount(t, fresh), 200);
      // POST /apikeys now returns the new key.
      const api = await t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login, password }) });
      assert.ok((await api.text()).includes(`<content type="text">${fresh}</content>`));
    });

    test('a signed-out browser cannot regenerate', async () => {
      const { key } = await t.account();
      const page = await browser().post(REGENERATE, { confirm: 'yes', csrf: 'x' });
      assert.ok(html(page, 403).includes('You are signed out'));
      assert.equal(await apiAccount(t, key), 200);
    });
  });

  describe('sign-out', () => {
    test('needs the CSRF token; then the cookie no longer works', async () => {
      const { login, password } = await t.account();
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const token = b.cookies.get('fh_session')!;
      const csrf = csrfOf((await b.get('/')).body)!;

      html(await b.post('/signout', {}), 403);
      html(await b.post('/signout', { csrf: 'forged' }), 403);
      html(await b.get(PROFILE), 200);

      const out = await b.post('/signout', { csrf });
      redirect(out, '/');
      assert.equal(setCookieFor(out, 'fh_session')?.attributes.get('max-age'), '0');
      assert.equal(await t.server.services.store.sessions.byId(sha256(token)), null);
      assert.ok(signedOut(html(await b.get('/'), 200)));
      // Replaying the old cookie does not sign anyone in.
      b.cookies.set('fh_session', token);
      redirect(await b.get(PROFILE), SIGN_IN_TO_PROFILE);
    });

    test("another session's token does not sign this one out", async () => {
      const { login, password } = await t.account();
      const [one, two] = [browser(), browser()];
      redirect(await one.signIn(login, password), PROFILE);
      redirect(await two.signIn(login, password), PROFILE);
      const otherCsrf = csrfOf((await two.get('/')).body)!;
      html(await one.post('/signout', { csrf: otherCsrf }), 403);
      html(await one.get(PROFILE), 200);
    });
  });

  describe('CSRF on the sign-in form', () => {
    test('a POST without a valid pre-session token is refused with 403 and starts no session', async () => {
      const { login, password } = await t.account();
      const b = browser();
      const csrf = await b.csrfFrom('/signin');
      const attempts: Array<[string, Browser, Record<string, string>]> = [
        ['no token', b, { login, password }],
        ['a forged token', b, { login, password, csrf: 'A'.repeat(43) }],
        // Double submit: the token is bound to this browser's pre-session cookie.
        ['a token without its cookie', browser(), { login, password, csrf }],
      ];
      // An attacker's own valid pair does not fit the victim's cookie.
      const attacker = browser();
      const attackerCsrf = await attacker.csrfFrom('/signin');
      attempts.push(["the attacker's token", b, { login, password, csrf: attackerCsrf }]);
      for (const [what, who, fields] of attempts) {
        const page = await who.post('/signin', fields);
        const body = html(page, 403);
        assert.ok(body.includes('This form has expired or did not come from this site'), what);
        assert.equal(setCookieFor(page, 'fh_session'), undefined, what);
      }
      // A session's token is not a pre-session token (separate purposes).
      const signedIn = browser();
      redirect(await signedIn.signIn(login, password), PROFILE);
      const sessionCsrf = csrfOf((await signedIn.get(PROFILE)).body)!;
      html(await b.post('/signin', { login, password, csrf: sessionCsrf }), 403);
      // The genuine pair still works.
      redirect(await b.post('/signin', { login, password, csrf }), PROFILE);
    });

    test('a pre-session older than two hours is refused', async () => {
      const { login, password } = await t.account();
      const b = browser();
      const csrf = await b.csrfFrom('/signin');
      clock.advance(2 * 3_600_000 + 1);
      html(await b.post('/signin', { login, password, csrf }), 403);
    });
  });

  describe('hostile names', () => {
    test('are escaped (and bidi-isolated) on the profile and in the header', async () => {
      const { login, password } = await t.account({ name: HOSTILE_NAME, email: '"><svg onload=alert(1)>@example.org' });
      const b = browser();
      redirect(await b.signIn(login, password), PROFILE);
      const body = html(await b.get(PROFILE), 200);
      assertEscaped(body);
      assert.ok(
        body.includes('<bdi>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &#39;single&#39; &quot;double&quot; \u202Eevil\u200F &amp; more</bdi>'),
        body,
      );
      assert.ok(body.includes('<bdi>&quot;&gt;&lt;svg onload=alert(1)&gt;@example.org</bdi>'), body);
    });

    test('a hostile login typed into the sign-in form comes back escaped', async () => {
      const page = await browser().signIn(`"><script>alert("x")</script>'single'`, 'password1');
      const body = html(page, 401);
      assertEscaped(body);
      assert.ok(body.includes('value="&quot;&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;single&#39;"'), body);
    });
  });
});

describe('sign-in limit', () => {
  test('the limit of POST /apikeys applies to the form, counted together with the API', async () => {
    const t = await startTestServer({ loginAttemptsPerMinute: 3 });
    try {
      const { login, password } = await t.account();
      const b = new Browser(t.url);
      const api = await t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login, password: 'nope-nope' }) });
      assert.equal(api.status, 401);
      for (const attempt of ['wrong-1', 'wrong-2']) html(await b.signIn(login, attempt), 401);
      // The limit is full: even the right password waits.
      const refused = await b.signIn(login, password);
      const body = html(refused, 429);
      assert.ok(body.includes('Too many failed sign-ins'), body);
      assert.match(refused.response.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(setCookieFor(refused, 'fh_session'), undefined);
    } finally {
      await t.close();
    }
  });
});

describe('sign-up', () => {
  test('closed (the default): 404 pages, nothing created', async () => {
    const t = await startTestServer();
    try {
      assert.equal(t.server.services.config.signup, 'closed');
      const b = new Browser(t.url);
      html(await b.get('/signup'), 404);
      html(await b.post('/signup', { login: 'newbie', password: 'long enough', password_again: 'long enough' }), 404);
      assert.equal(await t.server.services.store.accounts.byLogin('newbie'), null);
    } finally {
      await t.close();
    }
  });

  describe('open', () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer({ signup: 'open' });
    });
    after(() => t.close());

    const fill = (overrides: Record<string, string> = {}) => ({
      login: 'grace',
      name: 'Grace Hopper',
      email: 'grace@example.org',
      password: 'compilers rock',
      password_again: 'compilers rock',
      ...overrides,
    });

    test('creates the account, signs it in, and POST /apikeys returns the key the profile shows', async () => {
      const b = new Browser(t.url);
      const signin = html(await b.get('/signin'), 200);
      assert.ok(signin.includes('<a href="/signup">Create one</a>'), signin);
      const csrf = await b.csrfFrom('/signup');
      const page = await b.post('/signup', { ...fill(), csrf });
      redirect(page, PROFILE);
      const cookie = setCookieFor(page, 'fh_session');
      assert.ok(cookie?.attributes.has('httponly'));
      const account = await t.server.services.store.accounts.byLogin('grace');
      assert.ok(account);
      assert.equal(account.name, 'Grace Hopper');
      assert.equal(account.email, 'grace@example.org');
      assert.equal(account.isOperator, false);
      assert.equal(account.premiumEnd, null);
      const profile = html(await b.get(PROFILE), 200);
      assert.ok(signedInAs(profile, 'grace'), profile);
      const api = await t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login: 'grace', password: 'compilers rock' }) });
      assert.ok((await api.text()).includes(`<content type="text">${keyOn(profile)}</content>`));
    });

    test('validates the input and keeps what was typed (but never the passwords)', async () => {
      const cases: Array<[Record<string, string>, RegExp]> = [
        [{ login: 'has space' }, /Login must be 1-64 characters/],
        [{ login: '' }, /Login must be 1-64 characters/],
        [{ login: 'grace' }, /Login &quot;grace&quot; is already taken/],
        // The first start's operator is `admin`, created once the server listens: a visitor
        // must not take the name first (nor pass for staff under a look-alike).
        [{ login: 'admin' }, /Login &quot;admin&quot; is reserved/],
        [{ login: 'Root' }, /Login &quot;Root&quot; is reserved/],
        [{ password: 'short', password_again: 'short' }, /Password must be at least 8 characters/],
        [{ password_again: 'compilers ROCK' }, /The two passwords differ/],
        [{ email: 'not-an-address' }, /E-mail must look like/],
        [{ name: 'x'.repeat(101) }, /Name must be at most 100 characters/],
        [{ name: 'bell\u0007' }, /Name must not contain control characters/],
      ];
      if (!(await t.server.services.store.accounts.byLogin('grace'))) {
        await t.server.services.accounts.create({ login: 'grace', password: 'compilers rock' });
      }
      for (const [overrides, message] of cases) {
        const b = new Browser(t.url);
        const csrf = await b.csrfFrom('/signup');
        const fields = fill({ login: `ok-${Math.random().toString(36).slice(2, 8)}`, ...overrides });
        const page = await b.post('/signup', { ...fields, csrf });
        const body = html(page, 400);
        assert.match(body, message);
        assert.equal(setCookieFor(page, 'fh_session'), undefined);
        assert.ok(body.includes(`name="email" type="email" value="${fields.email}"`), body);
        assert.ok(!body.includes(fields.password!), body);
        // grace and admin (the first start's operator) were there before.
        if (fields.login !== 'grace' && fields.login !== 'admin') assert.equal(await t.server.services.store.accounts.byLogin(fields.login!), null);
      }
    });

    test('refuses a POST without a valid CSRF token', async () => {
      const b = new Browser(t.url);
      const csrf = await b.csrfFrom('/signup');
      for (const fields of [fill({ login: 'csrf-a' }), fill({ login: 'csrf-b', csrf: 'forged' })]) {
        const body = html(await b.post('/signup', fields), 403);
        assert.ok(body.includes('This form has expired or did not come from this site'), body);
      }
      html(await new Browser(t.url).post('/signup', { ...fill({ login: 'csrf-c' }), csrf }), 403);
      for (const login of ['csrf-a', 'csrf-b', 'csrf-c']) assert.equal(await t.server.services.store.accounts.byLogin(login), null);
    });

    test('escapes hostile names on the form and on the profile', async () => {
      const b = new Browser(t.url);
      const csrf = await b.csrfFrom('/signup');
      const rejected = html(await b.post('/signup', { ...fill({ login: '"><svg onload=alert(1)>', name: HOSTILE_NAME }), csrf }), 400);
      assertEscaped(rejected);
      assert.ok(rejected.includes('value="&quot;&gt;&lt;svg onload=alert(1)&gt;"'), rejected);
      redirect(await b.post('/signup', { ...fill({ login: 'hostile', name: HOSTILE_NAME }), csrf }), PROFILE);
      const profile = html(await b.get(PROFILE), 200);
      assertEscaped(profile);
      assert.ok(profile.includes('<bdi>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'), profile);
    });
  });
});

describe('Secure cookies over HTTPS', () => {
  test('when {web_url} is https', async () => {
    const t = await startTestServer({ webUrl: 'https://files.example.org' });
    try {
      const { login, password } = await t.account();
      const b = new Browser(t.url);
      const form = await b.get('/signin');
      assert.ok(setCookieFor(form, 'fh_presession')?.attributes.has('secure'));
      const page = await b.signIn(login, password);
      redirect(page, PROFILE);
      const cookie = setCookieFor(page, 'fh_session');
      assert.ok(cookie?.attributes.has('secure'), page.setCookies.join('\n'));
      assert.ok(cookie?.attributes.has('httponly'));
      assert.equal(cookie?.attributes.get('samesite'), 'Lax');
    } finally {
      await t.close();
    }
  });

  test('when the proxy says https, but only with --trust-proxy', async () => {
    for (const trustProxy of [true, false]) {
      const t = await startTestServer({ trustProxy });
      try {
        const { login, password } = await t.account();
        const page = await new Browser(t.url, { 'X-Forwarded-Proto': 'https' }).signIn(login, password);
        redirect(page, PROFILE);
        assert.equal(setCookieFor(page, 'fh_session')?.attributes.has('secure'), trustProxy);
      } finally {
        await t.close();
      }
    }
  });
});

describe('--signup setting', () => {
  test('flag, environment variable and config file; closed by default', () => {
    assert.equal(loadConfig({}, {}).signup, 'closed');
    assert.equal(loadConfig({ signup: 'open' }, {}).signup, 'open');
    assert.equal(loadConfig({}, { FILEHAVEN_SIGNUP: 'OPEN' }).signup, 'open');
    assert.equal(loadConfig({ signup: 'closed' }, { FILEHAVEN_SIGNUP: 'open' }).signup, 'closed');
    assert.throws(
      () => loadConfig({ signup: 'maybe' }, {}),
      (error: unknown) => error instanceof ConfigError && /--signup "maybe": expected open or closed/.test(error.message),
    );
  });
});
