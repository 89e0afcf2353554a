import { lookup } from 'mime-types';
import type { DavLockRecord } from '../../db/repositories/repositories.js';
import { lastName } from '../../webdav/dav-path.js';
import { LIVE_PROPERTY_NAMES, type LivePropertyName } from '../../webdav/dav-properties.js';
import type { DavResource } from '../../webdav/dav-tree.js';
import { etagOf } from '../send-blob.js';
import { lockDiscoveryXml, supportedLockXml } from './dav-lock-xml.js';
import { escapeXml } from './dav-xml.js';

/**
 * The account's quota as RFC 4331 sees it. filehaven bounds what an account uploads per
 * rolling 24 hours (API.md 8), not what it keeps, so that volume is the quota:
 * quota-available-bytes is what is left of it now, quota-used-bytes what the window's
 * uploads (stored and in flight) took of it, and their sum is the limit, which is how
 * clients (rclone about, file managers) show a total. Every collection shows the
 * account's figures (the quota is the account's; RFC 4331 requires the properties on
 * collections and leaves files out). An account without a limit has no quota: neither
 * property is there (404 when asked for; RFC 4331 3 allows it for available bytes, and a
 * used figure of a limit that does not exist would mean nothing).
 */
export interface DavQuota {
  /** Bytes the account may still upload in the window. */
  available: number;
  /** Bytes its uploads took of the window's volume. */
  used: number;
}

/** What the live values of one resource are computed from, besides the resource. */
export interface LiveSources {
  /** When the account was created: the top's dates (the top has no row of its own). */
  topCreatedAt: number;
  /** The unexpired locks whose scope covers the resource (DAV:lockdiscovery). */
  locks: DavLockRecord[];
  /** The href of a lock's root, for DAV:lockroot. */
  lockRootHref: (lock: DavLockRecord) => string;
  /** The account's quota; null when it has none, or when no quota property was asked for. */
  quota: DavQuota | null;
}

/** The quota properties (RFC 4331): on request only, never in allprop (RFC 4918 9.1: costly, and not defined there). */
const QUOTA = new Set<LivePropertyName>(['quota-available-bytes', 'quota-used-bytes']);

/** Whether a live property is one of the quota properties. */
export function isQuotaProperty(name: LivePropertyName): boolean {
  return QUOTA.has(name);
}

/**
 * The live properties a resource has, in a fixed order: those of allprop, and with
 * `withQuota` the quota properties where they apply (collections of an account with a
 * limit).
 */
export function liveNamesOf(resource: DavResource, sources: LiveSources, withQuota: boolean): LivePropertyName[] {
  return LIVE_PROPERTY_NAMES.filter((name) => (withQuota || !QUOTA.has(name)) && liveValueXml(resource, name, sources) !== null);
}

/**
 * A live property's value as XML (escaped), or null when the resource has no such
 * property (a file's quota, a collection's length or type, the top's display name).
 */
export function liveValueXml(resource: DavResource, name: LivePropertyName, sources: LiveSources): string | null {
  const collection = resource.kind !== 'file';
  const file = resource.kind === 'file' ? resource.file : null;
  const createdAt = resource.kind === 'file' ? resource.file.createdAt : resource.kind === 'folder' ? resource.folder.createdAt : sources.topCreatedAt;
  switch (name) {
    case 'resourcetype':
      return collection ? '<D:collection/>' : '';
    case 'getcontentlength':
      return file ? String(file.size) : null;
    case 'getcontenttype':
      // From the name, as downloads and previews decide it; never sniffed.
      return file ? escapeXml(lookup(file.name) || 'application/octet-stream') : null;
    case 'getetag':
      // The ETag GET sends (the content digest): clients compare the two.
      return file ? escapeXml(etagOf(file)) : null;
    case 'getlastmodified':
      // RFC 1123 (RFC 4918 15.7), as Last-Modified. A file never changes: a new version is a new file.
      return new Date(createdAt).toUTCString();
    case 'creationdate':
      // RFC 3339 (RFC 4918 15.1), whole seconds as most clients parse them.
      return new Date(createdAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
    case 'displayname':
      return resource.kind === 'top' ? null : escapeXml(lastName(resource.path));
    case 'supportedlock':
      return supportedLockXml();
    case 'lockdiscovery':
      return lockDiscoveryXml(sources.locks, sources.lockRootHref);
    case 'quota-available-bytes':
      return collection && sources.quota ? String(sources.quota.available) : null;
    case 'quota-used-bytes':
      return collection && sources.quota ? String(sources.quota.used) : null;
  }
}
