// TOTP (RFC 6238) and recovery codes as a second step of password sign-in (issue 26 item 2),
// over HTTP like a browser without JavaScript. Codes come from otpauth, a real generator,
// computed from the key the set-up page shows; the server runs on a test clock so each test
// knows which 30-second step a code belongs to.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { assertAtomError, read } from '../helpers/api-checks.js';
import { Browser, csrfOf, type Page, setCookieFor } from '../helpers/browser.js';
import { startTestServer, TestClock, type TestServer } from '../helpers/server.js';

const PROFILE = '/accounts/profile/misc';
const FACTOR = '/accounts/profile/second-factor';
const CHALLENGE_COOKIE = 'fh_second_factor';

/** The code an authenticator app shows at `at` (SHA-1, 6 digits, 30 s: RFC 6238's defaults). */
const codeAt = (secret: string, at: number) => TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at });

const location = (page: Page) => page.response.headers.get('location');

function redirect(page: Page, to: string): void {
  assert.equal(page.status, 303, page.body);
  assert.equal(location(page), to);
}

/** The key the set-up page shows for typing, without its spaces. */
function secretOf(page: Page): string {
  const grouped = /<code class="key" id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(page.body)?.[1];
  assert.ok(grouped, page.body);
  return grouped.replace(/ /g, '');
}

function recoveryCodesOf(page: Page): string[] {
  const block = /<pre class="key" id="recovery-codes">([^<]*)<\/pre>/.exec(page.body)?.[1];
  assert.ok(block, page.body);
  return block.split('\n');
}

async function postApiKeys(t: TestServer, login: string, password: string) {
  return read(await t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login, password }) }));
}

