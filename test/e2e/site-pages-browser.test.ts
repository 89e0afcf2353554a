import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deflateSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumSkip, launchChromium, SCREENSHOT_DIR, watchErrors } from '../helpers/chromium.js';
import { directLink } from '../helpers/downloads.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// The site's pages in Debian's Chromium: every page at phone width (375 px) in the light
// and the dark theme, nothing wider than the screen, no word in a table broken across
// lines, text with enough contrast; a direct
// link opened by its signed-in owner downloads; sign-in returns to the page that asked.
// Screenshots go to test-output/screenshots/site-*.png.

const TIMEOUT = { timeout: 180_000 };
const PHONE = { width: 375, height: 812 };
/** A PNG of a sunset-like gradient (so the screenshots show a real preview), made here. */
function gradientPng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * (width * 3 + 1) + 1 + x * 3;
      rows.set([Math.round(255 - (y / height) * 120), Math.round(120 + (x / width) * 80 - (y / height) * 60), Math.round(90 + (y / height) * 140)], at);
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
const PNG = gradientPng(480, 300);
const LONG_NAME = `${'quarterly-report-with-a-very-long-name-that-has-no-spaces-at-all-'.repeat(3)}final.txt`;

/** How far the page is wider than the screen (0 when it fits), and the widest offenders. */
async function overflow(page: Page): Promise<{ extra: number; culprits: string[] }> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const extra = document.scrollingElement!.scrollWidth - width;
    const culprits = [...document.querySelectorAll('body *')]
      .filter((element) => element.getBoundingClientRect().right > width + 0.5)
      .slice(0, 5)
      .map((element) => `${element.tagName.toLowerCase()}.${[...element.classList].join('.')} right=${Math.round(element.getBoundingClientRect().right)}`);
    return { extra, culprits };
  });
}

/**
 * The lowest contrast ratio (WCAG) of visible text on the page against the background
 * it sits on, with the element that has it.
 */
async function lowestContrast(page: Page): Promise<{ ratio: number; where: string }> {
  // A string, not a function: tsx would wrap the named helpers in a __name() the page lacks.
  return page.evaluate(CONTRAST_PROBE) as Promise<{ ratio: number; where: string }>;
}

const CONTRAST_PROBE = `(() => {
    const parse = (color) => {
      const [r = 0, g = 0, b = 0, a = 1] = (color.match(/[0-9.]+/g) ?? []).map(Number);
      return { r, g, b, a };
    };
    const luminance = ({ r, g, b }) => {
      const channel = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    const background = (element) => {
      for (let at = element; at; at = at.parentElement) {
        const color = parse(getComputedStyle(at).backgroundColor);
        if (color.a > 0.5) return color;
      }
      return parse(getComputedStyle(document.documentElement).backgroundColor || 'rgb(255,255,255)');
    };
    let lowest = { ratio: 21, where: '' };
    for (const element of document.querySelectorAll('body *')) {
      const own = [...element.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim() !== '');
      if (!own || element.closest('[hidden], details:not([open]) > :not(summary), .offscreen')) continue;
      const style = getComputedStyle(element);
      if (style.visibility === 'hidden' || style.display === 'none' || element.getClientRects().length === 0) continue;
      const [light, dark] = [luminance(parse(style.color)), luminance(background(element))].sort((x, y) => y - x);
      const ratio = (light + 0.05) / (dark + 0.05);
      if (ratio < lowest.ratio) lowest = { ratio, where: \`\${element.tagName.toLowerCase()}.\${[...element.classList].join('.')} “\${element.textContent.trim().slice(0, 30)}” \${style.color} on \${getComputedStyle(element).backgroundColor}\` };
    }
    return lowest;
  })()`;

/**
 * Words split across two lines inside table cells ("Metho|d"): each run of letters is
 * measured as a range; more than one line box means the browser broke it.
 */
