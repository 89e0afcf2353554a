import type { PropertyName } from './dav-multistatus.js';
import { BadXml, childOf, DAV, elementsOf, isElement, parseXml } from './dav-xml.js';

/** What a PROPFIND asks for (RFC 4918 9.1, 14.20). */
export type PropfindRequest =
  /** Every dead property and the live ones RFC 4918 defines, plus those named in DAV:include. */
  | { kind: 'allprop'; include: PropertyName[] }
  /** The names of every property, without values. */
  | { kind: 'propname' }
  /** These properties, each found (200) or not (404). */
  | { kind: 'prop'; names: PropertyName[] };

/**
 * Reads a PROPFIND body: none (only blanks) is allprop (RFC 4918 9.1); otherwise a
 * DAV:propfind holding DAV:allprop (with an optional DAV:include), DAV:propname or
 * DAV:prop. Anything else, and XML that is not well-formed or holds a DOCTYPE (parseXml),
 * is BadXml (400). Elements of other namespaces beside them are ignored (RFC 4918 17).
 */
export function parsePropfind(text: string): PropfindRequest {
  if (text.trim() === '') return { kind: 'allprop', include: [] };
  const root = parseXml(text);
  if (!isElement(root, DAV, 'propfind')) throw new BadXml('The body of a PROPFIND must be a DAV:propfind element');
  const prop = childOf(root, DAV, 'prop');
  if (prop) return { kind: 'prop', names: namesIn(elementsOf(prop)) };
  if (childOf(root, DAV, 'propname')) return { kind: 'propname' };
  if (childOf(root, DAV, 'allprop')) {
    const include = childOf(root, DAV, 'include');
    return { kind: 'allprop', include: include ? namesIn(elementsOf(include)) : [] };
  }
  throw new BadXml('A DAV:propfind holds DAV:prop, DAV:propname or DAV:allprop');
}

/** The names of these property elements, each once, in the order given. */
function namesIn(elements: { ns: string; name: string }[]): PropertyName[] {
  const seen = new Set<string>();
  const names: PropertyName[] = [];
  for (const { ns, name } of elements) {
    const key = JSON.stringify([ns, name]);
    if (seen.has(key)) continue;
    seen.add(key);
    names.push({ namespace: ns, name });
  }
  return names;
}
