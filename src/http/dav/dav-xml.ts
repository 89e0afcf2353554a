import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { XMLParser } from 'fast-xml-parser';

/** An element of a WebDAV request body, its names resolved (RFC 4918 uses namespaces throughout). */
export interface XmlElement {
  /** The namespace URI ('' for none). */
  ns: string;
  /** The local name. */
  name: string;
  /** Attributes other than namespace declarations, by their qualified name as sent. */
  attributes: Record<string, string>;
  /** The namespace URI of each prefix the attributes' names use ("xml" included), so they can be written out again. */
  attributePrefixes?: Record<string, string>;
  /** Elements and text, in order. */
  children: (XmlElement | string)[];
}

/** A body that is no XML WebDAV can read: answered 400 with its message. */
export class BadXml extends Error {}

/** The WebDAV namespace. */
export const DAV = 'DAV:';

/** The largest XML body read (a PROPPATCH of many properties stays far below). */
export const MAX_XML_BYTES = 1024 * 1024;

// fast-xml-parser is loaded with the first WebDAV body, not at the start: a server that
// never sees one does not hold it (idle memory, issue 28). Its CommonJS
// build is required, so parseXml stays synchronous.
const require = createRequire(import.meta.url);
let library: typeof import('fast-xml-parser') | undefined;
let parser: XMLParser | undefined;

function xmlLibrary(): { library: typeof import('fast-xml-parser'); parser: XMLParser } {
  library ??= require('fast-xml-parser') as typeof import('fast-xml-parser');
  parser ??= new library.XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    trimValues: false,
    parseTagValue: false,
    parseAttributeValue: false,
    // References are decoded here (decodeReferences), in one pass: the parser leaves
    // character references undecoded and would decode "&amp;#65;" into a reference.
    processEntities: false,
    htmlEntities: false,
    // CDATA apart from text: its content is never decoded.
    cdataPropName: '#cdata',
    ignoreDeclaration: true,
    ignorePiTags: true,
  });
  return { library, parser };
}

/**
 * Reads a request body of at most MAX_XML_BYTES (more is BadXml, and the rest is not
 * read); '' for none.
 */
export async function readXmlBody(request: IncomingMessage): Promise<string> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_XML_BYTES) throw new BadXml('The XML body is too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_XML_BYTES) throw new BadXml('The XML body is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The root element of an XML body, with namespaces resolved. A document type declaration
 * is refused outright: no entity of any kind, internal or external, is ever expanded, and
 * nothing is fetched (issue 27: XML with external entities).
 */
export function parseXml(text: string): XmlElement {
  if (/<!DOCTYPE/i.test(text)) throw new BadXml('Document type declarations are not accepted');
  const { library, parser } = xmlLibrary();
  const valid = library.XMLValidator.validate(text);
  if (valid !== true) throw new BadXml(`The body is not well-formed XML: ${valid.err.msg}`);
  let nodes: unknown[];
  try {
    nodes = parser.parse(text) as unknown[];
  } catch (error) {
    throw new BadXml(`The body is not well-formed XML: ${(error as Error).message}`);
  }
  const roots = nodes.filter((node) => !isText(node) && tagOf(node as RawNode) !== '#comment');
  if (roots.length !== 1) throw new BadXml('The body must have one root element');
  return resolve(roots[0] as RawNode, new Map([['xml', 'http://www.w3.org/XML/1998/namespace']]));
}

type RawNode = Record<string, unknown>;

function isText(node: unknown): node is { '#text': string } {
  return typeof node === 'object' && node !== null && '#text' in node;
}

function tagOf(node: RawNode): string {
  return Object.keys(node).find((key) => key !== ':@') ?? '';
}

function resolve(node: RawNode, inScope: ReadonlyMap<string, string>): XmlElement {
  const tag = tagOf(node);
  const rawAttributes = (node[':@'] ?? {}) as Record<string, string>;
  const scope = new Map(inScope);
  // Objects without a prototype: a name such as "__proto__" or "constructor" is a key like any other.
  const attributes: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(rawAttributes)) {
    if (name === 'xmlns') scope.set('', value);
    else if (name.startsWith('xmlns:')) {
      // RFC 4918 8.1 / Namespaces in XML 1.0: a prefix cannot be undeclared.
      if (value === '') throw new BadXml(`The namespace prefix "${name.slice(6)}" is declared empty`);
      scope.set(name.slice(6), value);
    } else attributes[name] = decodeReferences(value);
  }
  const attributePrefixes: Record<string, string> = Object.create(null);
  for (const qualified of Object.keys(attributes)) {
    const at = qualified.indexOf(':');
    if (at < 0) continue;
    const uri = scope.get(qualified.slice(0, at));
    if (uri === undefined) throw new BadXml(`The namespace prefix "${qualified.slice(0, at)}" is not declared`);
    attributePrefixes[qualified.slice(0, at)] = uri;
  }
  const colon = tag.indexOf(':');
  const prefix = colon >= 0 ? tag.slice(0, colon) : '';
  const name = colon >= 0 ? tag.slice(colon + 1) : tag;
  const ns = scope.get(prefix);
  if (ns === undefined) {
    if (prefix !== '') throw new BadXml(`The namespace prefix "${prefix}" is not declared`);
  }
  const children: (XmlElement | string)[] = [];
  for (const child of (node[tag] ?? []) as unknown[]) {
    if (isText(child)) children.push(decodeReferences(String(child['#text'])));
    else if (tagOf(child as RawNode) === '#cdata') children.push(cdataOf(child as RawNode));
    else if (tagOf(child as RawNode) !== '#comment') children.push(resolve(child as RawNode, scope));
  }
  return { ns: ns ?? '', name, attributes, attributePrefixes, children };
}

