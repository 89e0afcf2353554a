import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core. Playwright's own browser downloads are
 * never used: the tests run against the distribution's browser or not at all.
 * FILEHAVEN_CHROMIUM points elsewhere (another build, or a missing path to try the skip).
 */
export const CHROMIUM_PATH = process.env.FILEHAVEN_CHROMIUM ?? '/usr/bin/chromium';

const IN_CI = process.env.CI === 'true';

/**
 * The `skip` option of a browser test suite: a message when Chromium is missing on a
 * developer's machine; false (run) when it is there, and always in CI (CI=true), where a
 * missing browser must fail the run (.ci/run installs it) rather than pass unnoticed.
 */
export function chromiumSkip(): string | false {
  if (existsSync(CHROMIUM_PATH) || IN_CI) return false;
  return `browser tests skipped: no Chromium at ${CHROMIUM_PATH} (install it with: apt-get install chromium)`;
}

/** Starts a headless Chromium; in CI a missing browser is an error naming the fix. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}, and CI=true does not skip the browser tests: .ci/run installs it (apt-get install -y chromium)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

/** test-output/screenshots/ at the repository root (git-ignored). */
export const SCREENSHOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test-output/screenshots');

/** Desktop and phone widths every page is photographed at. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

/**
 * Saves full-page screenshots of the page as it is now, at the desktop and the phone
 * width (`<name>-desktop.png`, `<name>-phone.png`), then restores the desktop width.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

/** Signs `user` in through the site's form, as a person would; lands on the profile. */
export async function signIn(page: Page, site: { url: string }, user: { login: string; password: string }): Promise<void> {
  await page.goto(`${site.url}/signin`);
  await page.getByLabel('Login').fill(user.login);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${site.url}/accounts/profile/misc`);
}

/**
 * Collects the page's script errors and console errors (a CSP refusal shows up there) for
 * a test to assert empty. `allowed`: console texts that are expected, such as the failed
 * load the browser logs for an error page a test asks for ("status of 409").
 */
export function watchErrors(page: Page, allowed: RegExp[] = []): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error' || allowed.some((pattern) => pattern.test(message.text()))) return;
    problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  return problems;
}

/** The upload requests a context's pages send: "POST /uploads", "PATCH /uploads/…", "POST /my/files/upload". */
export function recordUploadRequests(context: BrowserContext): string[] {
  const seen: string[] = [];
  context.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/uploads') || pathname === '/my/files/upload') seen.push(`${request.method()} ${pathname}`);
  });
  return seen;
}

/** How many pixels the page is wider than its viewport (0 or less: it fits, nothing scrolls sideways). */
export async function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}
