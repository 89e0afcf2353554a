import { hasUnwantedCharacters, truncateUtf8 } from '../domain/names.js';

/** A path of an account's WebDAV tree: the decoded names from the top (issue 27). */
export interface DavPath {
  /** The names, outermost first; none for the top. */
  names: readonly string[];
  /** The names joined by "/" after a leading "/"; "/" for the top. Locks are kept under it. */
  text: string;
  /** The request spelled it with a trailing "/" (a collection's spelling). */
  slash: boolean;
}

/** Why a path was refused: its message is the answer's (400). */
export class BadDavPath extends Error {}

/** The longest name in bytes, as API.md 2 bounds file names. */
const MAX_NAME_BYTES = 255;
/** Path depth beyond which nothing is looked up: no tree is deeper in practice. */
const MAX_DEPTH = 64;

/**
 * Reads the part of a request path after the tree's prefix ("/dav"): each segment
 * percent-decoded on its own, so "%2F" is a name holding a slash (refused: no name of the
 * tree holds one) rather than a step. "." and "..", a bad escape, a control character, a
 * name over 255 bytes or a path deeper than 64 names are BadDavPath; empty segments
 * ("a//b") are skipped.
 */
export function parseDavPath(rawPath: string): DavPath {
  const names: string[] = [];
  for (const segment of rawPath.split('/')) {
    if (segment === '') continue;
    let name: string;
    try {
      name = decodeURIComponent(segment);
    } catch {
      throw new BadDavPath('The path has a malformed %-escape');
    }
    if (name === '.' || name === '..') throw new BadDavPath('The path may not hold "." or ".." segments');
    if (name.includes('/') || name.includes('\\')) throw new BadDavPath('A name may not hold "/" or "\\"');
    // What no stored name holds: controls (NUL included), and the bidi marks names lose on upload.
    if (hasUnwantedCharacters(name)) throw new BadDavPath('A name may not hold control characters');
    if (truncateUtf8(name, MAX_NAME_BYTES) !== name) throw new BadDavPath(`A name may be ${MAX_NAME_BYTES} bytes long at most`);
    names.push(name);
    if (names.length > MAX_DEPTH) throw new BadDavPath(`The path is deeper than ${MAX_DEPTH} names`);
  }
  return davPath(names, rawPath.endsWith('/'));
}

/** The path of these names. */
export function davPath(names: readonly string[], slash = false): DavPath {
  return { names, text: names.length === 0 ? '/' : `/${names.join('/')}`, slash };
}

/** The parent of a path (the top is its own parent). */
export function parentOf(path: DavPath): DavPath {
  return davPath(path.names.slice(0, -1), true);
}

/** The last name of a path; '' for the top. */
export function lastName(path: DavPath): string {
  return path.names.at(-1) ?? '';
}

/** Whether `inner` is `outer` or lies below it. */
export function isWithin(inner: DavPath, outer: DavPath): boolean {
  return outer.names.length <= inner.names.length && outer.names.every((name, index) => inner.names[index] === name);
}

/** The path as a URL path after the tree's prefix, each name percent-encoded; collections end with "/". */
export function hrefOf(prefix: string, names: readonly string[], collection: boolean): string {
  const encoded = names.map((name) => encodeURIComponent(name)).join('/');
  if (names.length === 0) return `${prefix}/`;
  return `${prefix}/${encoded}${collection ? '/' : ''}`;
}
