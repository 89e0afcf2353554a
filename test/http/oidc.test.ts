import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser, csrfOf, type Page } from '../helpers/browser.js';
import { freePort } from '../helpers/cluster.js';
import { signInAtProvider, startProvider, TEST_CLIENT, type TestProvider } from '../helpers/oidc-provider.js';
import { atomError, startTestServer, type TestServer } from '../helpers/server.js';

// Single sign-on through OpenID Connect (issue 26), end to end over HTTP against a real
// provider (oidc-provider in its own process): the authorization code flow with PKCE, the
// state bound to the browser, the ID token checked against the issuer's keys. Redirects are
// followed by hand, so every hop can be checked.

const PROFILE = '/accounts/profile/misc';
const CALLBACK = '/signin/oidc/callback';

let provider: TestProvider;
let expiredProvider: TestProvider;
let tamperingProvider: TestProvider;
/** Sign-up on: a new identity gets an account. Its {web_url} is every server's: one site behind a load balancer. */
let t: TestServer;
/** Same site, sign-up off. */
let closed: TestServer;
let counter = 0;
/** A login at the provider (its subject) no other test uses. */
const person = (name: string) => `${name}${++counter}p${process.pid}`;

before(async () => {
  const port = await freePort();
  const webUrl = `http://127.0.0.1:${port}`;
  const redirectUris = [`${webUrl}${CALLBACK}`];
  [provider, expiredProvider, tamperingProvider] = await Promise.all([
    startProvider({ redirectUris }),
    // Two hours behind: its ID tokens (valid one hour) are expired when they arrive.
    startProvider({ redirectUris, clockOffsetMs: -2 * 3600_000 }),
    startProvider({ redirectUris, tamperIdToken: true }),
  ]);
  t = await startTestServer({
    port,
    webUrl,
    oidcIssuer: provider.url,
    oidcClientId: TEST_CLIENT.id,
    oidcClientSecret: TEST_CLIENT.secret,
    oidcName: 'Test SSO',
    oidcSignup: true,
    loginAttemptsPerMinute: 1000,
  });
  closed = await t.sibling({ port: 0, oidcSignup: false });
});

after(async () => {
  await closed?.close();
  await t?.close();
  await Promise.all([provider?.stop(), expiredProvider?.stop(), tamperingProvider?.stop()]);
});

