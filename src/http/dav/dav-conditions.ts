import { lockTokenOf, storedTokenOf } from '../../webdav/dav-locks.js';
import { BadDavPath, type DavPath, davPath, parseDavPath } from '../../webdav/dav-path.js';
import type { DavResource } from '../../webdav/dav-tree.js';
import { etagOf } from '../send-blob.js';
import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';

/*
 * The If header (RFC 4918 10.4):
 *   If = "If" ":" ( 1*No-tag-list | 1*Tagged-list )
 *   No-tag-list = List;  Tagged-list = Resource-Tag 1*List;  Resource-Tag = "<" Simple-ref ">"
 *   List = "(" 1*Condition ")";  Condition = ["Not"] ( State-token | "[" entity-tag "]" )
 *   State-token = Coded-URL = "<" absolute-URI ">"
 * A list holds when each of its conditions does, for the resource it applies to (untagged:
 * the request's own); the header holds when one list does, else 412. A state token holds
 * when it is the token of a lock covering the resource (on it, or deep on a collection
 * above it); an entity tag when it is the resource's (files: etagOf; collections have none).
 */

/** One condition of a list. */
export interface IfCondition {
  /** "Not" before it. */
  not: boolean;
  /** A state token (a lock token, or any other Coded-URL such as DAV:no-lock), or an entity tag. */
  kind: 'token' | 'etag';
  /** The URI without its angle brackets, or the entity tag as sent (with its quotes, W/ kept). */
  value: string;
}

/** One list of an If header, with the resource tag it follows (null: untagged). */
export interface IfList {
  resource: string | null;
  conditions: IfCondition[];
  /** The header ended inside this list: it never holds, and submits no token. */
  cut?: boolean;
}

/** An If header that does not follow the grammar: 400. */
export class BadIfHeader extends Error {}

/** The header ends where more of it belongs. */
class CutShort extends BadIfHeader {}

/** The longest If header read (litmus and file managers send a few hundred bytes). */
const MAX_IF_LENGTH = 16 * 1024;

/** The lists of an If header; BadIfHeader when it is malformed (or mixes tagged and untagged lists). */
export function parseIfHeader(text: string): IfList[] {
  if (text.length > MAX_IF_LENGTH) throw new BadIfHeader('The If header is too long');
  const lists: IfList[] = [];
  let at = 0;
  let tag: string | null = null;
  let tagged: boolean | undefined;
  // Lists read since the last resource tag: a tag with none is malformed.
  let listsOfTag = 0;
  // Repeated If headers arrive joined by ", ": commas between productions are skipped.
  const skip = () => {
    while (at < text.length && /[ \t\r\n,]/.test(text[at]!)) at++;
  };
  const until = (close: string, what: string) => {
    const end = text.indexOf(close, at + 1);
    if (end < 0) throw new CutShort(`The If header has an unclosed ${what}`);
    const inside = text.slice(at + 1, end);
    at = end + 1;
    return inside;
  };
  skip();
  if (at >= text.length) throw new BadIfHeader('The If header is empty');
  while (at < text.length) {
    const char = text[at]!;
    if (char === '<') {
      if (tagged === false) throw new BadIfHeader('The If header mixes tagged and untagged lists');
      if (tagged && listsOfTag === 0) throw new BadIfHeader('A resource tag of the If header has no list');
      tagged = true;
      listsOfTag = 0;
      tag = until('>', 'resource tag');
      if (tag === '' || /\s/.test(tag)) throw new BadIfHeader('A resource tag of the If header is malformed');
    } else if (char === '(') {
      if (tagged === undefined) tagged = false;
      at++;
      const resource = tagged ? tag : null;
      listsOfTag++;
      try {
        lists.push({ resource, conditions: readConditions() });
      } catch (error) {
        // A list cut off by the end of the header (litmus prints its complex conditions into
        // a 200-byte buffer, which a 45-character token and 66-character ETags overflow):
        // it holds nothing, so it can only make the header fail, never pass. Anything else
        // malformed is a 400.
        if (!(error instanceof CutShort)) throw error;
        lists.push({ resource, conditions: [], cut: true });
        break;
      }
    } else throw new BadIfHeader(`The If header has "${char}" where a list or a resource tag belongs`);
    skip();
  }
  if (tagged && listsOfTag === 0) throw new BadIfHeader('A resource tag of the If header has no list');
  return lists;

  function readConditions(): IfCondition[] {
    const conditions: IfCondition[] = [];
    for (;;) {
      skip();
      if (at >= text.length) throw new CutShort('The If header has an unclosed list');
      if (text[at] === ')') {
        at++;
        if (conditions.length === 0) throw new BadIfHeader('A list of the If header is empty');
        return conditions;
      }
      let not = false;
      if (text.slice(at, at + 3).toLowerCase() === 'not') {
        not = true;
        at += 3;
        skip();
        if (at >= text.length) throw new CutShort('The If header ends after "Not"');
      }
      if (text[at] === '<') {
        const uri = until('>', 'state token');
        if (uri === '' || /\s/.test(uri)) throw new BadIfHeader('A state token of the If header is malformed');
        conditions.push({ not, kind: 'token', value: uri });
      } else if (text[at] === '[') {
        conditions.push({ not, kind: 'etag', value: readEntityTag() });
      } else throw new BadIfHeader('A condition of the If header is neither a state token nor an entity tag');
    }
  }

  /** `[ entity-tag ]` from "[": the tag is a quoted string (which may hold "]"), W/ before it for a weak one. */
  function readEntityTag(): string {
    at++;
    const start = at;
    if (text.startsWith('W/', at)) at += 2;
    if (at >= text.length) throw new CutShort('The If header has an unclosed entity tag');
    if (text[at] !== '"') throw new BadIfHeader('An entity tag of the If header is malformed');
    const close = text.indexOf('"', at + 1);
    if (close < 0) throw new CutShort('The If header has an unclosed entity tag');
    at = close + 1;
    const etag = text.slice(start, at);
    if (at >= text.length) throw new CutShort('The If header has an unclosed entity tag');
    if (text[at] !== ']') throw new BadIfHeader('An entity tag of the If header is malformed');
    at++;
    return etag;
  }
}