// The two groups run side by side, each on its own server; the steps of a group in order.
describe('second factor', { concurrency: 2 }, () => {
  describe('two-step verification (TOTP and recovery codes)', { concurrency: 1 }, () => {
    const clock = new TestClock(Date.parse('2026-11-28T01:00:10Z'));
    let t: TestServer;
    let login: string;
    let password: string;
    let secret: string;
    let recovery: string[];

    before(async () => {
      t = await startTestServer({ loginAttemptsPerMinute: 1000 }, clock);
      ({ login, password } = await t.account());
    });
    after(() => t.close());

    /** A new browser that typed the right password: on the code step, its challenge cookie set. */
    async function passwordDone(): Promise<Browser> {
      const browser = new Browser(t.url);
      redirect(await browser.signIn(login, password), '/signin/second-factor');
      return browser;
    }

    /** Sends a code on the code step's form. */
    async function sendCode(browser: Browser, code: string): Promise<Page> {
      const form = await browser.get('/signin/second-factor');
      assert.equal(form.status, 200, form.body);
      return browser.post('/signin/second-factor', { csrf: csrfOf(form.body)!, code });
    }

    test('set up from the profile: a QR code and the key, confirmed by one code, ten recovery codes shown once', async () => {
      const browser = new Browser(t.url);
      redirect(await browser.signIn(login, password), PROFILE);
      const profile = await browser.get(PROFILE);
      assert.match(profile.body, /<h2>Two-step verification<\/h2>\n<p><span class="badge">Off<\/span>/);
      // A set-up someone else began (the password alone reaches the sign-in set-up step) is never shown.
      const planted = await t.server.services.secondFactors.begin((await t.server.services.accounts.byLoginOrFail(login))!, 'attacker');
      const unfinished = await browser.get(FACTOR);
      assert.match(unfinished.body, /Not finished/);
      assert.doesNotMatch(unfinished.body, /id="totp-secret"/);
      const setup = await browser.post(`${FACTOR}/setup`, { csrf: csrfOf(profile.body.slice(profile.body.indexOf('id="second-factor"')))! });
      assert.equal(setup.status, 200, setup.body);
      secret = secretOf(setup);
      assert.notEqual(secret, planted!.secret);
      // 160 bits of base32 (RFC 4226 section 4).
      assert.match(secret, /^[A-Z2-7]{32}$/);
      // The QR code is inline SVG with attributes only: the pages' CSP (style-src 'self') allows no style attribute.
      const svg = /<svg [^>]*class="qr-code"[\s\S]*?<\/svg>/.exec(setup.body)?.[0];
      assert.ok(svg, 'the set-up page shows a QR code');
      assert.doesNotMatch(svg, /style=|<script/);
      assert.match(setup.body, /inputmode="numeric"[^>]*autocomplete="one-time-code"/);

      // Not counted before it is confirmed: the password alone still signs in and gets the key.
      redirect(await new Browser(t.url).signIn(login, password), PROFILE);
      const csrf = csrfOf(setup.body.slice(setup.body.indexOf(`action="${FACTOR}/confirm"`)))!;
      // The confirm form carries the secret its page showed, sealed: only that one is confirmed.
      const sealed = /name="setup" value="([^"]+)"/.exec(setup.body)?.[1];
      assert.ok(sealed && !sealed.includes(secret), setup.body);
      const wrong = await browser.post(`${FACTOR}/confirm`, { csrf, setup: sealed, code: codeAt(secret, clock.now + 5 * 60_000) });
      assert.equal(wrong.status, 401, wrong.body);
      assert.equal((await t.server.services.secondFactors.status((await t.server.services.accounts.byLoginOrFail(login)).id)).totp, 'pending');

      const confirmed = await browser.post(`${FACTOR}/confirm`, { csrf, setup: sealed, code: codeAt(secret, clock.now) });
      assert.equal(confirmed.status, 200, confirmed.body);
      recovery = recoveryCodesOf(confirmed);
      assert.equal(recovery.length, 10);
      assert.equal(new Set(recovery).size, 10);
      for (const code of recovery) assert.match(code, /^[A-Z2-7]{5}-[A-Z2-7]{5}$/);
      const after = await browser.get(PROFILE);
      assert.match(after.body, /<span class="badge ok">On<\/span>/);
      assert.match(after.body, /10 of 10 recovery codes left/);
      assert.doesNotMatch(after.body, new RegExp(recovery[0]!), 'shown once only');
      // A new set-up never replaces a confirmed factor.
      await browser.post(`${FACTOR}/setup`, { csrf: csrfOf(after.body)! });
      assert.equal((await t.server.services.secondFactors.status((await t.server.services.accounts.byLoginOrFail(login)).id)).totp, 'on');
    });

    test('POST /apikeys: a password alone gives no key to an account with TOTP (403), an account without keeps getting its key', async () => {
      assertAtomError(await postApiKeys(t, login, password), 403, 'errorPermissionDenied', /second factor/);
      const other = await t.account();
      const response = await postApiKeys(t, other.login, other.password);
      assert.ok(response.status === 200 || response.status === 201, response.body);
      assert.match(response.body, new RegExp(`<content type="text">${other.key}</content>`));
    });

    test('sign-in asks for the code after the password; the right code signs in; the same code again is refused', async () => {
      clock.advance(60_000);
      const browser = new Browser(t.url);
      const signIn = await browser.signIn(login, password);
      redirect(signIn, '/signin/second-factor');
      const cookie = setCookieFor(signIn, CHALLENGE_COOKIE);
      assert.ok(cookie?.attributes.has('httponly') && cookie.attributes.get('path') === '/signin', signIn.setCookies.join('\n'));
      assert.equal(setCookieFor(signIn, 'fh_session'), undefined, 'no session before the code');
      redirect(await browser.get(PROFILE), `/signin?next=${encodeURIComponent(PROFILE)}`);

      const code = codeAt(secret, clock.now);
      const form = await browser.get('/signin/second-factor');
      assert.match(form.body, /inputmode="numeric"[^>]*autocomplete="one-time-code"/);
      redirect(await browser.post('/signin/second-factor', { csrf: csrfOf(form.body)!, code }), PROFILE);
      assert.equal((await browser.get(PROFILE)).status, 200);
      assert.equal(browser.cookies.has(CHALLENGE_COOKIE), false, 'the challenge cookie is cleared');

      // Replayed (the same step, another browser that knows the password): refused.
      const replay = await sendCode(await passwordDone(), code);
      assert.equal(replay.status, 401, replay.body);
      assert.match(replay.body, /not right, or it was used already/);
    });

    test('a code of the previous step works (one step of slack), a code five minutes off does not', async () => {
      clock.advance(60_000);
      const far = await sendCode(await passwordDone(), codeAt(secret, clock.now + 5 * 60_000));
      assert.equal(far.status, 401, far.body);
      const old = await sendCode(await passwordDone(), codeAt(secret, clock.now - 30_000));
      redirect(old, PROFILE);
    });

    test('a recovery code signs in once (typed in any case, without its dash), then is refused', async () => {
      const code = recovery[0]!;
      redirect(await sendCode(await passwordDone(), code.replace('-', '').toLowerCase()), PROFILE);
      const again = await sendCode(await passwordDone(), code);
      assert.equal(again.status, 401, again.body);
      const browser = new Browser(t.url);
      redirect(await browser.signIn(login, password), '/signin/second-factor');
      redirect(await sendCode(browser, recovery[1]!), PROFILE);
      assert.match((await browser.get(PROFILE)).body, /8 of 10 recovery codes left/);
    });

    test('the challenge dies after five wrong codes: then even the right code goes back to the password', async () => {
      clock.advance(60_000);
      const browser = await passwordDone();
      for (let i = 1; i <= 4; i++) assert.equal((await sendCode(browser, '000000')).status, 401);
      const fifth = await sendCode(browser, '000001');
      assert.equal(fifth.status, 401);
      assert.match(fifth.body, /Too many wrong codes for this sign-in/);
      const form = await browser.get('/signin/second-factor');
      assert.equal(form.status, 403, 'the step is gone');
      const csrf = await browser.csrfFrom('/signin');
      const right = await browser.post('/signin/second-factor', { csrf, code: codeAt(secret, clock.now) });
      assert.equal(right.status, 403, right.body);
      assert.equal(browser.cookies.has('fh_session'), false);
    });

    test('the challenge cookie taken to another browser is worthless without the right code', async () => {
      clock.advance(60_000);
      const victim = await passwordDone();
      const thief = new Browser(t.url);
      thief.cookies.set(CHALLENGE_COOKIE, victim.cookies.get(CHALLENGE_COOKIE)!);
      redirect(await thief.get(PROFILE), `/signin?next=${encodeURIComponent(PROFILE)}`);
      // Forms without the pre-session token are refused; with one, a wrong code is just wrong.
      assert.equal((await thief.post('/signin/second-factor', { code: '123456' })).status, 403);
      assert.equal((await sendCode(thief, '123456')).status, 401);
      // Nor does the value open the set-up step (another kind of challenge).
      assert.equal((await thief.get('/signin/second-factor/setup')).status, 403);
      assert.equal(thief.cookies.has('fh_session'), false);
    });

    test('new recovery codes and turning off need a code; after turning off the password alone signs in and gets the key', async () => {
      clock.advance(60_000);
      const browser = await passwordDone();
      redirect(await sendCode(browser, codeAt(secret, clock.now)), PROFILE);
      const page = await browser.get(FACTOR);
      const csrf = csrfOf(page.body)!;
      const renewed = await browser.post(`${FACTOR}/recovery-codes`, { csrf, code: recovery[2]! });
      assert.equal(renewed.status, 200, renewed.body);
      const fresh = recoveryCodesOf(renewed);
      assert.notDeepEqual(fresh, recovery);
      assert.equal((await sendCode(await passwordDone(), recovery[3]!)).status, 401, 'the old codes stop working');

      const wrong = await browser.post(`${FACTOR}/off`, { csrf, code: '999999' });
      assert.equal(wrong.status, 401, wrong.body);
      const noCsrf = await browser.post(`${FACTOR}/off`, { code: fresh[0]! });
      assert.equal(noCsrf.status, 403);
      assert.equal((await t.server.services.secondFactors.status((await t.server.services.accounts.byLoginOrFail(login)).id)).totp, 'on');
      const off = await browser.post(`${FACTOR}/off`, { csrf, code: fresh[0]! });
      assert.equal(off.status, 200, off.body);
      assert.match(off.body, /Two-step verification is off/);
      redirect(await new Browser(t.url).signIn(login, password), PROFILE);
      assert.ok((await postApiKeys(t, login, password)).status < 300);
      // The owner's own changes are audited, like a password change.
      for (const action of ['accounts.turn-on-second-factor', 'accounts.renew-recovery-codes', 'accounts.turn-off-second-factor']) {
        const [entry] = await t.server.services.audit.list({ limit: 1, action });
        assert.equal(entry?.actor, `web:${login}`, action);
        assert.equal(entry?.object, `account:${login}`, action);
      }
    });

    test('the code step: an old pre-session still gives a working Verify button; a disabled account gets no session', async () => {
      clock.advance(60_000);
      const user = await t.account();
      const services = t.server.services;
      const setup = await services.secondFactors.begin(user.account, 'test');
      await services.secondFactors.confirm(user.account, codeAt(setup!.secret, clock.now), setup!.sealed, 'test');
      // The sign-in form's pre-session is past its fresh half when the code page is drawn: one new one for both forms.
      const browser = new Browser(t.url);
      const csrf = await browser.csrfFrom('/signin');
      clock.advance(61 * 60_000);
      redirect(await browser.post('/signin', { csrf, login: user.login, password: user.password }), '/signin/second-factor');
      redirect(await sendCode(browser, codeAt(setup!.secret, clock.now)), PROFILE);

      clock.advance(60_000);
      const late = new Browser(t.url);
      redirect(await late.signIn(user.login, user.password), '/signin/second-factor');
      await services.accounts.setDisabled(user.login, true);
      const refused = await sendCode(late, codeAt(setup!.secret, clock.now));
      assert.equal(refused.status, 403, refused.body);
      assert.equal(late.cookies.has('fh_session'), false);
    });

    test('console: who has what, and a reset of two-step verification, confirmed and audited', async () => {
      const user = await t.account();
      const services = t.server.services;
      const id = (await services.accounts.byLoginOrFail(user.login)).id;
      const setup = await services.secondFactors.begin(user.account, 'test');
      await services.secondFactors.confirm(user.account, codeAt(setup!.secret, clock.now), setup!.sealed, 'test');
      const admin = `admin-${process.pid}`;
      await services.accounts.create({ login: admin, password: 'operator password', isOperator: true });
      const operator = new Browser(t.url);
      redirect(await operator.signIn(admin, 'operator password'), PROFILE);
      const list = await operator.get(`/console/accounts?q=${encodeURIComponent(user.login)}`);
      assert.match(list.body, /<th>Sign-in<\/th>/);
      assert.match(list.body, /<span class="badge ok">2-step<\/span>/);
      const path = `/console/accounts/${encodeURIComponent(user.login)}`;
      const detail = await operator.get(path);
      assert.match(detail.body, /<dt>Two-step<\/dt><dd>on, 10 recovery codes left<\/dd>/);
      const csrf = csrfOf(detail.body)!;
      const unconfirmed = await operator.post(`${path}/reset-second-factor`, { csrf });
      assert.equal(unconfirmed.status, 400, unconfirmed.body);
      assert.equal((await services.secondFactors.status(id)).totp, 'on');
      redirect(await operator.post(`${path}/reset-second-factor`, { csrf, confirm: 'yes' }), `${path}?done=second-factor-reset`);
      assert.equal((await services.secondFactors.status(id)).totp, 'off');
      const [entry] = await services.audit.list({ limit: 10, action: 'accounts.reset-second-factor' });
      assert.equal(entry?.actor, `web:${admin}`);
      assert.equal(entry?.object, `account:${user.login}`);
      redirect(await new Browser(t.url).signIn(user.login, user.password), PROFILE);
      // The settings page names the flag.
      assert.match(
        (await operator.get('/console/settings')).body,
        /<td>Second factor required for<\/td><td>nobody<\/td><td><code>--second-factor-required<\/code><\/td>/,
      );
    });
  });

  describe('--second-factor-required everyone, and wrong codes throttled like passwords', { concurrency: 1 }, () => {
    const clock = new TestClock(Date.parse('2026-11-28T01:00:10Z'));
    let t: TestServer;

    before(async () => {
      t = await startTestServer({ secondFactorRequired: 'everyone', loginAttemptsPerMinute: 3, trustProxy: true, signup: 'open' }, clock);
    });
    after(() => t.close());

    test('the right password of an account without a second factor leads to a set-up before any session', async () => {
      const user = await t.account();
      const browser = new Browser(t.url);
      redirect(await browser.signIn(user.login, user.password), '/signin/second-factor/setup');
      redirect(await browser.get(PROFILE), `/signin?next=${encodeURIComponent(PROFILE)}`);
      const setup = await browser.get('/signin/second-factor/setup');
      assert.equal(setup.status, 200, setup.body);
      assert.match(setup.body, /<svg [^>]*class="qr-code"/);
      const secret = secretOf(setup);
      const confirmed = await browser.post('/signin/second-factor/setup', { csrf: csrfOf(setup.body)!, code: codeAt(secret, clock.now) });
      assert.equal(confirmed.status, 200, confirmed.body);
      assert.equal(recoveryCodesOf(confirmed).length, 10);
      assert.equal(browser.cookies.has('fh_session'), false, 'no session before the codes were shown');
      redirect(await browser.post('/signin/second-factor/setup/continue', { csrf: csrfOf(confirmed.body)! }), PROFILE);
      assert.equal((await browser.get(PROFILE)).status, 200);
      // From now on this account signs in with a code.
      clock.advance(30_000);
      const next = new Browser(t.url);
      redirect(await next.signIn(user.login, user.password), '/signin/second-factor');
      const form = await next.get('/signin/second-factor');
      redirect(await next.post('/signin/second-factor', { csrf: csrfOf(form.body)!, code: codeAt(secret, clock.now) }), PROFILE);
    });

    test('a passkey does not stand in for the code after a password: an account with passkeys only is led to the set-up too', async () => {
      const user = await t.account();
      await t.server.services.store.passkeys.create({
        id: `cGFzc2tleQ${user.account.id}`,
        accountId: user.account.id,
        name: 'Phone',
        publicKey: 'pQECAyYgASFYIA',
        counter: 0,
        transports: ['internal'],
        backedUp: false,
        createdAt: clock.now,
      });
      const browser = new Browser(t.url);
      redirect(await browser.signIn(user.login, user.password), '/signin/second-factor/setup');
      assert.equal(browser.cookies.has('fh_session'), false, 'no session for the password alone');
    });

    /** A browser behind the trusted proxy, as a client of its own address. */
    const from = (ip: string) => new Browser(t.url, { 'X-Forwarded-For': ip });

    test('a set-up shows only a secret it made: one begun with the password alone is never shown nor confirmed by the owner', async () => {
      const user = await t.account();
      const secretShown = async (browser: Browser) => {
        const page = await browser.get('/signin/second-factor/setup');
        assert.equal(page.status, 200, page.body);
        return { secret: secretOf(page), csrf: csrfOf(page.body)! };
      };
      const attacker = from('203.0.113.1');
      redirect(await attacker.signIn(user.login, user.password), '/signin/second-factor/setup');
      const planted = await secretShown(attacker);
      const owner = from('203.0.113.2');
      redirect(await owner.signIn(user.login, user.password), '/signin/second-factor/setup');
      const ownerSetup = await secretShown(owner);
      assert.notEqual(ownerSetup.secret, planted.secret);
      // The attacker's page drawn again begins another secret; the owner's code (of the page the owner saw) confirms nothing then.
      const replanted = await secretShown(attacker);
      const refused = await owner.post('/signin/second-factor/setup', { csrf: ownerSetup.csrf, code: codeAt(ownerSetup.secret, clock.now) });
      assert.equal(refused.status, 401, refused.body);
      const id = (await t.server.services.accounts.byLoginOrFail(user.login)).id;
      assert.equal((await t.server.services.secondFactors.status(id)).totp, 'pending');
      // The owner's page drawn again shows a new secret of its own, which the owner confirms; the attacker's stays unconfirmed.
      const fresh = await secretShown(owner);
      assert.notEqual(fresh.secret, replanted.secret);
      const confirmed = await owner.post('/signin/second-factor/setup', { csrf: fresh.csrf, code: codeAt(fresh.secret, clock.now) });
      assert.equal(confirmed.status, 200, confirmed.body);
      // The attacker's set-up has ended: the account has its factor now.
      const late = await attacker.post('/signin/second-factor/setup', { csrf: replanted.csrf, code: codeAt(replanted.secret, clock.now) });
      assert.equal(late.status, 403, late.body);
      clock.advance(30_000);
      const next = from('203.0.113.2');
      redirect(await next.signIn(user.login, user.password), '/signin/second-factor');
      const form = await next.get('/signin/second-factor');
      assert.equal((await next.post('/signin/second-factor', { csrf: csrfOf(form.body)!, code: codeAt(replanted.secret, clock.now) })).status, 401);
    });

    test('wrong codes after a right password count on the login, from every address: several addresses get 429 together', async () => {
      const user = await t.account();
      const setup = await t.server.services.secondFactors.begin(user.account, 'test');
      await t.server.services.secondFactors.confirm(user.account, codeAt(setup!.secret, clock.now), setup!.sealed, 'test');
      // Each address signs in with the password (which makes it known to the login) before any code is sent.
      const browsers = ['198.51.100.1', '198.51.100.2', '198.51.100.3'].map(from);
      for (const browser of browsers) redirect(await browser.signIn(user.login, user.password), '/signin/second-factor');
      const wrong = async (browser: Browser) => {
        const form = await browser.get('/signin/second-factor');
        return browser.post('/signin/second-factor', { csrf: csrfOf(form.body)!, code: '000000' });
      };
      for (const browser of browsers) assert.equal((await wrong(browser)).status, 401);
      const fourth = await wrong(browsers[0]!);
      assert.equal(fourth.status, 429, fourth.body);
      assert.ok(Number(fourth.response.headers.get('retry-after')) >= 1);
    });

    test('sign-up leads to the set-up before any session; POST /apikeys gives no key for a password alone without TOTP', async () => {
      const browser = from('198.51.100.20');
      const csrf = await browser.csrfFrom('/signup');
      const login = `new-${process.pid}`;
      const password = 'a long new password';
      const signUp = await browser.post('/signup', { csrf, login, name: '', email: '', password, password_again: password });
      redirect(signUp, '/signin/second-factor/setup');
      assert.equal(browser.cookies.has('fh_session'), false);
      redirect(await browser.get(PROFILE), `/signin?next=${encodeURIComponent(PROFILE)}`);
      // An account the rule covers, without TOTP (none yet, or passkeys only): 403, as with TOTP.
      const refused = await read(
        await t.fetch('/apikeys', { method: 'POST', headers: { 'X-Forwarded-For': '198.51.100.21' }, body: new URLSearchParams({ login, password }) }),
      );
      assertAtomError(refused, 403, 'errorPermissionDenied', /requires a second factor/);
    });

    test('wrong codes count on the sign-in throttle: past the limit, 429 with Retry-After', async () => {
      const user = await t.account();
      const browser = new Browser(t.url);
      redirect(await browser.signIn(user.login, user.password), '/signin/second-factor/setup');
      const setup = await browser.get('/signin/second-factor/setup');
      const csrf = csrfOf(setup.body)!;
      let last: Page | undefined;
      for (let i = 0; i < 4; i++) last = await browser.post('/signin/second-factor/setup', { csrf, code: '000000' });
      assert.equal(last!.status, 429, last!.body);
      assert.ok(Number(last!.response.headers.get('retry-after')) >= 1);
      assert.match(last!.body, /Too many wrong codes\. Wait a minute/);
    });
  });
});