/** Clicks "Sign in with Test SSO": the flow's start, a 303 to the provider. Returns the provider's URL. */
async function startFlow(browser: Browser): Promise<string> {
  const page = await browser.get('/signin');
  const href = /<a class="button" href="([^"]+)">Sign in with Test SSO<\/a>/.exec(page.body)?.[1];
  assert.ok(href, page.body);
  const started = await browser.get(href.replace(/&amp;/g, '&'));
  assert.equal(started.status, 303, started.body);
  const location = started.response.headers.get('location') ?? '';
  const url = new URL(location);
  const issuer = new URL(location).origin;
  assert.ok([provider.url, expiredProvider.url, tamperingProvider.url].includes(issuer), location);
  // Authorization code flow with PKCE (RFC 7636, S256), a state and a nonce (OIDC Core 3.1.2.1).
  assert.equal(url.searchParams.get('response_type'), 'code');
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  assert.match(url.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
  assert.ok(url.searchParams.get('nonce'));
  assert.equal(url.searchParams.get('redirect_uri'), `${t.url}${CALLBACK}`);
  assert.equal(url.searchParams.get('scope'), 'openid profile email');
  // The flow cookie binds the callback to this browser; the state sent out (into the
  // issuer's logs, the URL bar) must not reveal it.
  const state = url.searchParams.get('state') ?? '';
  const cookie = browser.cookies.get('fh_oidc') ?? '';
  assert.match(cookie, /^[A-Za-z0-9_-]{43}$/);
  assert.match(state, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(!state.includes(cookie) && !cookie.includes(state), 'the state is not the cookie');
  return location;
}

/** The callback URL as a path of the site. */
const pathOf = (callback: string) => {
  const url = new URL(callback);
  assert.equal(url.origin + url.pathname, `${t.url}${CALLBACK}`);
  return url.pathname + url.search;
};

/** Signs `login` in at the provider from `browser`; the callback's answer. */
async function signInWithSso(browser: Browser, login: string): Promise<Page> {
  return browser.get(pathOf(await signInAtProvider(await startFlow(browser), login)));
}

/** The login of the account a browser is signed in to (its profile). */
async function signedInLogin(browser: Browser): Promise<string | undefined> {
  const profile = await browser.get(PROFILE);
  assert.equal(profile.status, 200, profile.body);
  return /<dt>Login<\/dt><dd><bdi>([^<]+)<\/bdi>/.exec(profile.body)?.[1];
}

function assertSignedIn(page: Page, next = PROFILE) {
  assert.equal(page.status, 303, page.body);
  assert.equal(page.response.headers.get('location'), next);
  assert.ok(
    page.setCookies.some((line) => line.startsWith('fh_session=') && !line.startsWith('fh_session=;')),
    'a session cookie',
  );
}

function assertRefused(page: Page, status: number, text: RegExp) {
  assert.equal(page.status, status, page.body);
  assert.match(page.body, text);
  assert.ok(!page.setCookies.some((line) => /^fh_session=[^;]/.test(line)), 'no session');
}

describe('signing in', () => {
  test('a new identity gets an account (login, name, e-mail from the claims); signing in again lands in the same one', async () => {
    const ada = person('ada');
    const first = new Browser(t.url);
    const answer = await signInWithSso(first, ada);
    assertSignedIn(answer);
    assert.equal(first.cookies.has('fh_oidc'), false, 'the flow cookie is gone');
    assert.equal(await signedInLogin(first), ada);
    const account = await t.server.services.store.accounts.byLogin(ada);
    assert.equal(account?.name, `Test ${ada}`);
    assert.equal(account?.email, `${ada}@example.test`);
    // No password signs it in, and the password form says only what it says for any wrong password.
    assertRefused(await new Browser(t.url).signIn(ada, 'any password at all'), 401, /Wrong login or password\./);
    const again = new Browser(t.url);
    assertSignedIn(await signInWithSso(again, ada));
    assert.equal(await signedInLogin(again), ada);
    assert.equal((await t.server.services.store.identities.listForAccount(account!.id)).length, 1);
  });

  test('the login is made unique: a taken one gets -2', async () => {
    const grace = person('grace');
    await t.account({ login: grace });
    const browser = new Browser(t.url);
    assertSignedIn(await signInWithSso(browser, grace));
    assert.equal(await signedInLogin(browser), `${grace}-2`);
  });

  test('the sign-in returns to the page that asked for it', async () => {
    const browser = new Browser(t.url);
    const page = await browser.get('/signin?next=%2Fmy%2Ffiles');
    const href = /href="(\/signin\/oidc[^"]*)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    assert.equal(href, '/signin/oidc?next=%2Fmy%2Ffiles');
    const started = await browser.get(href!);
    const callback = await signInAtProvider(started.response.headers.get('location')!, person('ret'));
    assertSignedIn(await browser.get(pathOf(callback)), '/my/files');
  });

  test('with sign-up off, a new identity is refused with a clear page', async () => {
    const browser = new Browser(closed.url);
    const started = await browser.get('/signin/oidc');
    const callback = await signInAtProvider(started.response.headers.get('location')!, person('nobody'));
    assertRefused(await browser.get(pathOf(callback)), 403, /No account of this site is linked to this identity/);
  });

  test('an e-mail match never links: a password account with the same e-mail is not signed in', async () => {
    const eve = person('eve');
    const owner = await t.account({ login: `${eve}-pw`, email: `${eve}@example.test` });
    // Sign-up off: refused, although an account has the identity's e-mail address.
    const refusedBrowser = new Browser(closed.url);
    const started = await refusedBrowser.get('/signin/oidc');
    assertRefused(await refusedBrowser.get(pathOf(await signInAtProvider(started.response.headers.get('location')!, eve))), 403, /No account/);
    // Sign-up on: a new account, not the one with the e-mail.
    const browser = new Browser(t.url);
    assertSignedIn(await signInWithSso(browser, eve));
    assert.equal(await signedInLogin(browser), eve);
    assert.deepEqual(await t.server.services.store.identities.listForAccount(owner.account.id), []);
  });

  test('a disabled account is not signed in', async () => {
    const dan = person('dan');
    assertSignedIn(await signInWithSso(new Browser(t.url), dan));
    const account = await t.server.services.store.accounts.byLogin(dan);
    await t.server.services.store.accounts.setDisabled(account!.id, true);
    assertRefused(await signInWithSso(new Browser(t.url), dan), 403, /disabled/);
  });
});

