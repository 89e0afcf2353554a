import { Readable } from 'node:stream';
import type { DavLockRecord } from '../../db/repositories/repositories.js';
import { sanitizeFileName } from '../../domain/names.js';
import { DEFAULT_LOCK_SECONDS, lockRootOf, lockTokenOf, MAX_LOCK_SECONDS } from '../../webdav/dav-locks.js';
import { lastName, parentOf } from '../../webdav/dav-path.js';
import type { DavCollection } from '../../webdav/dav-tree.js';
import { checkEntityTags, checkIfHeader } from './dav-conditions.js';
import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';
import { lockDiscoveryXml } from './dav-lock-xml.js';
import { childOf, DAV, elementsOf, parseXml, readXmlBody, serializeElement, type XmlElement } from './dav-xml.js';

/** The largest DAV:owner element kept with a lock (clients send a name or a URL). */
const MAX_OWNER_XML = 8 * 1024;

/**
 * LOCK (RFC 4918 9.10). With a DAV:lockinfo body, a new exclusive or shared write lock
 * of Depth 0 or infinity (the default); on an unmapped URL it first makes an empty file
 * there (7.3) through the upload use case, in a parent collection that must exist (409).
 * Answers 200 (201 when it made the file) with the Lock-Token header and the resource's
 * DAV:lockdiscovery, the new lock first. With no body, a refresh of the locks the If
 * header names (9.10.2): 200 with them, 412 when none of them covers the resource.
 */
export async function handleLock(dav: DavExchange): Promise<void> {
  const body = await readXmlBody(dav.request.raw);
  const timeoutSeconds = timeoutOf(dav.request.headers.timeout);
  if (body.trim() === '') return refresh(dav, timeoutSeconds);
  const info = lockInfoOf(parseXml(body));
  const deep = depthOf(dav.request.headers.depth);
  const { locks, tree } = dav.context.services.dav;
  await checkIfHeader(dav);
  const resource = await tree.resolve(dav.owner, dav.path);
  checkEntityTags(dav, resource);
  let parent: DavCollection | null = null;
  if (!resource) {
    // A lock on an unmapped URL makes an empty resource there (RFC 4918 7.3): a write into
    // the parent, which locks of the parent may forbid.
    const above = await tree.resolve(dav.owner, parentOf(dav.path));
    if (!above || above.kind === 'file') throw new DavError(409, 'The parent collection does not exist');
    const name = lastName(dav.path);
    if (sanitizeFileName(name) !== name) throw new DavError(400, 'A file name may not begin or end with white space');
    await locks.assertWritable(dav.owner, [{ path: dav.path, deep: false, member: true }], dav.submittedTokens());
    parent = above;
  }
  // Granted before the file is made: a conflicting lock refuses the LOCK with nothing made.
  const lock = await locks.lock(dav.owner, { path: dav.path, exclusive: info.exclusive, deep, ownerXml: info.ownerXml, timeoutSeconds });
  if (parent) {
    try {
      await createEmptyFile(dav, parent);
    } catch (error) {
      await locks.unlock(dav.owner, dav.path, lockTokenOf(lock));
      throw error;
    }
  }
  const others = (await locks.discover(dav.owner, dav.path)).filter((other) => other.token !== lock.token);
  const collection = resource !== null && resource.kind !== 'file';
  dav.reply
    .code(parent ? 201 : 200)
    .header('Lock-Token', `<${lockTokenOf(lock)}>`)
    .type('application/xml; charset=utf-8')
    .send(lockAnswer(dav, [lock, ...others], collection));
}

/** A LOCK with no body: new timeouts for the locks covering the resource that the If header names. */
async function refresh(dav: DavExchange, timeoutSeconds: number): Promise<void> {
  const { locks, tree } = dav.context.services.dav;
  const submitted = dav.submittedTokens();
  if (submitted.size === 0) throw new DavError(400, 'A LOCK without a body refreshes a lock: name its token in the If header');
  await checkIfHeader(dav);
  const refreshed = await locks.refresh(dav.owner, dav.path, submitted, timeoutSeconds);
  if (refreshed.length === 0) {
    throw new DavError(412, 'No lock named in the If header covers this resource', '<D:lock-token-matches-request-uri/>');
  }
  const resource = await tree.resolve(dav.owner, dav.path);
  dav.reply
    .code(200)
    .type('application/xml; charset=utf-8')
    .send(lockAnswer(dav, refreshed, resource !== null && resource.kind !== 'file'));
}

