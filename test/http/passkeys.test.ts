import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { browserScript } from '../../src/http/web/browser-scripts.js';
import { Browser } from '../helpers/browser.js';
import { freePort } from '../helpers/cluster.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

// The passkey endpoints over HTTP (issue 26), without a browser's WebAuthn (the ceremonies
// themselves are passkeys-browser.test.ts): CSRF and sessions, bad answers as clear 400s,
// ownership, the options the browser is handed, `--passkeys false`, and a site reached at
// an IP address (no RP id there).

const PROFILE = '/accounts/profile/misc';
const PASSKEYS = '/accounts/profile/passkeys';

/** A well-formed answer for a challenge the server never issued. */
const forgedAnswer = (part: 'authenticatorData' | 'attestationObject') =>
  JSON.stringify({
    id: 'AAECAwQF',
    rawId: 'AAECAwQF',
    type: 'public-key',
    response: {
      clientDataJSON: Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: 'x'.repeat(43), origin: 'http://localhost' })).toString('base64url'),
      [part]: 'AAECAwQF',
    },
  });

let on: TestServer;
let off: TestServer;
let byIp: TestServer;

before(async () => {
  const port = await freePort();
  [on, off, byIp] = await Promise.all([
    startTestServer({ port, webUrl: `http://localhost:${port}`, loginAttemptsPerMinute: 1000 }),
    (async () => {
      const offPort = await freePort();
      return startTestServer({ port: offPort, webUrl: `http://localhost:${offPort}`, passkeys: false, loginAttemptsPerMinute: 1000 });
    })(),
    startTestServer({ loginAttemptsPerMinute: 1000 }),
  ]);
});
after(async () => {
  await Promise.all([on?.close(), off?.close(), byIp?.close()]);
});

async function signedIn(site: TestServer): Promise<{ user: TestAccount; browser: Browser; csrf: string }> {
  const user = await site.account();
  const browser = new Browser(site.url);
  assert.equal((await browser.signIn(user.login, user.password)).status, 303);
  return { user, browser, csrf: await browser.csrfFrom(PROFILE) };
}

const plant = (site: TestServer, accountId: number, id: string, name = 'Phone') =>
  site.server.services.store.passkeys.create({
    id,
    accountId,
    name,
    publicKey: 'pQECAyYgASFYIA',
    counter: 0,
    transports: ['internal'],
    backedUp: false,
    createdAt: Date.now(),
  });

