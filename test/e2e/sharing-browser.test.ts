import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { chromiumSkip, launchChromium, SCREENSHOT_DIR, sidewaysOverflow, signIn, watchErrors } from '../helpers/chromium.js';
import { gradientPng } from '../helpers/gradient-png.js';
import { lowContrastText, type Palette, sidewaysCulprits, themeBackgrounds, themePalettes, wordsBrokenInTables } from '../helpers/page-checks.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// Sharing in Debian's Chromium (issue 25): the Share dialog of My files makes a link, the
// Shares page copies, edits and revokes it and opens an upload request; then every page
// of sharing (My files with the dialog open, the Shares page, a file share, a folder share,
// a protected share, an upload request and a protected one, the console's Shares section)
// at a laptop's and a phone's size, light and dark, through the site's page checks:
// nothing wider than the screen, the scheme's background, text at 4.5:1, whole words in
// tables, no script or CSP error. FILEHAVEN_DOCS_SCREENSHOTS=1 writes the pictures
// README.md and docs/web.md show into docs/screenshots/ (else test-output/screenshots/).

const TIMEOUT = { timeout: 300_000 };
const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots');
const SHOT_DIR = process.env.FILEHAVEN_DOCS_SCREENSHOTS === '1' ? DOCS_DIR : SCREENSHOT_DIR;

const DEVICES = {
  desktop: { viewport: { width: 1280, height: 800 } },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true },
} satisfies Record<string, BrowserContextOptions>;
const SCHEMES = ['light', 'dark'] as const;

type Who = 'visitor' | 'member' | 'operator';

interface SharingPage {
  name: string;
  who: Who;
  path: string;
  /** The status the page comes with (a protected request's page is a 401). */
  status?: number;
  /** Done after the page loads, before the checks (opening the Share dialog). */
  prepare?: (page: Page) => Promise<void>;
  /** Screenshot names for the docs (`<shot>-<device>.png`, light scheme). */
  shot?: string;
}

const LONG_NAME = `${'minutes-of-the-annual-general-meeting-without-any-spaces-'.repeat(2)}final.pdf`;