/**
 * UNLOCK (RFC 4918 9.11): removes the lock the Lock-Token header names; 204. 400 without
 * the header; 409 (DAV:lock-token-matches-request-uri) when no lock of this account with
 * that token covers the resource: a token of another account, a made-up one, or one of a
 * lock elsewhere in the tree; all alike, so nothing says whether a token exists.
 */
export async function handleUnlock(dav: DavExchange): Promise<void> {
  const header = dav.request.headers['lock-token'];
  const match = typeof header === 'string' ? /^\s*<([^<>\s]+)>\s*$/.exec(header) : null;
  if (!match) throw new DavError(400, 'UNLOCK needs a Lock-Token header: <the lock token>');
  if (!(await dav.context.services.dav.locks.unlock(dav.owner, dav.path, match[1]!))) {
    throw new DavError(409, 'No lock with this token covers this resource', '<D:lock-token-matches-request-uri/>');
  }
  dav.reply.code(204).send();
}

/** What a lockinfo body asks for (RFC 4918 14.11): its scope (exclusive or shared), a write lock, and its owner. */
function lockInfoOf(root: XmlElement): { exclusive: boolean; ownerXml: string } {
  if (root.ns !== DAV || root.name !== 'lockinfo') throw new DavError(400, 'A LOCK body is a DAV:lockinfo element');
  const scope = childOf(root, DAV, 'lockscope');
  const scopeName = scope ? elementsOf(scope).find((element) => element.ns === DAV)?.name : undefined;
  if (scopeName !== 'exclusive' && scopeName !== 'shared') throw new DavError(400, 'DAV:lockscope is DAV:exclusive or DAV:shared');
  const type = childOf(root, DAV, 'locktype');
  if (!type || !elementsOf(type).some((element) => element.ns === DAV && element.name === 'write')) {
    throw new DavError(400, 'DAV:locktype is DAV:write, the one lock type there is');
  }
  const owner = childOf(root, DAV, 'owner');
  const ownerXml = owner ? serializeElement(owner) : '';
  if (ownerXml.length > MAX_OWNER_XML) throw new DavError(400, `DAV:owner may be ${MAX_OWNER_XML} characters long at most`);
  return { exclusive: scopeName === 'exclusive', ownerXml };
}

/** The Depth of a new lock (RFC 4918 9.10.3): 0 or infinity, the default; 1 is no lock depth (400). */
function depthOf(header: string | string[] | undefined): boolean {
  if (header === undefined) return true;
  const value = (Array.isArray(header) ? header[0]! : header).trim().toLowerCase();
  if (value === 'infinity') return true;
  if (value === '0') return false;
  throw new DavError(400, 'A LOCK has Depth 0 or infinity');
}

/**
 * The timeout to grant (RFC 4918 10.7): the first of the header's "Second-N" and
 * "Infinite" this server understands, at most MAX_LOCK_SECONDS; DEFAULT_LOCK_SECONDS
 * when there is none.
 */
export function timeoutOf(header: string | string[] | undefined): number {
  if (header === undefined) return DEFAULT_LOCK_SECONDS;
  const text = Array.isArray(header) ? header.join(',') : header;
  for (const item of text.split(',')) {
    const value = item.trim();
    if (/^infinite$/i.test(value)) return MAX_LOCK_SECONDS;
    const seconds = /^second-(\d{1,12})$/i.exec(value);
    if (seconds) return Math.min(MAX_LOCK_SECONDS, Math.max(1, Number(seconds[1])));
  }
  return DEFAULT_LOCK_SECONDS;
}

/** An empty file at the request's path, through the one upload use case (limits, blacklist, the upload log). */
async function createEmptyFile(dav: DavExchange, parent: DavCollection): Promise<void> {
  const name = lastName(dav.path);
  await dav.context.services.uploads.upload({
    owner: dav.owner,
    folder: parent.kind === 'folder' ? { id: parent.folder.id, ifGone: 'refuse' } : null,
    source: {
      kind: 'stream',
      declaredBytes: 0,
      receive: async ({ stage }) => ({ staged: await stage(Readable.from([])), name }),
    },
    limits: { allowEmpty: true },
  });
}

/** The body of a LOCK answer: DAV:prop with DAV:lockdiscovery (RFC 4918 9.10.1). */
function lockAnswer(dav: DavExchange, locks: DavLockRecord[], collectionHere: boolean): string {
  const hrefOf = (lock: DavLockRecord) =>
    // A lock above the resource is a deep lock, on a collection.
    dav.href(lockRootOf(lock), lock.path === dav.path.text ? collectionHere : true);
  const discovery = lockDiscoveryXml(locks, hrefOf, dav.context.services.clock());
  return `<?xml version="1.0" encoding="utf-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${discovery}</D:lockdiscovery></D:prop>\n`;
}