describe('the state', () => {
  test('a wrong state, a state without its browser, a replayed one, a callback opened twice: clear pages, one sign-in', async () => {
    const browser = new Browser(t.url);
    const callback = pathOf(await signInAtProvider(await startFlow(browser), person('sam')));
    const state = new URL(callback, t.url).searchParams.get('state')!;
    const code = new URL(callback, t.url).searchParams.get('code')!;
    const flowCookie = browser.cookies.get('fh_oidc')!;

    // The callback URL leaked (the issuer's logs, a proxy): its state in a cookie of another browser is worth nothing.
    const thief = new Browser(t.url);
    thief.cookies.set('fh_oidc', state);
    assertRefused(await thief.get(callback), 403, /started in another browser/);

    // Another browser (login CSRF, a link passed on): no flow cookie.
    assertRefused(await new Browser(t.url).get(callback), 403, /started in another browser/);
    // A wrong state in this browser.
    assertRefused(await browser.get(`${CALLBACK}?code=${code}&state=${'A'.repeat(43)}`), 403, /started in another browser/);

    // The refusals spent nothing, but the wrong-state request cleared this browser's cookie:
    // the flow cookie goes with any callback. Put it back, as a second tab would still hold it.
    browser.cookies.set('fh_oidc', flowCookie);
    const twin = new Browser(t.url);
    twin.cookies.set('fh_oidc', flowCookie);
    // The callback opened twice at once: one signs in, the other gets a clear page.
    const pages = await Promise.all([browser.get(callback), twin.get(callback)]);
    const statuses = pages.map((page) => page.status).sort();
    assert.deepEqual(statuses, [303, 403], pages.map((page) => page.body).join('\n'));
    assertRefused(pages.find((page) => page.status === 403)!, 403, /used already or has expired/);

    // Replayed later with the cookie: the state was single-use.
    const replay = new Browser(t.url);
    replay.cookies.set('fh_oidc', flowCookie);
    assertRefused(await replay.get(callback), 403, /used already or has expired/);
    // Nonsense and nothing: clear pages too, never a 500.
    assertRefused(await replay.get(`${CALLBACK}?state=%00%ff&code=`), 403, /Sign-in not finished/);
    assertRefused(await new Browser(t.url).get(CALLBACK), 403, /Sign-in not finished/);
  });

  test('the flow starts on one server and its callback lands on another of the same site', async () => {
    const known = person('kim');
    assertSignedIn(await signInWithSso(new Browser(t.url), known));
    const first = new Browser(t.url);
    const callback = pathOf(await signInAtProvider(await startFlow(first), known));
    // The other server (the sign-up-off one: the identity is known) with this browser's cookies.
    const other = new Browser(closed.url);
    for (const [name, value] of first.cookies) other.cookies.set(name, value);
    assertSignedIn(await other.get(callback));
    assert.equal(await signedInLogin(other), known);
  });
});

describe('the ID token', () => {
  test('an expired ID token is refused', async () => {
    const server = await t.sibling({ port: 0, oidcIssuer: expiredProvider.url });
    try {
      const browser = new Browser(server.url);
      const started = await browser.get('/signin/oidc');
      assert.equal(started.status, 303, started.body);
      const callback = await signInAtProvider(started.response.headers.get('location')!, person('old'));
      assertRefused(await browser.get(pathOf(callback)), 403, /could not be verified/);
    } finally {
      await server.close();
    }
  });

  test('an ID token altered on the way (its signature no longer matches) is refused', async () => {
    const server = await t.sibling({ port: 0, oidcIssuer: tamperingProvider.url });
    try {
      const victim = person('vic');
      const browser = new Browser(server.url);
      const started = await browser.get('/signin/oidc');
      const callback = await signInAtProvider(started.response.headers.get('location')!, victim);
      assertRefused(await browser.get(pathOf(callback)), 403, /could not be verified/);
      assert.equal(await t.server.services.store.accounts.byLogin(victim), null);
      assert.equal(await t.server.services.store.accounts.byLogin(`${victim}-tampered`), null);
    } finally {
      await server.close();
    }
  });
});

