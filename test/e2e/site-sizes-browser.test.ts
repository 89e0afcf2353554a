import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, BrowserContextOptions, Page, Response } from 'playwright-core';
import { chromiumSkip, launchChromium, SCREENSHOT_DIR, sidewaysOverflow, signIn, watchErrors } from '../helpers/chromium.js';
import { directLink } from '../helpers/downloads.js';
import { gradientPng } from '../helpers/gradient-png.js';
import { lowContrastText, type Palette, sidewaysCulprits, themeBackgrounds, themePalettes, wordsBrokenInTables } from '../helpers/page-checks.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// The browser gate of the site's look (issue 23): every page, at the sizes people use
// (a 1280×800 laptop and a 390×844 phone), in the light and the dark scheme. Each must
// fit the width (nothing scrolls sideways), paint the scheme's own background (read out
// of site.css's custom properties), keep visible text at 4.5:1 contrast or more, break
// no word inside a table cell, and log no error. An unclosed @media block once made half
// the stylesheet phone-only; a check at one width would not have seen it.
// A new page is one line in PAGES below. FILEHAVEN_SCREENSHOTS=1 also saves a picture of
// each (test-output/screenshots/site-<page>-<device>-<scheme>.png).

const TIMEOUT = { timeout: 300_000 };
const SHOTS = process.env.FILEHAVEN_SCREENSHOTS === '1';

/** The sizes people use: a laptop, and a phone as a phone (touch, mobile viewport). */
const DEVICES = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
} satisfies Record<string, BrowserContextOptions>;
const SCHEMES = ['light', 'dark'] as const;

/** Who looks at a page: nobody signed in, an account holder (premium), the operator. */
type Who = 'visitor' | 'member' | 'operator';

interface SitePage {
  /** Names the page in failures and screenshots. */
  name: string;
  who: Who;
  /** The address, with its query. */
  path: string;
  /** The status the page comes with (an error page is a page too). */
  status?: number;
  /**
   * How it is reached when not typed: `form`, a form posted from the home page (the
   * page is the answer); `elsewhere`, a link clicked on another site.
   */
  via?: 'form' | 'elsewhere';
}

/** What the pages are built from: uploads, folders and links made in before(). */
interface Fixture {
  image: { path: string; deletePath: string };
  longName: { path: string; deletePath: string };
  folder: string;
  subfolder: string;
  direct: string;
  digest: string;
  member: string;
  /** Share links (issue 25): a file, a folder, a protected one. */
  shares: { file: string; folder: string; locked: string };
}

/** Every page of the site, once per viewer it looks different to. */
const PAGES = (f: Fixture): SitePage[] => [
  { name: 'home', who: 'visitor', path: '/' },
  { name: 'sign-in', who: 'visitor', path: '/signin' },
  { name: 'sign-up', who: 'visitor', path: '/signup' },
  { name: 'developers', who: 'visitor', path: '/developers' },
  { name: 'download-image', who: 'visitor', path: f.image.path },
  { name: 'download-long-name', who: 'visitor', path: f.longName.path },
  { name: 'folder', who: 'visitor', path: `/folder/${f.folder}` },
  { name: 'delete-confirm', who: 'visitor', path: f.longName.deletePath },
  { name: 'not-found', who: 'visitor', path: '/no/such/page/here', status: 404 },
  { name: 'direct-sign-in', who: 'visitor', path: f.direct, status: 401 },
  { name: 'share-file', who: 'visitor', path: `/s/${f.shares.file}` },
  { name: 'share-folder', who: 'visitor', path: `/s/${f.shares.folder}` },
  { name: 'share-password', who: 'visitor', path: `/s/${f.shares.locked}` },
  { name: 'share-not-found', who: 'visitor', path: '/s/AAAAAAAAAAAAAAAAAAAAAA', status: 404 },
  { name: 'signed-out-form', who: 'visitor', path: '/my/files/folders', status: 403, via: 'form' },
  { name: 'home-member', who: 'member', path: '/' },
  { name: 'profile', who: 'member', path: '/accounts/profile/misc' },
  { name: 'profile-notice', who: 'member', path: '/accounts/profile/misc?changed=password' },
  { name: 'my-files-list', who: 'member', path: '/my/files?view=list' },
  { name: 'my-files-grid', who: 'member', path: '/my/files?view=grid' },
  { name: 'my-folder', who: 'member', path: `/my/files?folder=${f.folder}&view=list` },
  { name: 'download-owner', who: 'member', path: f.image.path },
  { name: 'folder-owner', who: 'member', path: `/folder/${f.subfolder}` },
  { name: 'direct-confirm', who: 'member', path: f.direct, via: 'elsewhere' },
  { name: 'console-overview', who: 'operator', path: '/console' },
  { name: 'console-accounts', who: 'operator', path: '/console/accounts' },
  { name: 'console-account', who: 'operator', path: `/console/accounts/${f.member}` },
  { name: 'console-files', who: 'operator', path: '/console/files?name=notes' },
  { name: 'console-digest', who: 'operator', path: `/console/digests/${f.digest}` },
  { name: 'console-blacklist', who: 'operator', path: '/console/blacklist' },
  { name: 'console-audit', who: 'operator', path: '/console/audit' },
  { name: 'console-settings', who: 'operator', path: '/console/settings' },
  { name: 'direct-other-account', who: 'operator', path: f.direct, status: 403 },
  { name: 'second-factor-setup', who: 'operator', path: '/accounts/profile/second-factor' },
];

