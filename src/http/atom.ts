/**
 * The Atom serializer of API.md section 3 ("golden format"): XML declaration, two-space
 * indentation, one element per line, attributes in the order given, the feed's self link
 * after the entries. Written by hand because the format is fixed to the byte (empty text
 * elements as `<x></x>`, links self-closed), which general XML builders do not promise.
 */

/** An element: text content (possibly empty) or children or neither (self-closed). */
export interface XmlElement {
  name: string;
  attrs?: ReadonlyArray<readonly [string, string | number]>;
  text?: string | number;
  children?: XmlElement[];
}

/** An element with text; empty text still renders as `<name></name>` (API.md 3). */
export const textEl = (name: string, text: string | number | null | undefined): XmlElement => ({ name, text: text ?? '' });

/** A `<link .../>` with attributes in the given order. */
export const linkEl = (...attrs: Array<readonly [string, string | number]>): XmlElement => ({ name: 'link', attrs });

/** An `<entry>`. */
export const entryEl = (...children: XmlElement[]): XmlElement => ({ name: 'entry', children });

// Characters XML 1.0 cannot carry at all (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/F).
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const TEXT_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const ATTRIBUTE_ENTITIES: Record<string, string> = { ...TEXT_ENTITIES, '"': '&quot;' };

/**
 * Escapes text content: only `&`, `<` and `>`, so quotes in names stay literal for the
 * regex and sed clients that read `<title>(.*?)</title>` without decoding entities.
 * Characters XML cannot represent are dropped.
 */
export function escapeXml(value: string | number): string {
  const text = String(value);
  if (PLAIN_TEXT.test(text)) return text;
  return text.replace(NOT_XML, '').replace(/[&<>]/g, (c) => TEXT_ENTITIES[c]!);
}

/** Escapes a double-quoted attribute value: also `"`. */
export function escapeXmlAttribute(value: string | number): string {
  const text = String(value);
  if (PLAIN_ATTRIBUTE.test(text)) return text;
  return text.replace(NOT_XML, '').replace(/[&<>"]/g, (c) => ATTRIBUTE_ENTITIES[c]!);
}

// Most values (numbers, dates, ids, URLs, plain names) need no escaping at all: one test
// instead of two replacements, on every element of every answer (issue 9).
const PLAIN_TEXT = /^[\t\n\r\u0020-\u0025\u0027-\u003b\u003d\u003f-\ud7ff\ue000-\ufffd]*$/;
const PLAIN_ATTRIBUTE = /^[\t\n\r\u0020\u0021\u0023-\u0025\u0027-\u003b\u003d\u003f-\ud7ff\ue000-\ufffd]*$/;

function render(element: XmlElement, depth: number, out: string[]): void {
  const pad = '  '.repeat(depth);
  const attrs = (element.attrs ?? []).map(([k, v]) => ` ${k}="${escapeXmlAttribute(v)}"`).join('');
  if (element.children && element.children.length > 0) {
    out.push(`${pad}<${element.name}${attrs}>`);
    for (const child of element.children) render(child, depth + 1, out);
    out.push(`${pad}</${element.name}>`);
  } else if (element.text !== undefined) {
    out.push(`${pad}<${element.name}${attrs}>${escapeXml(element.text)}</${element.name}>`);
  } else {
    out.push(`${pad}<${element.name}${attrs}/>`);
  }
}

export interface FeedOptions {
  /** Feed title naming the kind of result (SPEC.md's observed titles). */
  title: string;
  /** Absolute URL of the request resource. */
  id: string;
  /** Time of the response. */
  updated: Date;
  /** {web_url}. */
  author: string;
  /** {ed_namespace}. */
  namespace: string;
  /** Path of the request, for the trailing self link. */
  selfPath: string;
  /** The entries (exactly one for every SPEC.md operation). */
  entries: XmlElement[];
  /** Feed-level links after the self link (pagination). */
  links?: XmlElement[];
}

/** RFC 822 date with a numeric zone, as API.md section 3 shows: `Sat, 21 Nov 2026 10:04:05 +0000`. */
export function rfc822(date: Date): string {
  // Every answer carries the time; within one second it is the same text (issue 9).
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastRfc822 = date.toUTCString().replace(/GMT$/, '+0000');
  }
  return lastRfc822;
}

let lastSecond = NaN;
let lastRfc822 = '';

/** Serialises a whole feed, ending with a newline. */
export function atomFeed(options: FeedOptions): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ed="${escapeXmlAttribute(options.namespace)}">`];
  const children: XmlElement[] = [
    textEl('title', options.title),
    textEl('id', options.id),
    textEl('updated', rfc822(options.updated)),
    { name: 'author', children: [textEl('name', options.author)] },
    ...options.entries,
    linkEl(['rel', 'self'], ['href', options.selfPath]),
    ...(options.links ?? []),
  ];
  for (const child of children) render(child, 1, out);
  out.push('</feed>');
  return `${out.join('\n')}\n`;
}
