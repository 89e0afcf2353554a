import assert from 'node:assert/strict';

/**
 * Line-by-line comparison of a response body with an expected template (API.md section 3,
 * "golden format"). A template is a list of lines; in it, a slot token (such as the
 * `K7Q2M9X4PA` file id of the API.md example) stands for a value that legitimately varies.
 * The first occurrence of a slot binds it to what the body holds there (which must match
 * the slot's pattern); every later occurrence, in any line, must hold the same value.
 * Everything else must be equal character for character.
 */

/** A placeholder in a template. */
export interface Slot {
  /** The text that stands for the value in the template. */
  token: string;
  /** Binding name; several tokens may share one (the same value). */
  name: string;
  /** What the value must look like (no anchors, no capture groups). */
  pattern: string;
}

/** Values bound so far, by slot name. */
export type Bindings = Map<string, string>;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The lines of a body that must end with exactly one newline (the last line is terminated). */
export function bodyLines(body: string): string[] {
  assert.ok(body.endsWith('\n'), `body must end with a newline:\n${JSON.stringify(body.slice(-40))}`);
  assert.ok(!body.endsWith('\n\n'), `body must end with exactly one newline, not a blank line:\n${JSON.stringify(body.slice(-40))}`);
  assert.ok(!body.includes('\r'), 'body lines must end with LF, never CR LF');
  return body.slice(0, -1).split('\n');
}

/** Replaces fixed texts ({base_url}, {web_url}, ...) everywhere in a template. */
export function substitute(lines: readonly string[], values: Record<string, string>): string[] {
  return lines.map((line) => Object.entries(values).reduce((out, [token, value]) => out.split(token).join(value), line));
}

/**
 * Matches one line against one template line; returns the new bindings or null.
 * Slots already bound are compared literally.
 */
function matchLine(actual: string, template: string, slots: readonly Slot[], bindings: Bindings): Bindings | null {
  let source = '^';
  const fresh: string[] = [];
  let rest = template;
  while (rest.length > 0) {
    // The earliest slot token in the rest of the line (the longest on a tie).
    let best: { at: number; slot: Slot } | null = null;
    for (const slot of slots) {
      const at = rest.indexOf(slot.token);
      if (at !== -1 && (!best || at < best.at || (at === best.at && slot.token.length > best.slot.token.length))) best = { at, slot };
    }
    if (!best) {
      source += escapeRegExp(rest);
      break;
    }
    source += escapeRegExp(rest.slice(0, best.at));
    const { name, pattern } = best.slot;
    const bound = bindings.get(name);
    if (bound !== undefined) source += escapeRegExp(bound);
    else if (fresh.includes(name)) source += `\\k<${name}>`;
    else {
      fresh.push(name);
      source += `(?<${name}>${pattern})`;
    }
    rest = rest.slice(best.at + best.slot.token.length);
  }
  const match = new RegExp(`${source}$`).exec(actual);
  if (!match) return null;
  const out = new Map(bindings);
  for (const name of fresh) out.set(name, match.groups![name]!);
  return out;
}

/**
 * Asserts that `body` is exactly `expected` line for line, modulo the slots, and that it
 * has the same number of lines. Returns the bindings (preset ones included).
 */
export function assertGoldenLines(body: string, expected: readonly string[], slots: readonly Slot[], preset: Bindings = new Map()): Bindings {
  const actual = bodyLines(body);
  let bindings = new Map(preset);
  const show = () => `\n--- expected (template) ---\n${expected.join('\n')}\n--- actual ---\n${body}`;
  const common = Math.min(actual.length, expected.length);
  for (let i = 0; i < common; i++) {
    const next = matchLine(actual[i]!, expected[i]!, slots, bindings);
    if (!next) {
      const known = [...bindings].map(([k, v]) => `${k}=${v}`).join(', ');
      assert.fail(
        `line ${i + 1} differs\n  expected: ${JSON.stringify(expected[i])}\n  actual:   ${JSON.stringify(actual[i])}\n  (bound: ${known || 'nothing'})${show()}`,
      );
    }
    bindings = next;
  }
  assert.equal(actual.length, expected.length, `the body has ${actual.length} lines, expected ${expected.length}${show()}`);
  return bindings;
}

/** The ```xml code blocks of a Markdown text, each as its lines. */
export function xmlBlocks(markdown: string): string[][] {
  return [...markdown.replace(/\r\n/g, '\n').matchAll(/^```xml\n([\s\S]*?)\n```[ \t]*$/gm)].map((m) => m[1]!.split('\n'));
}

/** Replaces exactly one whole line equal to `from` (fails if it is not there exactly once). */
export function replaceLine(lines: readonly string[], from: string, to: string | readonly string[]): string[] {
  const hits = lines.filter((line) => line === from).length;
  assert.equal(hits, 1, `expected exactly one line ${JSON.stringify(from)} in:\n${lines.join('\n')}`);
  const at = lines.indexOf(from);
  return [...lines.slice(0, at), ...(typeof to === 'string' ? [to] : to), ...lines.slice(at + 1)];
}