describe('passkey sign-in endpoints', () => {
  test('the sign-in page offers a passkey (hidden until the script finds WebAuthn), with the same pre-session token as the password form', async () => {
    const browser = new Browser(on.url);
    const page = await browser.get('/signin');
    assert.match(page.body, /<form class="stack" method="post" action="\/signin\/passkey\/start" data-passkey-offer hidden>/);
    const tokens = [...page.body.matchAll(/name="csrf" value="([^"]+)"/g)].map((match) => match[1]);
    assert.equal(tokens.length, 2);
    assert.equal(tokens[0], tokens[1], 'one pre-session per page');
    assert.equal(page.setCookies.filter((line) => line.startsWith('fh_presession=')).length, 1);
    // The script that shows it is the site's own bundle (CSP script-src 'self').
    const script = browserScript('passkeys').path;
    assert.ok(page.body.includes(`<script src="${script}" defer></script>`), page.body);
    const served = await on.fetch(script);
    assert.equal(served.status, 200);
    assert.match(await served.text(), /^"use strict";\(\(\)=>\{/);
  });

  test('without the pre-session token nothing starts and nothing signs in', async () => {
    const browser = new Browser(on.url);
    await browser.get('/signin');
    assert.equal((await browser.post('/signin/passkey/start', {})).status, 403);
    assert.equal((await browser.post('/signin/passkey/start', { csrf: 'forged' })).status, 403);
    assert.equal((await browser.post('/signin/passkey', { csrf: 'forged', response: forgedAnswer('authenticatorData') })).status, 403);
  });

  test('the ceremony page hands the browser a fresh challenge, no credentials listed, user verification required', async () => {
    const browser = new Browser(on.url);
    const csrf = await browser.csrfFrom('/signin');
    const page = await browser.post('/signin/passkey/start', { csrf, next: '/my/files' });
    assert.equal(page.status, 200);
    const options = JSON.parse(decodeEntities(/data-options="([^"]+)"/.exec(page.body)![1]!));
    assert.equal(options.rpId, 'localhost');
    assert.equal(options.userVerification, 'required');
    assert.equal(options.allowCredentials, undefined);
    assert.match(options.challenge, /^[A-Za-z0-9_-]{43}$/);
    assert.match(page.body, /<input type="hidden" name="next" value="\/my\/files">/);
  });

  test('a bad answer is a clear 400 page, never a 500, and signs nobody in', async () => {
    const browser = new Browser(on.url);
    const csrf = await browser.csrfFrom('/signin');
    for (const [response, message] of [
      ['{not json', 'not valid JSON'],
      ['', 'not valid JSON'],
      ['{"id":1}', 'not a WebAuthn credential'],
      ['[]', 'not a WebAuthn credential'],
      [forgedAnswer('authenticatorData'), 'expired or was used already'],
    ]) {
      const page = await browser.post('/signin/passkey', { csrf, response: response! });
      assert.equal(page.status, 400, response);
      assert.ok(page.body.includes(message!), page.body);
      assert.equal(browser.cookies.has('fh_session'), false);
    }
  });
});

describe('passkeys on the profile', () => {
  test('the card lists the account’s passkeys and the add form; registration options exclude them', async () => {
    const { user, browser, csrf } = await signedIn(on);
    await plant(on, user.account.id, 'ZXhpc3Rpbmc', 'Old <phone>');
    const profile = await browser.get(PROFILE);
    assert.match(profile.body, /<section class="card" id="passkeys">/);
    assert.ok(profile.body.includes('<bdi>Old &lt;phone&gt;</bdi>'), 'names are escaped');
    assert.match(profile.body, /action="\/accounts\/profile\/passkeys\/start" data-passkey-offer hidden/);

    const page = await browser.post(`${PASSKEYS}/start`, { csrf, name: 'Laptop' });
    assert.equal(page.status, 200);
    const options = JSON.parse(decodeEntities(/data-options="([^"]+)"/.exec(page.body)![1]!));
    assert.equal(options.rp.id, 'localhost');
    assert.deepEqual(options.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
    assert.deepEqual(
      options.excludeCredentials.map((c: { id: string }) => c.id),
      ['ZXhpc3Rpbmc'],
    );
    assert.equal(options.user.name, user.login);

    assert.equal((await browser.post(`${PASSKEYS}/start`, { csrf, name: 'x'.repeat(61) })).status, 400, 'names up to 60 characters');
    const bad = await browser.post(PASSKEYS, { csrf, name: 'Laptop', response: '{not json' });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.includes('not valid JSON'), bad.body);
    const unissued = await browser.post(PASSKEYS, { csrf, name: 'Laptop', response: forgedAnswer('attestationObject') });
    assert.equal(unissued.status, 400);
    assert.ok(unissued.body.includes('expired or was used already'));
  });

  test('without a session or without its CSRF token every profile endpoint refuses', async () => {
    const { user, browser } = await signedIn(on);
    await plant(on, user.account.id, 'bm8tY3NyZg');
    const stranger = new Browser(on.url);
    for (const path of [`${PASSKEYS}/start`, PASSKEYS, `${PASSKEYS}/rename`, `${PASSKEYS}/remove`]) {
      assert.equal((await stranger.post(path, { id: 'bm8tY3NyZg', name: 'x' })).status, 403, `${path} signed out`);
      assert.equal((await browser.post(path, { id: 'bm8tY3NyZg', name: 'x', csrf: 'forged' })).status, 403, `${path} without CSRF`);
    }
    assert.equal((await on.server.services.store.passkeys.byId('bm8tY3NyZg'))?.name, 'Phone', 'nothing changed');
  });

  test('rename and remove act on the owner’s passkeys only: another account’s changes nothing', async () => {
    const ada = await signedIn(on);
    const bob = await signedIn(on);
    await plant(on, bob.user.account.id, 'Ym9icy1rZXk', 'Bob’s key');
    const rename = await ada.browser.post(`${PASSKEYS}/rename`, { csrf: ada.csrf, id: 'Ym9icy1rZXk', name: 'mine now' });
    assert.equal(rename.status, 404);
    const remove = await ada.browser.post(`${PASSKEYS}/remove`, { csrf: ada.csrf, id: 'Ym9icy1rZXk' });
    assert.equal(remove.status, 404);
    assert.ok(remove.body.includes('Nothing was changed'));
    assert.equal((await on.server.services.store.passkeys.byId('Ym9icy1rZXk'))?.name, 'Bob’s key');

    assert.equal((await bob.browser.post(`${PASSKEYS}/rename`, { csrf: bob.csrf, id: 'Ym9icy1rZXk', name: '  Bob’s   laptop ' })).status, 303);
    assert.equal((await on.server.services.store.passkeys.byId('Ym9icy1rZXk'))?.name, 'Bob’s laptop');
    assert.equal((await bob.browser.post(`${PASSKEYS}/rename`, { csrf: bob.csrf, id: 'Ym9icy1rZXk', name: '   ' })).status, 400, 'a name is needed');
    assert.equal((await bob.browser.post(`${PASSKEYS}/remove`, { csrf: bob.csrf, id: 'Ym9icy1rZXk' })).status, 303);
    assert.equal(await on.server.services.store.passkeys.byId('Ym9icy1rZXk'), null);
  });
});

describe('passkeys off, or no host name', () => {
  test('adding a passkey needs a recent sign-in: a session older than 15 minutes is refused, a new sign-in goes on', async () => {
    // A passkey outlives password changes and skips the second factor: a stolen old session must not add one.
    const clock = new TestClock(Date.now());
    const port = await freePort();
    const site = await startTestServer({ port, webUrl: `http://localhost:${port}`, loginAttemptsPerMinute: 1000 }, clock);
    try {
      const { user, browser, csrf } = await signedIn(site);
      assert.equal((await browser.post(`${PASSKEYS}/start`, { csrf, name: 'Fresh' })).status, 200, 'just signed in');
      clock.advance(16 * 60_000);
      const stale = await browser.post(`${PASSKEYS}/start`, { csrf, name: 'Late' });
      assert.equal(stale.status, 403);
      assert.ok(stale.body.includes('needs a recent sign-in'), stale.body);
      const again = new Browser(site.url);
      assert.equal((await again.signIn(user.login, user.password)).status, 303);
      assert.equal((await again.post(`${PASSKEYS}/start`, { csrf: await again.csrfFrom(PROFILE), name: 'Again' })).status, 200, 'a new sign-in');
    } finally {
      await site.close();
    }
  });

  test('--passkeys false: no button, no card, every endpoint 404', async () => {
    const { browser, csrf } = await signedIn(off);
    assert.ok(!(await browser.get(PROFILE)).body.includes('id="passkeys"'));
    assert.ok(!(await new Browser(off.url).get('/signin')).body.includes('passkey'));
    for (const path of ['/signin/passkey/start', '/signin/passkey', `${PASSKEYS}/start`, PASSKEYS, `${PASSKEYS}/rename`, `${PASSKEYS}/remove`]) {
      assert.equal((await browser.post(path, { csrf, id: 'x', name: 'x' })).status, 404, path);
    }
  });

  test('a site reached at an IP address: no button, the card says why, the ceremonies answer 409', async () => {
    const { browser, csrf } = await signedIn(byIp);
    const card = (await browser.get(PROFILE)).body;
    assert.ok(card.includes('Passkeys need the site to be reached by a host name such as localhost'), card);
    assert.ok(!card.includes('Add a passkey'));
    assert.ok(!(await new Browser(byIp.url).get('/signin')).body.includes('passkey'));
    assert.equal((await browser.post(`${PASSKEYS}/start`, { csrf })).status, 409);
  });
});

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
