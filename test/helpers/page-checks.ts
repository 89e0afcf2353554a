import type { Page } from 'playwright-core';

// What every page of the site must pass in the browser, at any size and in either theme
// (test/e2e/site-sizes-browser.test.ts): nothing sticking out sideways, the theme's own
// background, readable text, no word broken inside a table cell. The probes are strings,
// not functions: tsx wraps named helpers in a __name() the page does not have.

/** The colours of one theme, as the browser computes them: `rgb(r, g, b)`. */
export interface Palette {
  /** `--bg`: the page behind everything (body). */
  bg: string;
  /** `--card`: cards and the header bar. */
  card: string;
}

/**
 * The light and the dark palette as the stylesheet declares them: the `:root` custom
 * properties outside any `prefers-color-scheme: dark` condition, and inside one (at any
 * depth, so a rule nested by mistake in another @media is still found, and the page check
 * is what fails). The browser's own CSS parser reads `css`; nothing is copied by hand.
 */
export async function themePalettes(page: Page, css: string): Promise<Record<'light' | 'dark', Palette>> {
  return page.evaluate(`(${PALETTE_PROBE})(${JSON.stringify(css)})`) as Promise<Record<'light' | 'dark', Palette>>;
}

const PALETTE_PROBE = `(css) => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  const found = { light: {}, dark: {} };
  const walk = (rules, dark) => {
    for (const rule of rules) {
      if (rule instanceof CSSMediaRule) walk(rule.cssRules, dark || /prefers-color-scheme:\\s*dark/.test(rule.conditionText));
      else if (rule instanceof CSSStyleRule && rule.selectorText === ':root') {
        for (const name of ['bg', 'card']) {
          const value = rule.style.getPropertyValue('--' + name).trim();
          if (value) found[dark ? 'dark' : 'light'][name] = value;
        }
      }
    }
  };
  walk(sheet.cssRules, false);
  const swatch = document.createElement('i');
  document.body.append(swatch);
  const rgb = (value) => {
    if (!value) return 'missing';
    swatch.style.color = value;
    return getComputedStyle(swatch).color;
  };
  const palettes = {};
  for (const scheme of ['light', 'dark']) palettes[scheme] = { bg: rgb(found[scheme].bg), card: rgb(found[scheme].card) };
  swatch.remove();
  return palettes;
}`;

/** The backgrounds the theme paints, as computed: the body's and the header bar's. */
export async function themeBackgrounds(page: Page): Promise<Palette> {
  return page.evaluate(() => ({
    bg: getComputedStyle(document.body).backgroundColor,
    card: getComputedStyle(document.querySelector('header.top') ?? document.body).backgroundColor,
  }));
}

/** The elements that reach past the right edge of the viewport (at most five), for a failure message. */
export async function sidewaysCulprits(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    return [...document.querySelectorAll('body *')]
      .filter((element) => element.getBoundingClientRect().right > width + 0.5)
      .slice(0, 5)
      .map((element) => `${element.tagName.toLowerCase()}.${[...element.classList].join('.')} right=${Math.round(element.getBoundingClientRect().right)}`);
  });
}

/**
 * Visible text under `minimum` contrast (WCAG 2 ratio) against the background it sits
 * on, at most five, lowest first: every element's own text, and what form fields show
 * (their value, or the placeholder when empty). A text colour with alpha is blended over
 * its background first, as it is painted. Framed documents (a text file's preview) are
 * read too, over their frame element's background: the browser draws a framed text file
 * in the scheme's colours, whatever the frame's background is.
 */
export async function lowContrastText(page: Page, minimum = 4.5): Promise<string[]> {
  const low = (await page.evaluate(`(${CONTRAST_PROBE})(${minimum}, 'rgb(255, 255, 255)')`)) as string[];
  for (const frame of page.mainFrame().childFrames()) {
    const element = await frame.frameElement();
    const under = await element.evaluate((frameElement) => getComputedStyle(frameElement as Element).backgroundColor);
    const inFrame = (await frame.evaluate(`(${CONTRAST_PROBE})(${minimum}, ${JSON.stringify(under)})`)) as string[];
    low.push(...inFrame.map((line) => `in a frame: ${line}`));
  }
  return low;
}

const CONTRAST_PROBE = `(minimum, canvas) => {
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
    return parse(canvas);
  };
  const over = (text, under) => ({
    r: text.r * text.a + under.r * (1 - text.a),
    g: text.g * text.a + under.g * (1 - text.a),
    b: text.b * text.a + under.b * (1 - text.a),
  });
  const ratioOf = (textColor, element) => {
    const under = background(element);
    const [light, dark] = [luminance(over(parse(textColor), under)), luminance(under)].sort((x, y) => y - x);
    return (light + 0.05) / (dark + 0.05);
  };
  const shown = (element) => {
    if (element.closest('[hidden], details:not([open]) > :not(summary), .offscreen')) return false;
    const style = getComputedStyle(element);
    return style.visibility !== 'hidden' && style.display !== 'none' && element.getClientRects().length > 0;
  };
  const name = (element) => element.tagName.toLowerCase() + [...element.classList].map((c) => '.' + c).join('');
  const low = [];
  for (const element of document.querySelectorAll('body *')) {
    const own = [...element.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim() !== '');
    if (own && shown(element)) {
      const color = getComputedStyle(element).color;
      const ratio = ratioOf(color, element);
      if (ratio < minimum) low.push({ ratio, where: name(element) + ' “' + element.textContent.trim().slice(0, 30) + '” ' + color + ' on ' + getComputedStyle(element).backgroundColor });
    }
    const field = element.matches('input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=file]), textarea, select');
    if (field && shown(element)) {
      const value = element.tagName === 'SELECT' ? (element.selectedOptions[0]?.text ?? '') : element.value;
      const placeholder = value === '' && element.placeholder;
      const color = placeholder ? getComputedStyle(element, '::placeholder').color : getComputedStyle(element).color;
      const ratio = ratioOf(color, element);
      const text = placeholder ? 'placeholder “' + element.placeholder + '”' : '“' + value.slice(0, 30) + '”';
      if (ratio < minimum) low.push({ ratio, where: name(element) + ' ' + text + ' ' + color + ' on ' + getComputedStyle(element).backgroundColor });
    }
  }
  return low
    .sort((x, y) => x.ratio - y.ratio)
    .slice(0, 5)
    .map(({ ratio, where }) => ratio.toFixed(2) + ': ' + where);
}`;

/**
 * Words split across two lines inside table cells ("Metho|d"): each run of letters is
 * measured as a range; more than one line box means the browser broke it. Letters inside
 * a token of 20 letters and digits or more (a digest, a link id) are left out.
 */
export async function wordsBrokenInTables(page: Page): Promise<string[]> {
  return page.evaluate(BROKEN_WORDS_PROBE) as Promise<string[]>;
}

const BROKEN_WORDS_PROBE = `(() => {
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement || !node.parentElement.closest('td, th')) continue;
    for (const match of node.textContent.matchAll(/[A-Za-z]{2,}/g)) {
      // Letters inside a digest or an id of 20 characters or more are no word: a narrow
      // column may break such a token anywhere (the audit log's details).
      const text = node.textContent;
      let start = match.index;
      let end = match.index + match[0].length;
      while (start > 0 && /[A-Za-z0-9]/.test(text[start - 1])) start--;
      while (end < text.length && /[A-Za-z0-9]/.test(text[end])) end++;
      if (end - start >= 20) continue;
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      if (tops.size > 1) broken.push(match[0]);
    }
  }
  return broken.slice(0, 10);
})()`;