describe('sharing in Chromium', { skip: chromiumSkip() }, () => {
  let t: TestServer;
  let browser: Browser;
  let member: TestAccount;
  const signedIn: Partial<Record<Who, Awaited<ReturnType<BrowserContext['storageState']>>>> = {};

  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 });
    browser = await launchChromium();
    member = await t.account({ login: 'ada', premiumDays: 30, trafficBytes: 1024 ** 3 });
    const operator = { login: 'admin', password: 'operator password' };
    await t.server.services.accounts.setPassword(operator.login, operator.password);
    for (const [who, account] of [
      ['member', member],
      ['operator', operator],
    ] as const) {
      const context = await browser.newContext();
      await signIn(await context.newPage(), t, account);
      signedIn[who] = await context.storageState();
      await context.close();
    }
    await mkdir(SHOT_DIR, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('the Share dialog makes a link; the Shares page copies, edits and revokes it and opens an upload request', TIMEOUT, async () => {
    const { id: fileId } = await t.upload(member.key, 'budget 2026.xlsx', 'numbers');
    const context = await browser.newContext({ viewport: DEVICES.desktop.viewport, storageState: signedIn.member });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const problems = watchErrors(page);

    await page.goto(`${t.url}/my/files`);
    const entry = page.locator(`li.file[data-file="${fileId}"]`);
    await entry.getByText('Share', { exact: true }).click();
    // The script moved the form into a modal dialog.
    const dialog = page.locator('dialog.share-dialog');
    await dialog.waitFor({ state: 'visible' });
    assert.match((await dialog.locator('.share-heading').textContent()) ?? '', /Share “budget 2026\.xlsx”/);
    await dialog.getByLabel('Link expires').selectOption({ label: '1 day' });
    await dialog.getByLabel('Download limit').fill('5');
    assert.equal(await dialog.getByLabel(/Fast/).count(), 1, 'a premium account is offered fast');
    // Closing puts the form back where it was; opening again works.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await entry.locator('details.share form').count(), 1);
    await entry.getByText('Share', { exact: true }).click();
    await dialog.getByLabel('Download limit').fill('5');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    await page.waitForURL(/\/my\/shares\?created=[A-Za-z0-9]{22}$/);
    const id = new URL(page.url()).searchParams.get('created')!;
    const link = `${t.url}/s/${id}`;

    // The new link, with a working copy button.
    const created = page.locator('.created-share');
    assert.equal(await created.locator('a.share-link').textContent(), link);
    await created.getByRole('button', { name: /Copy the link/ }).click();
    await page.waitForFunction(() => document.querySelector('.created-share button')?.textContent === 'Copied');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), link);

    // Edit: a password and 2 downloads; the list says so.
    const item = page.locator(`li[data-share="${id}"]`);
    assert.match((await item.locator('.file-meta').textContent()) ?? '', /0 of 5 downloads/);
    await item.getByText('Edit', { exact: true }).click();
    await item.getByLabel('New password').fill('swordfish');
    await item.getByLabel('Download limit').fill('2');
    await item.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/note=share-changed/);
    assert.match((await page.locator(`li[data-share="${id}"] .file-meta`).textContent()) ?? '', /0 of 2 downloads · protected/);

    // The visitor's side: the password form, then the file.
    const visitor = await browser.newContext({ viewport: DEVICES.desktop.viewport });
    const visit = await visitor.newPage();
    await visit.goto(link);
    assert.equal(await visit.locator('h1').textContent(), 'This share is protected');
    assert.equal(await visit.getByText('budget 2026.xlsx').count(), 0, 'nothing of the share before the password');
    await visit.getByLabel('Password').fill('swordfish');
    await visit.getByRole('button', { name: 'Open' }).click();
    await visit.waitForURL(link);
    assert.equal(await visit.locator('h1').textContent(), 'budget 2026.xlsx');
    await visitor.close();

    // An upload request from the form: sizes in human units.
    await page.getByLabel('Title').last().fill('Receipts for March');
    await page.getByLabel('Message to the uploaders').last().fill('One PDF per receipt, please.');
    await page.getByLabel('Most files').last().fill('10');
    await page.getByLabel('Most in all').last().fill('1 GiB');
    await page.getByLabel('Largest file').last().fill('50 MB');
    await page.getByRole('button', { name: 'Open the upload request' }).click();
    await page.waitForURL(/note=request-created/);
    const request = page.locator('#requests li.share-item').first();
    assert.match(
      (await request.locator('.file-meta').textContent()) ?? '',
      /into My files \(top level\) · expires .* · 0 of 10 files · 0 B of 1\.0 GiB · up to 47\.7 MiB per file · no password/,
    );

    // Revoke the share: gone from the list.
    await page.locator(`li[data-share="${id}"]`).getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL(/note=revoked/);
    assert.equal(await page.locator(`li[data-share="${id}"]`).count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('every sharing page at desktop and phone size, light and dark: fits, its scheme, 4.5:1 text, no errors', TIMEOUT, async () => {
    const pages = await seed(t, member);
    const css = await (await t.fetch('/static/site.css')).text();
    const failures: string[] = [];
    for (const [device, options] of Object.entries(DEVICES)) {
      for (const who of ['visitor', 'member', 'operator'] as const) {
        const context = await browser.newContext({ ...options, storageState: signedIn[who] });
        const page = await context.newPage();
        const problems = watchErrors(page, [/status of 401/]);
        let palettes: Record<'light' | 'dark', Palette> | null = null;
        for (const entry of pages.filter((candidate) => candidate.who === who)) {
          const label = `${entry.name} (${entry.path}) at ${device}`;
          problems.length = 0;
          await page.emulateMedia({ colorScheme: 'light' });
          const response = await page.goto(`${t.url}${entry.path}`);
          if (response?.status() !== (entry.status ?? 200)) {
            failures.push(`${label}: ${response?.status()}, not ${entry.status ?? 200}`);
            continue;
          }
          palettes ??= await themePalettes(page, css);
          await entry.prepare?.(page);
          const broken = await wordsBrokenInTables(page);
          if (broken.length > 0) failures.push(`${label}: words broken across lines in tables: ${broken.join(', ')}`);
          for (const scheme of SCHEMES) {
            await page.emulateMedia({ colorScheme: scheme });
            const painted = await themeBackgrounds(page);
            if (painted.bg !== palettes[scheme].bg || painted.card !== palettes[scheme].card) {
              failures.push(
                `${label}, ${scheme}: body ${painted.bg} and header ${painted.card}, not the theme's ${palettes[scheme].bg} and ${palettes[scheme].card}`,
              );
            }
            const extra = await sidewaysOverflow(page);
            if (extra > 0) failures.push(`${label}, ${scheme}: ${extra}px wider than the screen: ${(await sidewaysCulprits(page)).join(', ')}`);
            const low = await lowContrastText(page);
            if (low.length > 0) failures.push(`${label}, ${scheme}: text under 4.5:1: ${low.join('; ')}`);
            if (entry.shot && scheme === 'light') await page.screenshot({ path: path.join(SHOT_DIR, `${entry.shot}-${device}.png`), fullPage: true });
            if ((entry.shot === 'share-page' || entry.shot === 'shares-page') && scheme === 'dark' && device === 'phone')
              await page.screenshot({ path: path.join(SHOT_DIR, `${entry.shot}-phone-dark.png`), fullPage: true });
          }
          failures.push(...problems.map((problem) => `${label}: ${problem}`));
        }
        await context.close();
      }
    }
    assert.deepEqual(failures, []);
  });
});