const BROKEN_WORDS_PROBE = `(() => {
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement || !node.parentElement.closest('td, th')) continue;
    for (const match of node.textContent.matchAll(/[A-Za-z]{2,}/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      if (tops.size > 1) broken.push(match[0]);
    }
  }
  return broken.slice(0, 10);
})()`;

describe('site pages in Chromium', { skip: chromiumSkip() }, () => {
  let t: TestServer;
  let browser: Browser;
  let owner: TestAccount;
  const pages: { name: string; path: string; signedIn: boolean }[] = [];
  let direct = '';

  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000, signup: 'open' });
    browser = await launchChromium();
    owner = await t.account({ premiumDays: 30, trafficBytes: 1024 ** 3, name: 'Ada Lovelace', email: 'ada@example.org' });
    const image = await t.upload(owner.key, 'holiday photo.png', PNG);
    const text = await t.upload(owner.key, LONG_NAME, 'hello\n'.repeat(50));
    const folder = await t.fetch('/folders', {
      method: 'POST',
      headers: { Authorization: owner.key },
      body: new URLSearchParams({ name: 'Holiday 2026 with a long folder name' }),
    });
    const folderId = /<entry>\s*<id>([^<]+)<\/id>/.exec(await folder.text())?.[1];
    assert.ok(folderId);
    const moved = await t.fetch(`/folders/${folderId};files`, {
      method: 'PUT',
      headers: { Authorization: owner.key },
      body: new URLSearchParams({ 'files[0]': image.id, 'files[1]': text.id }),
    });
    assert.equal(moved.status, 200, await moved.text());
    direct = new URL(await directLink(t, owner.key, image.id)).pathname;
    const pathOf = (link: string) => new URL(link).pathname;
    pages.push(
      { name: 'home', path: '/', signedIn: false },
      { name: 'sign-in', path: '/signin', signedIn: false },
      { name: 'sign-up', path: '/signup', signedIn: false },
      { name: 'developers', path: '/developers', signedIn: false },
      { name: 'download-image', path: pathOf(image.downloadLink), signedIn: false },
      { name: 'download-long-name', path: pathOf(text.downloadLink), signedIn: false },
      { name: 'folder', path: `/folder/${folderId}`, signedIn: false },
      { name: 'delete-confirm', path: pathOf(text.deleteLink), signedIn: false },
      { name: 'not-found', path: '/no/such/page/here', signedIn: false },
      { name: 'direct-sign-in', path: direct, signedIn: false },
      { name: 'home-member', path: '/', signedIn: true },
      { name: 'profile', path: '/accounts/profile/misc', signedIn: true },
      { name: 'my-files', path: '/my/files', signedIn: true },
      { name: 'my-folder', path: `/my/files?folder=${folderId}`, signedIn: true },
      { name: 'download-member', path: pathOf(image.downloadLink), signedIn: true },
    );
    await mkdir(SCREENSHOT_DIR, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function context(colorScheme: 'light' | 'dark', signedIn: boolean): Promise<BrowserContext> {
    const created = await browser.newContext({ viewport: PHONE, colorScheme, acceptDownloads: true, isMobile: true, hasTouch: true });
    if (signedIn) {
      const page = await created.newPage();
      await page.goto(`${t.url}/signin`);
      await page.getByLabel('Login').fill(owner.login);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${t.url}/accounts/profile/misc`);
      await page.close();
    }
    return created;
  }

  for (const scheme of ['light', 'dark'] as const) {
    test(`every page fits a 375 px phone (${scheme} theme), with readable contrast`, TIMEOUT, async () => {
      const contexts = { false: await context(scheme, false), true: await context(scheme, true) };
      try {
        const failures: string[] = [];
        for (const { name, path: where, signedIn } of pages) {
          const page = await contexts[String(signedIn) as 'true' | 'false'].newPage();
          const problems = watchErrors(page, [/status of (401|403|404)/]);
          await page.goto(`${t.url}${where}`);
          await page.waitForLoadState('load');
          const { extra, culprits } = await overflow(page);
          if (extra > 0) failures.push(`${name} (${where}) is ${extra}px wider than the screen: ${culprits.join(', ')}`);
          const broken = (await page.evaluate(BROKEN_WORDS_PROBE)) as string[];
          if (broken.length > 0) failures.push(`${name}: words broken across lines in tables: ${broken.join(', ')}`);
          const contrast = await lowestContrast(page);
          // WCAG AA for body text.
          if (contrast.ratio < 4.5) failures.push(`${name}: contrast ${contrast.ratio.toFixed(2)} at ${contrast.where}`);
          failures.push(...problems.map((problem) => `${name}: ${problem}`));
          await page.screenshot({ path: path.join(SCREENSHOT_DIR, `site-${name}-phone-${scheme}.png`), fullPage: true });
          await page.close();
        }
        assert.deepEqual(failures, []);
      } finally {
        await contexts.false.close();
        await contexts.true.close();
      }
    });
  }

  test('the dark theme follows the system', TIMEOUT, async () => {
    const colors: Record<string, string> = {};
    for (const scheme of ['light', 'dark'] as const) {
      const ctx = await context(scheme, false);
      const page = await ctx.newPage();
      await page.goto(`${t.url}/`);
      colors[scheme] = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      await ctx.close();
    }
    assert.equal(colors.light, 'rgb(246, 247, 249)');
    assert.equal(colors.dark, 'rgb(17, 20, 25)');
  });

  test('a direct link opened by its signed-in owner downloads; signed out it asks to sign in and comes back', TIMEOUT, async () => {
    const ctx = await context('light', false);
    try {
      const page = await ctx.newPage();
      await page.goto(`${t.url}${direct}`);
      assert.equal(await page.locator('h1').textContent(), 'Sign in to download');
      await page.getByRole('link', { name: 'Sign in and download' }).click();
      await page.getByLabel('Login').fill(owner.login);
      await page.getByLabel('Password').fill(owner.password);
      // The sign-in lands back on the direct link, which now starts the download.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Sign in' }).click()]);
      assert.equal(download.suggestedFilename(), 'holiday photo.png');
      assert.deepEqual(await readFile((await download.path())!), PNG);

      // Typed into the address bar again (Sec-Fetch-Site: none): downloads at once.
      const again = await ctx.newPage();
      const [second] = await Promise.all([again.waitForEvent('download'), again.goto(`${t.url}${direct}`).catch(() => undefined)]);
      assert.deepEqual(await readFile((await second.path())!), PNG);
    } finally {
      await ctx.close();
    }
  });

  test('the home page of a signed-in account uploads right there, as My files does', TIMEOUT, async () => {
    const ctx = await context('light', true);
    try {
      const page = await ctx.newPage();
      const problems = watchErrors(page, [/status of (401|403|404)/]);
      await page.goto(`${t.url}/`);
      await page
        .locator('#upload-files')
        .setInputFiles([{ name: 'from home «é».txt', mimeType: 'text/plain', buffer: Buffer.from('uploaded from the home page\n') }]);
      await page.locator('#upload-list .upload-status', { hasText: 'Uploaded' }).waitFor();
      const link = await page.locator('#upload-list a').first().getAttribute('href');
      assert.ok(link && (await fetch(new URL(link, t.url)).then((r) => r.status)) === 200, `the link ${link} opens`);
      assert.deepEqual(problems, []);
    } finally {
      await ctx.close();
    }
  });

  test('the header’s Sign in returns to the page it was clicked on', TIMEOUT, async () => {
    const ctx = await context('light', false);
    try {
      const page = await ctx.newPage();
      await page.goto(`${t.url}/developers`);
      await page.locator('header').getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Login').fill(owner.login);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${t.url}/developers`);
      assert.equal(await page.locator('h1').first().textContent(), 'API reference');
    } finally {
      await ctx.close();
    }
  });
});