/** A lock token in the one spelling the locks are compared in (a urn:uuid in lower case); any other URI as it is. */
function canonicalToken(uri: string): string {
  const stored = storedTokenOf(uri);
  return stored === null ? uri : `urn:uuid:${stored}`;
}

/**
 * The lock tokens an If header submits (RFC 4918 10.4.1, 6.3: a lock token is submitted by
 * naming it in the If header): the state tokens of its lists, but not those after "Not",
 * which says the client does not claim them. A malformed header submits none (its request
 * is refused 400 by checkIfHeader anyway).
 */
export function submittedTokensOf(header: string | string[] | undefined): ReadonlySet<string> {
  const tokens = new Set<string>();
  if (header === undefined) return tokens;
  const text = Array.isArray(header) ? header.join(', ') : header;
  let lists: IfList[];
  try {
    lists = parseIfHeader(text);
  } catch {
    return tokens;
  }
  for (const list of lists)
    for (const condition of list.conditions) if (condition.kind === 'token' && !condition.not) tokens.add(canonicalToken(condition.value));
  return tokens;
}

/** What an If list is evaluated against: the resource's lock tokens and its entity tag. */
interface ResourceState {
  tokens(): Promise<ReadonlySet<string>>;
  etag(): Promise<string | null>;
}

/**
 * Evaluates the request's If header (RFC 4918 10.4) against the resources it names
 * (untagged lists: the request's own path), their lock tokens and ETags; throws a 412
 * DavError when no list of a resource holds, 400 when the header is malformed. A no-op
 * without an If header. A resource tag of another server, or outside this account's tree,
 * names a resource with no locks and no entity tag.
 */
export async function checkIfHeader(dav: DavExchange): Promise<void> {
  const header = dav.request.headers.if;
  if (header === undefined) return;
  let lists: IfList[];
  try {
    lists = parseIfHeader(Array.isArray(header) ? header.join(', ') : header);
  } catch (error) {
    if (error instanceof BadIfHeader) throw new DavError(400, error.message);
    throw error;
  }
  const states = new Map<string, ResourceState>();
  const stateOf = (path: DavPath | null): ResourceState => {
    const key = path?.text ?? '';
    let state = states.get(key);
    if (!state) {
      state = path === null ? { tokens: async () => new Set(), etag: async () => null } : resourceState(dav, path);
      states.set(key, state);
    }
    return state;
  };
  for (const list of lists) {
    const path = list.resource === null ? dav.path : taggedPath(dav, list.resource);
    if (await holds(list, stateOf(path))) return;
  }
  throw new DavError(412, 'No list of the If header holds');
}