describe('an issuer that is down', () => {
  test('it goes down during a sign-in: the callback, then the button, lead to a clear page; password sign-in still works', async () => {
    const going = await startProvider({ redirectUris: [`${t.url}${CALLBACK}`] });
    const server = await t.sibling({ port: 0, oidcIssuer: going.url });
    try {
      const browser = new Browser(server.url);
      const started = await browser.get('/signin/oidc');
      const callback = await signInAtProvider(started.response.headers.get('location') ?? '', person('gone'));
      await going.stop();
      assertRefused(await browser.get(pathOf(callback)), 503, /cannot be reached right now/);
      // The sign-in page works and shows the button; the button's page says the issuer is down.
      const signIn = await browser.get('/signin');
      assert.equal(signIn.status, 200);
      assert.match(signIn.body, /Sign in with Test SSO/);
      const page = await browser.get('/signin/oidc');
      assert.equal(page.status, 503, page.body);
      assert.match(page.body, /cannot be reached right now\. Try again in a moment, or sign in with your password/);
      assert.equal(browser.cookies.has('fh_oidc'), false, 'no flow began');
      const user = await server.account();
      const posted = await browser.signIn(user.login, user.password);
      assert.equal(posted.status, 303, posted.body);
      assert.equal(posted.response.headers.get('location'), PROFILE);
    } finally {
      await going.stop();
      await server.close();
    }
  });

  test('a server started while the issuer is down (a dead port) starts, and its button says so', async () => {
    const dead = await freePort();
    const server = await t.sibling({ port: 0, oidcIssuer: `http://127.0.0.1:${dead}` });
    try {
      const page = await new Browser(server.url).get('/signin/oidc');
      assert.equal(page.status, 503, page.body);
      assert.match(page.body, /Try again/);
    } finally {
      await server.close();
    }
  });
});