/** The five predefined entities (a Map: "&constructor;" finds nothing, as no inherited member can answer). */
const PREDEFINED = new Map<string, string>([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
]);

/**
 * Text with its references decoded: the five predefined entities and character references
 * (XML 1.0 4.1, 4.6). A reference to a character XML does not allow (NUL, a lone
 * surrogate) or to any other entity (none is declared: no DOCTYPE) is not well-formed.
 */
function decodeReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[^;&\s]*);/g, (_whole, reference: string) => {
    if (!reference.startsWith('#')) {
      const character = PREDEFINED.get(reference);
      if (character === undefined) throw new BadXml(`The entity "&${reference};" is not defined`);
      return character;
    }
    const code = reference[1] === 'x' ? Number.parseInt(reference.slice(2), 16) : Number.parseInt(reference.slice(1), 10);
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) throw new BadXml(`The character reference "&${reference};" names no XML character`);
    return String.fromCodePoint(code);
  });
}

/** The text of a CDATA section, as it stands. */
function cdataOf(node: RawNode): string {
  return ((node['#cdata'] ?? []) as unknown[]).map((part) => (isText(part) ? String(part['#text']) : '')).join('');
}

/** The child elements of an element (text left out). */
export function elementsOf(element: XmlElement): XmlElement[] {
  return element.children.filter((child): child is XmlElement => typeof child !== 'string');
}

/** The first child element with this namespace and name, or undefined. */
export function childOf(element: XmlElement, ns: string, name: string): XmlElement | undefined {
  return elementsOf(element).find((child) => child.ns === ns && child.name === name);
}

/** Whether an element is this one. */
export function isElement(element: XmlElement | undefined, ns: string, name: string): element is XmlElement {
  return element !== undefined && element.ns === ns && element.name === name;
}

/** The text of an element and of its descendants. */
export function textOf(element: XmlElement): string {
  return element.children.map((child) => (typeof child === 'string' ? child : textOf(child))).join('');
}

/** Escapes text for XML content and attribute values. */
export function escapeXml(text: string): string {
  return escapeAttribute(text);
}

/**
 * An element written out again as XML that stands alone: each element carries the
 * namespace declaration it needs, so a dead property's value keeps its meaning wherever
 * it is shown again (RFC 4918 4.3: namespaces in property values are preserved).
 */
export function serializeElement(element: XmlElement): string {
  // Each element declares its own default namespace: no prefix can clash or go missing.
  const declaration = ` xmlns="${escapeAttribute(element.ns)}"`;
  // A prefixed attribute (xml:lang, or one of another namespace) brings its prefix's declaration along.
  const prefixes = Object.entries(element.attributePrefixes ?? {})
    .filter(([prefix]) => prefix !== 'xml')
    .map(([prefix, uri]) => ` xmlns:${prefix}="${escapeAttribute(uri)}"`)
    .join('');
  const prefixesOf = element.attributePrefixes ?? {};
  const attributes = Object.entries(element.attributes)
    .filter(([name]) => !name.includes(':') || Object.hasOwn(prefixesOf, name.slice(0, name.indexOf(':'))))
    .map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`)
    .join('');
  const inner = serializeChildren(element);
  const start = `${element.name}${declaration}${prefixes}${attributes}`;
  return inner === '' ? `<${start}/>` : `<${start}>${inner}</${element.name}>`;
}

/** The children of an element written out (a dead property's value). */
export function serializeChildren(element: XmlElement): string {
  return element.children.map((child) => (typeof child === 'string' ? escapeText(child) : serializeElement(child))).join('');
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;');
}
