// The README's screenshots, taken by hand (not part of npm test):
//   node --import tsx scripts/screenshots.ts [--phone]
// Starts a server on a temporary data folder, creates demo content through the real API,
// and photographs the download page (with an image preview), a folder page and the
// profile page with Debian's Chromium (playwright-core, never a downloaded browser) into
// docs/screenshots/. --phone also writes phone-width shots to test-output/ for review.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { type Config, DEFAULTS } from '../src/config/config.js';
import { startServer } from '../src/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'docs/screenshots');
const REVIEW = path.join(ROOT, 'test-output/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const DESKTOP = { width: 1000, height: 700 };
const PHONE = { width: 390, height: 844 };

/** A calm picture to upload, drawn by the browser itself (no image files in the repository). */
const PICTURE = `<!doctype html><body style="margin:0"><div style="width:1200px;height:800px;position:relative;overflow:hidden;
background:linear-gradient(180deg,#f7c59f 0%,#f4a582 28%,#c87f8a 46%,#5b6c9a 62%,#26365a 100%)">
<div style="position:absolute;left:760px;top:250px;width:150px;height:150px;border-radius:50%;background:radial-gradient(circle,#fff6d6 0%,#ffd58a 60%,rgba(255,213,138,0) 72%)"></div>
<div style="position:absolute;left:0;right:0;top:470px;height:330px;background:linear-gradient(180deg,#3d4f7c 0%,#1c2746 100%)"></div>
<div style="position:absolute;left:-60px;top:380px;width:620px;height:220px;background:#2c3558;border-radius:50% 50% 0 0"></div>
<div style="position:absolute;left:420px;top:410px;width:900px;height:200px;background:#222b4a;border-radius:60% 40% 0 0"></div>
${Array.from({ length: 14 }, (_, i) => `<div style="position:absolute;left:${80 + i * 70}px;top:${560 + (i % 3) * 40}px;width:${120 + (i % 4) * 30}px;height:3px;border-radius:2px;background:rgba(255,220,170,${0.25 + (i % 3) * 0.1})"></div>`).join('')}
</div></body>`;

async function main(): Promise<void> {
  const phone = process.argv.includes('--phone');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-shots-'));
  const config: Config = { ...DEFAULTS, port: 0, dataDir, logLevel: 'silent', secret: 'screenshot-secret-0123456789abcdef' };
  const server = await startServer(config, { log: () => {} });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars'] });
  try {
    const base = server.baseUrl;
    const { services } = server;
    const password = 'correct horse battery';
    const ada = await services.accounts.create({
      login: 'ada',
      password,
      name: 'Ada Lovelace',
      email: 'ada@example.org',
      premiumDays: 30,
      trafficBytes: 7.4 * 1024 ** 3,
    });
    const key = await services.accounts.apiKeyFor(ada);
    const api = async (pathname: string, init: RequestInit): Promise<string> => {
      const response = await fetch(`${base}${pathname}`, { ...init, headers: { Authorization: key, ...init.headers } });
      const body = await response.text();
      if (response.status >= 300) throw new Error(`${pathname}: ${response.status} ${body}`);
      return /<entry>\s*<id>([^<]+)<\/id>/.exec(body)?.[1] ?? '';
    };
    const upload = (name: string, bytes: Uint8Array<ArrayBuffer> | string) => {
      const form = new FormData();
      form.append('upload', new Blob([bytes]), name);
      return api('/files', { method: 'POST', body: form });
    };
    const folder = (name: string, parent?: string) => api('/folders', { method: 'POST', body: new URLSearchParams({ name, ...(parent ? { parent } : {}) }) });
    const move = (folderId: string, ids: string[]) => {
      const body = new URLSearchParams({ _method: 'PUT' });
      for (const [i, id] of ids.entries()) body.append(`files[${i}]`, id);
      return api(`/folders/${folderId};files`, { method: 'POST', body });
    };

    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.setContent(PICTURE);
    const picture = new Uint8Array(await page.screenshot({ type: 'png' }));

    const photo = await upload('harbour at dusk.png', picture);
    const trip = await folder('Trip to Lisbon');
    const days = [await folder('Day 1 – Alfama', trip), await folder('Day 2 – Belém', trip)];
    const files = [
      photo,
      await upload('itinerary.pdf', `%PDF-1.4\n${'x'.repeat(182_000)}`),
      await upload('tram 28 timetable.csv', 'stop,time\n'.repeat(900)),
      await upload('packing list.txt', 'passport\nadapter\nsun hat\n'),
    ];
    await move(trip, files);
    await move(days[0]!, [await upload('miradouro.jpg', picture), await upload('fado night.mp3', new Uint8Array(4_800_000))]);
    await move(days[1]!, [await upload('tower.jpg', picture)]);

    await mkdir(OUT, { recursive: true });
    const shoot = async (target: Page, name: string, size = DESKTOP) => {
      await target.setViewportSize(size);
      await target.screenshot({ path: path.join(OUT, `${name}.png`) });
      if (phone) {
        await mkdir(REVIEW, { recursive: true });
        await target.setViewportSize(PHONE);
        await target.screenshot({ path: path.join(REVIEW, `readme-${name}-phone.png`), fullPage: true });
        await target.setViewportSize(DESKTOP);
      }
    };

    // Signed in, so the pages show the header as a member sees it.
    await page.setViewportSize(DESKTOP);
    await page.goto(`${base}/signin`);
    await page.fill('input[name="login"]', 'ada');
    await page.fill('input[name="password"]', password);
    await Promise.all([page.waitForURL(/\/accounts\/profile\/misc/), page.click('button[type="submit"]')]);
    await shoot(page, 'profile', { width: 1000, height: 860 });

    // The download page as another member sees it: with "Copy to my account".
    await services.accounts.create({ login: 'grace', password, name: 'Grace Hopper' });
    const other = await browser.newPage({ viewport: DESKTOP });
    await other.goto(`${base}/signin`);
    await other.fill('input[name="login"]', 'grace');
    await other.fill('input[name="password"]', password);
    await Promise.all([other.waitForURL(/\/accounts\/profile\/misc/), other.click('button[type="submit"]')]);
    const record = await services.store.files.byId(photo);
    await other.goto(`${base}/${photo}/${encodeURIComponent(record!.name)}`);
    await other.waitForFunction(() => Array.from(document.images).every((img) => img.complete && img.naturalWidth > 0));
    await shoot(other, 'download-page', { width: 1000, height: 800 });

    await page.goto(`${base}/folder/${trip}`);
    await shoot(page, 'folder-page');

    if (phone) {
      // Every other page at phone width, for review only.
      for (const [name, pathname] of [
        ['developers', '/developers'],
        ['not-found', '/nothing/here'],
        ['text-preview', `/${files[3]}/x`],
      ] as const) {
        await page.goto(`${base}${pathname}`);
        await page.setViewportSize(PHONE);
        await page.screenshot({ path: path.join(REVIEW, `readme-${name}-phone.png`), fullPage: true });
        await page.setViewportSize(DESKTOP);
        await page.screenshot({ path: path.join(REVIEW, `readme-${name}-desktop.png`), fullPage: true });
      }
    }
    console.log(`screenshots saved in ${path.relative(ROOT, OUT)}/`);
  } finally {
    await browser.close();
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