describe('linking from the profile', () => {
  test('a password account links an identity; then SSO signs it in, a password no longer gives its API key, and the last way in stays', async () => {
    const user = await t.account();
    const browser = new Browser(t.url);
    assert.equal((await browser.signIn(user.login, user.password)).status, 303);
    const profile = await browser.get(PROFILE);
    assert.match(profile.body, /id="identities"/);
    assert.match(profile.body, /No identity linked\./);
    const linkForm = /<form method="post" action="\/signin\/oidc\/link">[\s\S]*?<\/form>/.exec(profile.body)?.[0] ?? '';
    assert.match(linkForm, /Link Test SSO/);
    // Without the session's CSRF token nothing starts.
    assert.equal((await browser.post('/signin/oidc/link', {})).status, 403);
    const moving = await browser.post('/signin/oidc/link', { csrf: csrfOf(linkForm)! });
    assert.equal(moving.status, 200, moving.body);
    const authorization = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(moving.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(authorization?.startsWith(provider.url), moving.body);
    if (!authorization) return;
    const linked = person('lin');
    const back = await browser.get(pathOf(await signInAtProvider(authorization, linked)));
    assert.equal(back.status, 303, back.body);
    assert.equal(back.response.headers.get('location'), `${PROFILE}#identities`);
    const after = await browser.get(PROFILE);
    assert.match(after.body, new RegExp(`127\\.0\\.0\\.1:\\d+</strong> · <bdi>${linked}@example\\.test</bdi>`));

    // SSO signs in to this account now, not a new one.
    const sso = new Browser(t.url);
    assertSignedIn(await signInWithSso(sso, linked));
    assert.equal(await signedInLogin(sso), user.login);

    // POST /apikeys: the right password alone no longer hands out the key (API.md error format).
    const keyAnswer = await t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login: user.login, password: user.password }) });
    const body = await keyAnswer.text();
    assert.equal(keyAnswer.status, 403, body);
    assert.equal(atomError(body)?.code, 'errorPermissionDenied');

    // Another account cannot link it.
    const other = await t.account();
    const otherBrowser = new Browser(t.url);
    await otherBrowser.signIn(other.login, other.password);
    const otherForm = await otherBrowser.post('/signin/oidc/link', {
      csrf: csrfOf((await otherBrowser.get(PROFILE)).body.split('action="/signin/oidc/link"')[1] ?? '')!,
    });
    const otherAuth = /content="0;url=([^"]+)"/.exec(otherForm.body)![1]!.replace(/&amp;/g, '&');
    assertRefused(await otherBrowser.get(pathOf(await signInAtProvider(otherAuth, linked))), 409, /linked to another account/);

    // The account has a password: unlinking is allowed.
    const unlinkForm = /<form method="post" action="\/accounts\/profile\/identities\/unlink">[\s\S]*?<\/form>/.exec(after.body)?.[0] ?? '';
    const identity = /name="identity" value="(\d+)"/.exec(unlinkForm)?.[1] ?? '';
    // Not another account's identity.
    const foreign = await otherBrowser.post('/accounts/profile/identities/unlink', { csrf: csrfOf((await otherBrowser.get(PROFILE)).body)!, identity });
    assert.equal(foreign.status, 404, foreign.body);
    const unlinked = await browser.post('/accounts/profile/identities/unlink', { csrf: csrfOf(unlinkForm)!, identity });
    assert.equal(unlinked.status, 303, unlinked.body);
    assert.match((await browser.get(PROFILE)).body, /No identity linked\./);
  });

  test('an account made by SSO cannot unlink its only way in', async () => {
    const solo = person('solo');
    const browser = new Browser(t.url);
    assertSignedIn(await signInWithSso(browser, solo));
    const profile = await browser.get(PROFILE);
    assert.match(profile.body, /The only way into this account, so it cannot be unlinked\./);
    assert.match(profile.body, /This account has no password/);
    const account = await t.server.services.store.accounts.byLogin(solo);
    const [identity] = await t.server.services.store.identities.listForAccount(account!.id);
    const refused = await browser.post('/accounts/profile/identities/unlink', { csrf: csrfOf(profile.body)!, identity: String(identity!.id) });
    assert.equal(refused.status, 409, refused.body);
    assert.match(refused.body, /only way into your account/);
    // POST /apikeys: no password works for it.
    const keyAnswer = await t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login: solo, password: 'anything at all' }) });
    assert.equal(atomError(await keyAnswer.text())?.code, 'errorWrongCredentials');
  });
});

describe('--oidc-only', () => {
  test('no password form but for operators; a password signs in operators only; sign-up closed', async () => {
    const server = await t.sibling({ port: 0, oidcOnly: true, signup: 'open' });
    try {
      const browser = new Browser(server.url);
      const page = await browser.get('/signin');
      assert.match(page.body, /Sign in with Test SSO/);
      assert.doesNotMatch(page.body, /name="password"/);
      assert.doesNotMatch(page.body, /href="\/signup/);
      assert.match(page.body, /<a href="\/signin\?password">Operators: sign in with a password<\/a>/);
      const form = await browser.get('/signin?password');
      assert.match(form.body, /name="password"/);
      // Made directly: POST /apikeys gives non-operators no key here (server.account() uses it).
      const login = `plain${process.pid}`;
      await server.server.services.accounts.create({ login, password: 'correct horse battery' });
      const plain = await browser.post('/signin', { csrf: csrfOf(form.body)!, login, password: 'correct horse battery' });
      assertRefused(plain, 401, /Wrong login or password\./);
      const wrong = await browser.post('/signin', { csrf: csrfOf(form.body)!, login, password: 'not the password' });
      assertRefused(wrong, 401, /Wrong login or password\./);
      await server.server.services.accounts.create({ login: `op${process.pid}`, password: 'correct horse battery', isOperator: true });
      const operator = await browser.post('/signin', { csrf: csrfOf(form.body)!, login: `op${process.pid}`, password: 'correct horse battery' });
      assert.equal(operator.status, 303, operator.body);
      assert.equal((await new Browser(server.url).get('/signup')).status, 404);
      assert.doesNotMatch((await new Browser(server.url).get('/')).body, /href="\/signup/, 'the home page offers no sign-up either');
    } finally {
      await server.close();
    }
  });
});
