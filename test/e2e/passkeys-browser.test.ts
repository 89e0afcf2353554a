import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { openDatabase } from '../../src/configured-stores.js';
import { chromiumSkip, launchChromium, screenshots, sidewaysOverflow, VIEWPORTS, watchErrors } from '../helpers/chromium.js';
import { freePort } from '../helpers/cluster.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// Passkeys (issue 26) in Debian's Chromium with a virtual authenticator (DevTools protocol
// WebAuthn domain): registered from the profile, used to sign in without a login typed
// (and without a code on an account with TOTP), renamed, removed; refused after removal,
// for another account's credential, and when an answer is sent twice. WebAuthn takes no IP
// address as relying party, so the site is reached at http://localhost:<port>.

const TIMEOUT = { timeout: 120_000 };

interface Device {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  problems: string[];
}

describe('passkeys in Chromium', { skip: chromiumSkip() }, () => {
  let site: TestServer;
  let web: string;
  let browser: Browser;
  const devices: Device[] = [];

  before(async () => {
    const port = await freePort();
    web = `http://localhost:${port}`;
    site = await startTestServer({ port, webUrl: web, loginAttemptsPerMinute: 1000 });
    browser = await launchChromium();
  });
  after(async () => {
    for (const device of devices) await device.context.close();
    await browser?.close();
    await site?.close();
  });

  /** A browser with a platform authenticator that verifies its user (a phone's or laptop's). */
  async function device(): Promise<Device> {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    // The failed loads of the refusal pages a test asks for are expected.
    const problems = watchErrors(page, [/status of 40[0-9]/]);
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    const made = { context, page, cdp, authenticatorId, problems };
    devices.push(made);
    return made;
  }

  const credentials = async (d: Device) => (await d.cdp.send('WebAuthn.getCredentials', { authenticatorId: d.authenticatorId })).credentials;
  const base64url = (base64: string) => Buffer.from(base64, 'base64').toString('base64url');

  async function addPasskey(d: Device, name: string): Promise<void> {
    await d.page.goto(`${web}/accounts/profile/misc`);
    await d.page.locator('#passkey-new-name').fill(name);
    await d.page.getByRole('button', { name: 'Add a passkey' }).click();
    await d.page.waitForURL(`${web}/accounts/profile/misc#passkeys`);
  }

  /** Password sign-in (chromium.ts's signIn matches "Sign in with a passkey" too: its name is not exact). */
  async function signIn(page: Page, user: TestAccount): Promise<void> {
    await page.goto(`${web}/signin`);
    await page.getByLabel('Login').fill(user.login);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${web}/accounts/profile/misc`);
  }

  async function signOut(d: Device): Promise<void> {
    await d.page.getByRole('button', { name: 'Sign out' }).click();
    await d.page.waitForURL(`${web}/`);
  }

  /** Presses "Sign in with a passkey"; resolves with the form the ceremony page posted, once the answer's page has loaded. */
  async function passkeySignIn(d: Device): Promise<{ posted: string; status: number }> {
    await d.page.goto(`${web}/signin`);
    const posted = d.page.waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === '/signin/passkey');
    const answered = d.page.waitForResponse((response) => new URL(response.url()).pathname === '/signin/passkey');
    await d.page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    const request = await posted;
    const status = (await answered).status();
    // Signed in: on to the profile; refused: the answer's own page.
    await d.page.waitForURL(status === 303 ? `${web}/accounts/profile/misc` : `${web}/signin/passkey`);
    return { posted: request.postData() ?? '', status };
  }

  const passkeyNames = (d: Device) => d.page.locator('#passkeys .share-name').allTextContents();

  test(
    'registered from the profile and named; signs in with no login typed and no code though the account has TOTP; a replayed answer is refused; renamed, removed, then refused',
    TIMEOUT,
    async () => {
      const ada = await site.account();
      const d = await device();
      await signIn(d.page, ada);
      assert.equal(await d.page.locator('#passkeys').getByText('No passkeys yet.').count(), 1);

      await addPasskey(d, 'Laptop');
      assert.deepEqual(await passkeyNames(d), ['Laptop']);
      await d.page.locator('#passkeys summary').click();
      await screenshots(d.page, 'passkeys-profile');
      await d.page.setViewportSize(VIEWPORTS.phone);
      assert.ok((await sidewaysOverflow(d.page)) <= 0, 'the card fits a phone');
      await d.page.setViewportSize(VIEWPORTS.desktop);
      assert.match((await d.page.locator('#passkeys .meta').first().textContent()) ?? '', /never used/);
      const held = await credentials(d);
      assert.equal(held.length, 1);
      assert.equal(held[0]!.isResidentCredential, true, 'a discoverable credential: sign-in needs no login');
      assert.equal((await site.server.services.store.accounts.signInMethods(ada.account.id)).passkeys, 1);

      // A confirmed TOTP factor, planted as the TOTP setup would leave it.
      await signOut(d);
      const { db } = openDatabase(site.config);
      try {
        await db
          .insertInto('totp_factors')
          .values({ account_id: ada.account.id, sealed_secret: 'sealed', confirmed_at: Date.now(), last_step: 0, created_at: Date.now() })
          .execute();
      } finally {
        await db.destroy();
      }
      assert.equal((await site.server.services.store.accounts.signInMethods(ada.account.id)).totp, true);

      const first = await passkeySignIn(d);
      assert.equal(first.status, 303);
      assert.equal(d.page.url(), `${web}/accounts/profile/misc`, 'signed in, no second step');
      assert.equal(await d.page.locator('.who').textContent(), ada.login);
      assert.match((await d.page.locator('#passkeys .meta').first().textContent()) ?? '', /last used/);

      // The same answer again, with a valid pre-session token of its own: its challenge is spent.
      await signOut(d);
      await d.page.goto(`${web}/signin`);
      const token = await d.page.locator('form[action="/signin/passkey/start"] input[name="csrf"]').getAttribute('value');
      const replay = new URLSearchParams(first.posted);
      replay.set('csrf', token!);
      const replayed = await d.context.request.post(`${web}/signin/passkey`, {
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        data: replay.toString(),
        maxRedirects: 0,
      });
      assert.equal(replayed.status(), 400);
      assert.match(await replayed.text(), /expired or was used already/);
      assert.equal(replayed.headers()['set-cookie']?.includes('fh_session='), undefined, 'no session');

      assert.equal((await passkeySignIn(d)).status, 303, 'a new ceremony signs in again');
      await d.page.goto(`${web}/accounts/profile/misc#passkeys`);
      await d.page.locator('#passkeys summary').click();
      await d.page.getByLabel('New name').fill('Work laptop');
      await d.page.getByRole('button', { name: 'Rename' }).click();
      await d.page.waitForURL(`${web}/accounts/profile/misc#passkeys`);
      assert.deepEqual(await passkeyNames(d), ['Work laptop']);

      await d.page.locator('#passkeys summary').click();
      await d.page.getByRole('button', { name: 'Remove “Work laptop”' }).click();
      await d.page.waitForURL(`${web}/accounts/profile/misc#passkeys`);
      assert.equal(await d.page.locator('#passkeys').getByText('No passkeys yet.').count(), 1);

      // The authenticator still holds it; the site no longer knows it.
      await signOut(d);
      assert.equal((await credentials(d)).length, 1);
      const refused = await passkeySignIn(d);
      assert.equal(refused.status, 401);
      assert.equal(await d.page.locator('h1').textContent(), 'Passkey sign-in failed');
      assert.match((await d.page.getByRole('alert').textContent()) ?? '', /not registered on this site/);
      assert.equal(await d.page.locator('.who').count(), 0, 'still signed out');
      assert.deepEqual(d.problems, []);
    },
  );

  test('another account’s passkey is refused: its user handle claimed, or its credential id with another signature', TIMEOUT, async () => {
    const [carol, dave, c, d] = await Promise.all([site.account(), site.account(), device(), device()]);
    // Two people on two devices, at the same time.
    const setUp = async (who: Device, account: TestAccount) => {
      await signIn(who.page, account);
      await addPasskey(who, `${account.login}'s phone`);
      await signOut(who);
    };
    await Promise.all([setUp(c, carol), setUp(d, dave)]);
    const [carols] = await credentials(c);
    assert.ok(carols?.userHandle);

    /** Dave's answer, changed on its way to the server. */
    const tampered = async (change: (answer: { id: string; rawId: string; response: { userHandle?: string } }) => void) => {
      await d.page.route('**/signin/passkey', async (route) => {
        const form = new URLSearchParams(route.request().postData() ?? '');
        const answer = JSON.parse(form.get('response') ?? '{}');
        change(answer);
        form.set('response', JSON.stringify(answer));
        await route.continue({ postData: form.toString() });
      });
      try {
        return await passkeySignIn(d);
      } finally {
        await d.page.unrouteAll();
      }
    };

    const claimed = await tampered((answer) => {
      answer.response.userHandle = base64url(carols.userHandle!);
    });
    assert.equal(claimed.status, 401, 'Dave’s credential claiming Carol’s account');
    assert.equal(await d.page.locator('.who').count(), 0);

    const borrowed = await tampered((answer) => {
      answer.id = base64url(carols.credentialId);
      answer.rawId = answer.id;
      answer.response.userHandle = base64url(carols.userHandle!);
    });
    assert.equal(borrowed.status, 401, 'Carol’s credential id with Dave’s signature');
    assert.equal(await d.page.locator('.who').count(), 0);

    assert.equal((await passkeySignIn(d)).status, 303, 'untouched, Dave’s own passkey signs Dave in');
    assert.equal(await d.page.locator('.who').textContent(), dave.login);
    assert.deepEqual(d.problems, []);
  });
});