/** The pages to check, with the shares and requests they show made first. */
async function seed(t: TestServer, member: TestAccount): Promise<SharingPage[]> {
  const api = async (method: string, path: string, fields: Record<string, string>) => {
    const response = await t.fetch(path, { method, headers: { Authorization: member.key }, body: new URLSearchParams(fields) });
    const body = await response.text();
    assert.ok(response.status < 300, `${method} ${path}: ${body}`);
    return /<entry>\s*<id>([A-Za-z0-9]{10,22})<\/id>/.exec(body)?.[1] ?? assert.fail(body);
  };
  const photo = await t.upload(member.key, 'harbour at dawn.png', gradientPng(480, 300));
  const long = await t.upload(member.key, LONG_NAME, 'minutes\n'.repeat(40));
  const folder = await api('POST', '/folders', { name: 'Wedding photos 2026 (for the family)' });
  await api('POST', '/folders', { name: 'Ceremony', parent: folder });
  const inFolder = await t.upload(member.key, 'first dance.jpg', 'jpeg bytes');
  await api('PUT', `/folders/${folder};files`, { 'files[0]': inFolder.id, 'files[1]': photo.id });
  const fileShare = await api('POST', '/shares', { file: long.id, expires_in: String(7 * 86_400), max_downloads: '10' });
  const folderShare = await api('POST', '/shares', { folder, expires_in: String(30 * 86_400), fast: '1' });
  const protectedShare = await api('POST', '/shares', { file: photo.id, password: 'swordfish' });
  const request = await api('POST', '/requests', {
    folder,
    title: 'Photos from the wedding',
    message: 'Send us every photo you took: full size, as many as you like. Thank you!',
    expires_in: String(14 * 86_400),
    max_files: '200',
    max_bytes: String(20 * 1024 ** 3),
    max_file_size: String(2 * 1024 ** 3),
  });
  const protectedRequest = await api('POST', '/requests', { title: 'Signed contracts', password: 'letmein' });
  const openShareDialog = async (page: Page) => {
    await page.locator(`li.file[data-file="${long.id}"]`).getByText('Share', { exact: true }).click();
    await page.locator('dialog.share-dialog').waitFor({ state: 'visible' });
  };
  return [
    { name: 'share-file', who: 'visitor', path: `/s/${fileShare}`, shot: 'share-page' },
    { name: 'share-folder', who: 'visitor', path: `/s/${folderShare}` },
    { name: 'share-protected', who: 'visitor', path: `/s/${protectedShare}` },
    { name: 'request', who: 'visitor', path: `/r/${request}`, shot: 'request-page' },
    { name: 'request-protected', who: 'visitor', path: `/r/${protectedRequest}`, status: 401 },
    { name: 'my-files-share-dialog', who: 'member', path: '/my/files', prepare: openShareDialog, shot: 'share-dialog' },
    { name: 'my-folder', who: 'member', path: `/my/files?folder=${folder}` },
    { name: 'shares', who: 'member', path: '/my/shares', shot: 'shares-page' },
    {
      name: 'shares-editing',
      who: 'member',
      path: '/my/shares',
      prepare: async (page) => {
        await page.locator(`li[data-request="${request}"]`).getByText('Edit', { exact: true }).click();
      },
    },
    { name: 'console-shares', who: 'operator', path: '/console/shares', shot: 'console-shares' },
  ];
}