const LONG_NAME = `${'quarterly-report-with-a-very-long-name-that-has-no-spaces-at-all-'.repeat(3)}final.txt`;
const ELSEWHERE = 'http://elsewhere.test/';

describe('every page at desktop and phone size, light and dark', { skip: chromiumSkip() }, () => {
  let t: TestServer;
  let browser: Browser;
  let pages: SitePage[] = [];
  let palettes: Record<'light' | 'dark', Palette>;
  /** Each viewer's cookies, signed in once: contexts of either size start from them. */
  const signedIn: Partial<Record<Who, Awaited<ReturnType<BrowserContext['storageState']>>>> = {};

  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000, signup: 'open' });
    browser = await launchChromium();
    const member = await t.account({ premiumDays: 30, trafficBytes: 1024 ** 3, name: 'Ada Lovelace', email: 'ada@example.org' });
    const fixture = await seed(t, member);
    pages = PAGES(fixture);
    // The first start's operator, `admin`, with a password the test knows.
    const operator = { login: 'admin', password: 'operator password' };
    await t.server.services.accounts.setPassword(operator.login, operator.password);
    // A set-up of two-step verification in progress: its page shows the QR code and the key.
    await t.server.services.secondFactors.begin(await t.server.services.accounts.byLoginOrFail(operator.login), 'filehaven.example');
    for (const [who, account] of [
      ['member', member],
      ['operator', operator],
    ] as const) {
      const context = await browser.newContext();
      await signIn(await context.newPage(), t, account);
      signedIn[who] = await context.storageState();
      await context.close();
    }
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.url}/`);
    palettes = await themePalettes(page, await (await t.fetch('/static/site.css')).text());
    await context.close();
    assert.notDeepEqual(palettes.light, palettes.dark, 'site.css declares a dark palette of its own');
    if (SHOTS) await mkdir(SCREENSHOT_DIR, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const [device, options] of Object.entries(DEVICES)) {
    const { width, height } = options.viewport;
    test(`${device} ${width}×${height}: no sideways scroll, the scheme's background, 4.5:1 text, whole words in tables, no errors`, TIMEOUT, async () => {
      const failures: string[] = [];
      for (const who of ['visitor', 'member', 'operator'] as const) {
        const context = await browser.newContext({ ...options, storageState: signedIn[who] });
        await context.route(`${ELSEWHERE}**`, (route) =>
          route.fulfill({ contentType: 'text/html', body: `<a id="go" href="${t.url}${new URL(route.request().url()).searchParams.get('to')}">go</a>` }),
        );
        const page = await context.newPage();
        const problems = watchErrors(page, [/status of (401|403|404)/]);
        for (const entry of pages.filter((candidate) => candidate.who === who)) {
          const label = `${entry.name} (${entry.path}) at ${device}`;
          problems.length = 0;
          const response = await open(page, t, entry);
          if (response?.status() !== (entry.status ?? 200) || page.url() !== `${t.url}${entry.path}`) {
            failures.push(`${label}: ${response?.status()} at ${page.url()}, not ${entry.status ?? 200}`);
            continue;
          }
          const broken = await wordsBrokenInTables(page);
          if (broken.length > 0) failures.push(`${label}: words broken across lines in tables: ${broken.join(', ')}`);
          for (const scheme of SCHEMES) {
            await page.emulateMedia({ colorScheme: scheme });
            const painted = await themeBackgrounds(page);
            if (painted.bg !== palettes[scheme].bg || painted.card !== palettes[scheme].card) {
              failures.push(
                `${label}, ${scheme}: body ${painted.bg} and header ${painted.card}, not the ${scheme} theme's ${palettes[scheme].bg} and ${palettes[scheme].card}`,
              );
            }
            const extra = await sidewaysOverflow(page);
            if (extra > 0) failures.push(`${label}, ${scheme}: ${extra}px wider than the screen: ${(await sidewaysCulprits(page)).join(', ')}`);
            const low = await lowContrastText(page);
            if (low.length > 0) failures.push(`${label}, ${scheme}: text under 4.5:1: ${low.join('; ')}`);
            if (SHOTS) await page.screenshot({ path: path.join(SCREENSHOT_DIR, `site-${entry.name}-${device}-${scheme}.png`), fullPage: true });
          }
          failures.push(...problems.map((problem) => `${label}: ${problem}`));
        }
        await context.close();
      }
      assert.deepEqual(failures, []);
    });
  }
});

