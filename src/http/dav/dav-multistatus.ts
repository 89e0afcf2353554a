import { STATUS_CODES } from 'node:http';
import { DAV, escapeXml } from './dav-xml.js';

/**
 * The pieces of a 207 Multi-Status body (RFC 4918 13, 14.16): PROPFIND streams them one
 * response at a time, PROPPATCH sends one. Every name and href in them is escaped here.
 */

/** The answer's media type (RFC 4918 8.2). */
export const MULTISTATUS_TYPE = 'application/xml; charset=utf-8';

/** Everything before the first DAV:response. */
export const MULTISTATUS_START = '<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">\n';

/** Everything after the last DAV:response. */
export const MULTISTATUS_END = '</D:multistatus>\n';

/** A property's name: its namespace URI ('' for none) and local name. */
export interface PropertyName {
  namespace: string;
  name: string;
}

/** The DAV:status line of a code ("HTTP/1.1 424 Failed Dependency"). */
export function statusLine(code: number): string {
  return `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}`.trimEnd();
}

/**
 * A property element with `innerXml` as its content ('' for an empty one). A DAV:
 * property takes the D: prefix the multistatus declares; any other declares its own
 * namespace as the default one (xmlns="" for none), so no prefix of the client's can
 * clash with ours, and a stored value's own declarations (dav-xml.ts serializeChildren)
 * keep their meaning inside it.
 */
export function propertyXml({ namespace, name }: PropertyName, innerXml = ''): string {
  // Names come from a parsed request (valid XML names), never from elsewhere.
  const tag = namespace === DAV ? `D:${name}` : name;
  const declaration = namespace === DAV ? '' : ` xmlns="${escapeXml(namespace)}"`;
  return innerXml === '' ? `<${tag}${declaration}/>` : `<${tag}${declaration}>${innerXml}</${tag}>`;
}

/**
 * A DAV:propstat of properties (already as XML) that share one status, with an optional
 * precondition (the content of a DAV:error, RFC 4918 16) and description.
 */
export function propstatXml(code: number, propertiesXml: string, conditionXml = '', description = ''): string {
  const error = conditionXml === '' ? '' : `<D:error>${conditionXml}</D:error>`;
  const said = description === '' ? '' : `<D:responsedescription>${escapeXml(description)}</D:responsedescription>`;
  return `<D:propstat><D:prop>${propertiesXml}</D:prop><D:status>${statusLine(code)}</D:status>${error}${said}</D:propstat>`;
}

/** A DAV:response of one resource: its href (as dav.href gives it) and its propstats. */
export function responseXml(href: string, propstatsXml: string): string {
  return `<D:response><D:href>${escapeXml(href)}</D:href>${propstatsXml}</D:response>\n`;
}