async function holds(list: IfList, state: ResourceState): Promise<boolean> {
  if (list.cut) return false;
  for (const condition of list.conditions) {
    let matches: boolean;
    if (condition.kind === 'token') matches = (await state.tokens()).has(canonicalToken(condition.value));
    else {
      // Strong comparison (RFC 9110 8.8.3.2): a weak tag never matches, and ours are strong.
      const etag = await state.etag();
      matches = etag !== null && !condition.value.startsWith('W/') && condition.value === etag;
    }
    if (matches === condition.not) return false;
  }
  return true;
}

/** The lock tokens and entity tag of the resource at `path`, each read once and only when a condition needs it. */
function resourceState(dav: DavExchange, path: DavPath): ResourceState {
  let tokens: Promise<ReadonlySet<string>> | undefined;
  let etag: Promise<string | null> | undefined;
  const { locks, tree } = dav.context.services.dav;
  return {
    tokens: () => {
      tokens ??= locks.discover(dav.owner, path).then((found) => new Set(found.map(lockTokenOf)));
      return tokens;
    },
    etag: () => {
      etag ??= tree.resolve(dav.owner, path).then((resource) => (resource?.kind === 'file' ? etagOf(resource.file) : null));
      return etag;
    },
  };
}

/**
 * The tree path a resource tag names (an absolute URI or an absolute path, RFC 4918 10.4.2),
 * or null when it is on another host, outside the tree, or no path the tree could hold.
 */
function taggedPath(dav: DavExchange, tag: string): DavPath | null {
  let base: URL;
  let url: URL;
  try {
    base = new URL(`${dav.request.protocol}://${dav.request.headers.host ?? 'localhost'}`);
    url = new URL(tag, base);
  } catch {
    return null;
  }
  if (url.host !== base.host) return null;
  // The tree's own prefix: the href of its top without the final "/".
  const prefix = dav.href(davPath([]), true).replace(/\/$/, '');
  if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return null;
  try {
    return parseDavPath(url.pathname.slice(prefix.length));
  } catch (error) {
    if (error instanceof BadDavPath) return null;
    throw error;
  }
}

/**
 * If-Match and If-None-Match on a write (RFC 9110 13.1.1, 13.1.2, 13.2.2): 412 when one
 * does not hold for `resource` (the request's target as it is now, null when nothing is
 * there). A file's entity tag is etagOf (its SHA-256, strong); a collection has none.
 * "*" matches any resource that exists. If-Match compares strongly (a weak tag never
 * matches), If-None-Match weakly. Checked before anything is changed.
 */
export function checkEntityTags(dav: DavExchange, resource: DavResource | null): void {
  const etag = resource?.kind === 'file' ? etagOf(resource.file) : null;
  const ifMatch = headerText(dav.request.headers['if-match']);
  if (ifMatch !== null) {
    const tags = entityTagsOf(ifMatch);
    const holds = tags === '*' ? resource !== null : etag !== null && tags.some((tag) => tag === etag);
    if (!holds) throw new DavError(412, 'If-Match does not hold: the resource is not the one the client expected');
  }
  const ifNoneMatch = headerText(dav.request.headers['if-none-match']);
  if (ifNoneMatch !== null) {
    const tags = entityTagsOf(ifNoneMatch);
    const matches = tags === '*' ? resource !== null : etag !== null && tags.some((tag) => weakly(tag) === weakly(etag));
    if (matches) throw new DavError(412, 'If-None-Match does not hold: the resource is one the client did not expect');
  }
}

/** A header's value, repeated ones joined by ", "; null when absent. */
function headerText(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  return Array.isArray(header) ? header.join(', ') : header;
}

/** "*", or the entity tags of a list (RFC 9110 8.8.3: W/ kept, quotes kept); a malformed member matches nothing. */
function entityTagsOf(text: string): '*' | string[] {
  if (text.trim() === '*') return '*';
  return [...text.matchAll(/(W\/)?"[^"]*"/g)].map((match) => match[0]);
}

/** An entity tag without its weakness indicator (the weak comparison, RFC 9110 8.8.3.2). */
function weakly(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
