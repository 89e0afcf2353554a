/**
 * Auto-escaping HTML templates: every interpolated value is escaped unless it is
 * already Html (the result of another `html` template or `raw`).
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | Value[];

function toHtml(value: Value): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(toHtml).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += toHtml(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Trusted markup, never user data. */
export const raw = (markup: string) => new Html(markup);
