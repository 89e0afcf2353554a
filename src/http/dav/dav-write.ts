import { sanitizeFileName, sanitizeFolderName } from '../../domain/names.js';
import { type DavPath, parentOf } from '../../webdav/dav-path.js';
import { type DavCollection, type DavResource, resourceKey } from '../../webdav/dav-tree.js';
import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';

/*
 * What the writing handlers (PUT, MKCOL, DELETE, COPY, MOVE) share: finding a resource's
 * parent collection, reading Depth and Overwrite, and removing a resource with what the
 * tree keeps of it (locks by path, dead properties by key).
 */

/** The resource at `path`, or null. */
export function resolveAt(dav: DavExchange, path: DavPath): Promise<DavResource | null> {
  return dav.context.services.dav.tree.resolve(dav.owner, path);
}

/** The resource at the request's path, or 404. */
export async function requireResource(dav: DavExchange): Promise<DavResource> {
  const resource = await resolveAt(dav, dav.path);
  if (!resource) throw new DavError(404, 'Nothing is at this path');
  return resource;
}

/** The collection a new resource at `path` goes into: 409 when it is missing or a file (RFC 4918 9.3.1, 9.7.1, 9.8.5). */
export async function parentCollection(dav: DavExchange, path: DavPath): Promise<DavCollection> {
  const parent = await resolveAt(dav, parentOf(path));
  if (!parent || parent.kind === 'file') throw new DavError(409, 'The parent collection does not exist');
  return parent;
}

/** The folder id of a collection; null for the top. */
export function folderIdOf(collection: DavCollection): string | null {
  return collection.kind === 'folder' ? collection.folder.id : null;
}

/** Whether the resource is a collection. */
export function isCollection(resource: DavResource): resource is DavCollection {
  return resource.kind !== 'file';
}

/** The Depth header as "0", "1" or "infinity" (absent: `fallback`); anything else is 400. */
export function depthOf(dav: DavExchange, fallback: '0' | '1' | 'infinity'): '0' | '1' | 'infinity' {
  const header = dav.request.headers.depth;
  if (header === undefined) return fallback;
  const value = String(header).trim().toLowerCase();
  if (value === '0' || value === '1' || value === 'infinity') return value;
  throw new DavError(400, 'The Depth header must be 0, 1 or infinity');
}

/** The Overwrite header (RFC 4918 10.6): true unless "F"; anything but "T" or "F" is 400. */
export function overwriteOf(dav: DavExchange): boolean {
  const header = dav.request.headers.overwrite;
  if (header === undefined) return true;
  const value = String(header).trim().toUpperCase();
  if (value === 'T') return true;
  if (value === 'F') return false;
  throw new DavError(400, 'The Overwrite header must be T or F');
}

/**
 * Removes a file or a folder with everything under it (the top cannot go: 403), then
 * forgets the locks at and under its path and the dead properties of all it held.
 */
export async function removeResource(dav: DavExchange, resource: DavResource): Promise<void> {
  const { services } = dav.context;
  const keys: string[] = [resource.key];
  if (resource.kind === 'top') throw new DavError(403, 'The top of the tree cannot be deleted');
  if (resource.kind === 'file') {
    await services.files.deleteOwned(dav.owner, resource.file.id);
  } else {
    const removed = await services.folders.removeTree(dav.owner, resource.folder.id);
    for (const id of removed.folders) keys.push(resourceKey.folder(id));
    for (const id of removed.files) keys.push(resourceKey.file(id));
  }
  await services.dav.locks.forget(dav.owner, resource.path);
  for (const key of new Set(keys)) await services.dav.properties.forget(dav.owner, key);
}

/** The stored folder name a shown one stands for: the tree shows "/" as "∕" and "\" as "⧵" (dav-tree.ts "Names"). */
export function storedFolderName(shown: string): string {
  return shown.replaceAll('\u2215', '/').replaceAll('\u29f5', '\\');
}

/**
 * The name a new file (or folder) at a path's last name is stored under: 400 when the
 * stored name would differ (sanitizeFileName or sanitizeFolderName would change it), so
 * what a client creates is found again at the path it named.
 */
export function storableName(shown: string, kind: 'file' | 'folder'): string {
  const wanted = kind === 'file' ? shown : storedFolderName(shown);
  const stored = kind === 'file' ? sanitizeFileName(wanted) : sanitizeFolderName(wanted);
  if (stored !== wanted) {
    throw new DavError(
      400,
      `The name “${shown}” cannot be stored as it is (it would become “${stored}”): no leading or trailing spaces, no control characters`,
    );
  }
  return stored;
}