/** Opens a page the way people reach it; the answer to the page's own address. */
async function open(page: Page, t: TestServer, entry: SitePage): Promise<Response | null> {
  const target = `${t.url}${entry.path}`;
  await page.emulateMedia({ colorScheme: 'light' });
  if (entry.via === undefined) return page.goto(target);
  const answered = page.waitForResponse((response) => response.url() === target && response.request().isNavigationRequest());
  if (entry.via === 'form') {
    await page.goto(`${t.url}/`);
    await page.evaluate((action) => {
      const form = document.createElement('form');
      form.method = 'post';
      form.action = action;
      document.body.append(form);
      form.submit();
    }, target);
  } else {
    await page.goto(`${ELSEWHERE}?to=${encodeURIComponent(entry.path)}`);
    await page.click('#go');
  }
  const response = await answered;
  await page.waitForURL(target);
  return response;
}

/** An image and a long-named file in a folder with a sub-folder, a direct link, a blocked file and a blacklist entry. */
async function seed(t: TestServer, member: TestAccount): Promise<Fixture> {
  const pathOf = (link: string) => new URL(link).pathname;
  const image = await t.upload(member.key, 'holiday photo.png', gradientPng(480, 300));
  const longName = await t.upload(member.key, LONG_NAME, 'hello\n'.repeat(50));
  const notes = await t.upload(member.key, 'notes.txt', 'meeting notes');
  await t.upload(member.key, 'notes copy.txt', 'meeting notes');
  const newFolder = async (name: string, parent = '') => {
    const created = await t.fetch('/folders', { method: 'POST', headers: { Authorization: member.key }, body: new URLSearchParams({ name, parent }) });
    const id = /<entry>\s*<id>([^<]+)<\/id>/.exec(await created.text())?.[1];
    assert.ok(id, `folder ${name} created`);
    return id;
  };
  const folder = await newFolder('Holiday 2026 with a long folder name');
  const subfolder = await newFolder('Beach', folder);
  const moved = await t.fetch(`/folders/${folder};files`, {
    method: 'PUT',
    headers: { Authorization: member.key },
    body: new URLSearchParams({ 'files[0]': image.id, 'files[1]': longName.id }),
  });
  assert.equal(moved.status, 200, await moved.text());
  const share = async (fields: Record<string, string>) => {
    const created = await t.fetch('/shares', { method: 'POST', headers: { Authorization: member.key }, body: new URLSearchParams(fields) });
    const id = /<entry>\s*<id>([^<]+)<\/id>/.exec(await created.text())?.[1];
    assert.ok(id, 'share created');
    return id;
  };
  const shares = {
    file: await share({ file: longName.id, expires_in: '86400', max_downloads: '10' }),
    folder: await share({ folder }),
    locked: await share({ file: image.id, password: 'open sesame' }),
  };
  const { actions } = t.server.services.operator;
  await actions.changeFile('cli:test', 'block', notes.id);
  await actions.blacklistName('cli:test', '*.exe', 'no executables');
  return {
    image: { path: pathOf(image.downloadLink), deletePath: pathOf(image.deleteLink) },
    longName: { path: pathOf(longName.downloadLink), deletePath: pathOf(longName.deleteLink) },
    folder,
    subfolder,
    direct: pathOf(await directLink(t, member.key, image.id)),
    digest: createHash('sha256').update('meeting notes').digest('hex'),
    member: member.login,
    shares,
  };
}
