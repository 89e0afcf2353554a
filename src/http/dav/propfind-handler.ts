import { Readable } from 'node:stream';
import type { DavLockRecord, DavProperty } from '../../db/repositories/repositories.js';
import { davPath } from '../../webdav/dav-path.js';
import { isLiveProperty } from '../../webdav/dav-properties.js';
import type { DavResource } from '../../webdav/dav-tree.js';
import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';
import { type DavQuota, isQuotaProperty, type LiveSources, liveNamesOf, liveValueXml } from './dav-live-properties.js';
import { MULTISTATUS_END, MULTISTATUS_START, MULTISTATUS_TYPE, type PropertyName, propertyXml, propstatXml, responseXml } from './dav-multistatus.js';
import { DAV, readXmlBody } from './dav-xml.js';
import { type PropfindRequest, parsePropfind } from './propfind-body.js';

/**
 * Resources whose dead properties are read in one go while a listing streams: at most
 * MAX_TOTAL_VALUE_BYTES each (webdav/dav-properties.ts), so a batch holds 50 × 64 KiB =
 * 3.2 MiB of values at most, whatever the folder.
 */
const CHUNK = 50;
/** Answer text gathered before it is written: fewer, larger writes, and a bound on what waits. */
const FLUSH_CHARS = 64 * 1024;

/**
 * PROPFIND (RFC 4918 9.1): the properties of a resource (Depth: 0) or of a collection and
 * its children (Depth: 1), as a 207 multistatus with one propstat per status (200 found,
 * 404 not). Depth: infinity, and a missing Depth (which means it), are refused with 403
 * and DAV:propfind-finite-depth, as most servers do: a whole tree in one answer costs the
 * server what the client can get by walking it.
 *
 * A listing is streamed: the children's records are read first (the naming rule needs
 * them all, dav-tree.ts), then each response is written as it is made, the dead
 * properties read a chunk of CHUNK resources at a time, so the answer text in memory
 * stays bounded however large the folder.
 */
export async function handlePropfind(dav: DavExchange): Promise<void> {
  const depth = depthOf(dav.request.headers.depth);
  const request = parsePropfind(await readXmlBody(dav.request.raw));
  const { services } = dav.context;
  const target = await services.dav.tree.resolve(dav.owner, dav.path);
  if (!target) throw new DavError(404, 'Nothing is at this path');
  const children = depth === 1 && target.kind !== 'file' ? await services.dav.tree.children(dav.owner, target) : [];
  const quota = asksForQuota(request) ? await quotaOf(dav) : null;
  const locksOf = await lockFinder(dav, target, children.length > 0);
  const entries = [target, ...children];
  const needsDead = request.kind !== 'prop' || request.names.some((name) => !isLiveProperty(name.namespace, name.name));
  const deadOf = (chunk: DavResource[]) =>
    needsDead
      ? services.dav.properties.listMany(
          dav.owner,
          chunk.map((resource) => resource.key),
        )
      : Promise.resolve(new Map<string, DavProperty[]>());
  // The first chunk before the status goes out: a failure there is still a clean 500.
  const first = await deadOf(entries.slice(0, CHUNK));

  async function* body(): AsyncGenerator<string> {
    let pending = MULTISTATUS_START;
    for (let at = 0; at < entries.length; at += CHUNK) {
      const chunk = entries.slice(at, at + CHUNK);
      const dead = at === 0 ? first : await deadOf(chunk);
      for (const resource of chunk) {
        const sources: LiveSources = {
          topCreatedAt: dav.owner.createdAt,
          locks: locksOf(resource),
          lockRootHref: (lock) => lockRootHref(dav, resource, lock),
          quota,
        };
        pending += responseXml(dav.href(resource.path, resource.kind !== 'file'), propstatsOf(resource, request, sources, dead.get(resource.key) ?? []));
        if (pending.length >= FLUSH_CHARS) {
          yield pending;
          pending = '';
        }
      }
    }
    yield `${pending}${MULTISTATUS_END}`;
  }

  dav.reply
    .code(207)
    .type(MULTISTATUS_TYPE)
    .send(Readable.from(body(), { objectMode: false }));
}

/** The Depth header of a PROPFIND: 0 or 1; infinity (or none) 403, anything else 400. */
function depthOf(header: string | string[] | undefined): 0 | 1 {
  const value = (Array.isArray(header) ? header.join(',') : (header ?? 'infinity')).trim().toLowerCase();
  if (value === '0') return 0;
  if (value === '1') return 1;
  if (value === 'infinity') {
    throw new DavError(403, 'PROPFIND with Depth: infinity is not supported here: send Depth: 0 or 1', '<D:propfind-finite-depth/>');
  }
  throw new DavError(400, 'The Depth header of a PROPFIND is 0, 1 or infinity');
}

