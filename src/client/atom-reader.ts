import { XMLParser } from 'fast-xml-parser';

/**
 * Reads the server's Atom feeds (SPEC.md "Common shape", API.md 3) with a real XML
 * parser, into plain elements. Everything stays text: ids such as `1E10` or sizes with a
 * leading zero must not turn into numbers, and file names keep their spaces.
 */

/** One element: its attributes, its text, its child elements by name (`ed:size`, `link`). */
export interface XmlElement {
  /** Attributes by name, entities decoded. */
  attrs: Record<string, string>;
  /** The element's own text, entities decoded, untrimmed. */
  text: string;
  /** Child elements by qualified name, in document order. */
  children: Record<string, XmlElement[]>;
}

/** A feed as the server writes it. */
export interface AtomFeed {
  /** The feed title: the kind of result (`File upload result`, `Error`, ...). */
  title: string;
  /** `author/name`: the server's {web_url} (API.md 1), where download links live. */
  webUrl: string;
  /** The entries, in order. */
  entries: XmlElement[];
  /** The feed-level links (`self`, and `next` on listings), by rel. */
  links: Record<string, string>;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  attributesGroupName: '@attrs',
  textNodeName: '#text',
  alwaysCreateTextNode: true,
  isArray: () => true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  // Numeric character references (&#39;) too, not only the five XML entities.
  htmlEntities: true,
  processEntities: true,
});

type Parsed = Record<string, unknown>;

function toElement(raw: unknown): XmlElement {
  const element: XmlElement = { attrs: {}, text: '', children: {} };
  if (typeof raw !== 'object' || raw === null) {
    element.text = raw === undefined ? '' : String(raw);
    return element;
  }
  for (const [key, value] of Object.entries(raw as Parsed)) {
    if (key === '#text') element.text = (Array.isArray(value) ? value : [value]).map(String).join('');
    else if (key === '@attrs') {
      const attrs = (Array.isArray(value) ? value[0] : value) as Record<string, unknown>;
      for (const [name, attr] of Object.entries(attrs ?? {})) element.attrs[name.replace(/^@/, '')] = String(attr);
    } else element.children[key] = (Array.isArray(value) ? value : [value]).map(toElement);
  }
  return element;
}

/** The text of the first child of that name, or undefined when there is none. */
export function childText(element: XmlElement, name: string): string | undefined {
  return element.children[name]?.[0]?.text;
}

/** The children of that name (none: an empty list). */
export function childrenOf(element: XmlElement, name: string): XmlElement[] {
  return element.children[name] ?? [];
}

/** The first `link` child matching every given attribute (`{ title: 'download_link' }`). */
export function linkOf(element: XmlElement, match: Record<string, string>): XmlElement | undefined {
  return childrenOf(element, 'link').find((link) => Object.entries(match).every(([name, value]) => link.attrs[name] === value));
}

/** Parses a body as an Atom feed; null when it is not one (an HTML page, a cut-off body). */
export function readFeed(xml: string): AtomFeed | null {
  let document: Parsed;
  try {
    document = parser.parse(xml) as Parsed;
  } catch {
    return null;
  }
  const feedRaw = (document.feed as unknown[] | undefined)?.[0];
  if (feedRaw === undefined) return null;
  const feed = toElement(feedRaw);
  const links: Record<string, string> = {};
  for (const link of childrenOf(feed, 'link')) {
    const rel = link.attrs.rel;
    if (rel !== undefined && link.attrs.href !== undefined && !(rel in links)) links[rel] = link.attrs.href;
  }
  const author = childrenOf(feed, 'author')[0];
  return {
    title: childText(feed, 'title') ?? '',
    webUrl: (author && childText(author, 'name')) ?? '',
    entries: childrenOf(feed, 'entry'),
    links,
  };
}