function asksForQuota(request: PropfindRequest): boolean {
  const named = request.kind === 'prop' ? request.names : request.kind === 'allprop' ? request.include : null;
  // A propname answer lists the quota properties where they exist: that needs the figures too.
  if (named === null) return true;
  return named.some(({ namespace, name }) => isLiveProperty(namespace, name) && isQuotaProperty(name));
}

/** The account's quota from its upload limit (dav-live-properties.ts DavQuota says why); null without one. */
async function quotaOf(dav: DavExchange): Promise<DavQuota | null> {
  const { volumeLimit, volumeLeft } = await dav.context.services.uploads.allowance(dav.owner);
  if (volumeLimit === null || volumeLeft === null) return null;
  return { available: volumeLeft, used: volumeLimit - volumeLeft };
}

/**
 * The locks covering each resource of the answer, in two queries however many children:
 * the target's own (services.dav.locks.discover), and for a listing, the account's locks
 * near the target (its own, its ancestors', everything below it). A child is covered by
 * the target's deep locks (which include its ancestors' deep ones) and by the locks on
 * its own path.
 */
async function lockFinder(dav: DavExchange, target: DavResource, withChildren: boolean): Promise<(resource: DavResource) => DavLockRecord[]> {
  const { services } = dav.context;
  const own = await services.dav.locks.discover(dav.owner, target.path);
  if (!withChildren) return () => own;
  const inherited = own.filter((lock) => lock.deep);
  const near = await services.store.davLocks.near(dav.owner.id, target.path.text, services.clock());
  const rootedAt = new Map<string, DavLockRecord[]>();
  for (const lock of near) {
    if (lock.path === target.path.text) continue;
    rootedAt.set(lock.path, [...(rootedAt.get(lock.path) ?? []), lock]);
  }
  return (resource) => (resource === target ? own : [...inherited, ...(rootedAt.get(resource.path.text) ?? [])]);
}

/** The href of a lock's root: a collection unless it is the file being described (an ancestor always is one). */
function lockRootHref(dav: DavExchange, resource: DavResource, lock: DavLockRecord): string {
  const path = davPath(lock.path.split('/').filter((name) => name !== ''));
  return dav.href(path, lock.path === resource.path.text ? resource.kind !== 'file' : true);
}

/** The propstats of one resource: what was found (200), then what was not (404). */
function propstatsOf(resource: DavResource, request: PropfindRequest, sources: LiveSources, dead: DavProperty[]): string {
  let found = '';
  let missing = '';
  if (request.kind === 'propname') {
    for (const name of liveNamesOf(resource, sources, true)) found += propertyXml({ namespace: DAV, name });
    for (const property of dead) found += propertyXml(property);
  } else if (request.kind === 'allprop') {
    const shown = new Set<string>();
    for (const name of liveNamesOf(resource, sources, false)) {
      shown.add(keyOf({ namespace: DAV, name }));
      found += propertyXml({ namespace: DAV, name }, liveValueXml(resource, name, sources) ?? '');
    }
    for (const property of dead) {
      shown.add(keyOf(property));
      found += propertyXml(property, property.valueXml);
    }
    // DAV:include adds what allprop leaves out (the quota); what it names and allprop showed is not repeated.
    for (const name of request.include) {
      if (shown.has(keyOf(name))) continue;
      const value = propertyValue(resource, name, sources, dead);
      if (value === null) missing += propertyXml(name);
      else found += propertyXml(name, value);
    }
  } else {
    for (const name of request.names) {
      const value = propertyValue(resource, name, sources, dead);
      if (value === null) missing += propertyXml(name);
      else found += propertyXml(name, value);
    }
  }
  // RFC 4918 14.22: a response holds at least one propstat; an empty 200 one when nothing is there at all.
  const propstats = (found !== '' || missing === '' ? propstatXml(200, found) : '') + (missing !== '' ? propstatXml(404, missing) : '');
  return propstats;
}

/** The value of one named property as XML, live or dead; null when the resource has none. */
function propertyValue(resource: DavResource, name: PropertyName, sources: LiveSources, dead: DavProperty[]): string | null {
  if (isLiveProperty(name.namespace, name.name)) return liveValueXml(resource, name.name, sources);
  return dead.find((property) => property.namespace === name.namespace && property.name === name.name)?.valueXml ?? null;
}

function keyOf({ namespace, name }: PropertyName): string {
  return JSON.stringify([namespace, name]);
}
