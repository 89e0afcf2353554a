import { STATUS_CODES } from 'node:http';
import type { WriteTarget } from '../../webdav/dav-locks.js';
import { type DavPath, davPath, isWithin, lastName } from '../../webdav/dav-path.js';
import { type DavCollection, type DavResource, resourceKey } from '../../webdav/dav-tree.js';
import { checkEntityTags, checkIfHeader } from './dav-conditions.js';
import { DavError, davErrorOf } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';
import { depthOf, folderIdOf, isCollection, overwriteOf, parentCollection, removeResource, requireResource, resolveAt, storableName } from './dav-write.js';
import { escapeXml } from './dav-xml.js';

/** COPY (RFC 4918 9.8). */
export function handleCopy(dav: DavExchange): Promise<unknown> {
  return copyOrMove(dav, 'copy');
}

/** MOVE (RFC 4918 9.9). */
export function handleMove(dav: DavExchange): Promise<unknown> {
  return copyOrMove(dav, 'move');
}

/** A member of a collection COPY that failed, for the 207 answer. */
interface Failure {
  path: DavPath;
  collection: boolean;
  status: number;
}

/**
 * COPY and MOVE within the account's tree. The Destination (dav.destination()) must be
 * another place than the source and not inside it, nor above it (the overwrite would
 * delete the source): 403; its parent must be a collection: 409. A resource at the
 * Destination is deleted first with Overwrite: T (the default), 204; with F it is 412;
 * a new one is 201. A file is copied as the API's O(1) copy, into its folder under its
 * name in one step (FilesService.copyInto), and moved with its new name in one step
 * (FilesService.place); a collection moves by one relocation under a cycle check
 * (FoldersService.relocate) and is copied folder by folder (Depth infinity, the default)
 * or alone (Depth 0), members that fail then listed in a 207. Dead properties are copied
 * by COPY and kept by MOVE (they follow ids); locks at the source go on MOVE.
 */
async function copyOrMove(dav: DavExchange, kind: 'copy' | 'move'): Promise<unknown> {
  const { services } = dav.context;
  const { owner } = dav;
  await checkIfHeader(dav);
  const source = await requireResource(dav);
  // RFC 9110 13.1: the conditions are of the target resource, the request URI (the source).
  checkEntityTags(dav, source);
  const destination = dav.destination();
  const overwrite = overwriteOf(dav);
  const depth = source.kind === 'file' ? 'infinity' : depthOf(dav, 'infinity');
  if (depth === '1' || (kind === 'move' && depth !== 'infinity')) {
    throw new DavError(400, kind === 'move' ? 'A collection moves with Depth: infinity only' : 'A collection is copied with Depth 0 or infinity');
  }
  if (source.kind === 'top') throw new DavError(403, `The top of the tree cannot be ${kind === 'copy' ? 'copied' : 'moved'}`);
  if (destination.names.length === 0) throw new DavError(403, 'The top of the tree cannot be overwritten');
  if (sameNames(destination, source.path)) throw new DavError(403, 'The source and the destination are the same');
  if (isWithin(destination, source.path)) throw new DavError(403, 'A collection cannot go into itself');
  if (isWithin(source.path, destination)) throw new DavError(403, 'The destination holds the source: overwriting it would delete the source');
  const target = await resolveAt(dav, destination);
  if (target && target.key === source.key) throw new DavError(403, 'The source and the destination are the same');
  if (target && !overwrite) throw new DavError(412, 'Something is at the destination and Overwrite is F');
  const name = storableName(lastName(destination), source.kind === 'file' ? 'file' : 'folder');
  const parent = await parentCollection(dav, destination);

  // A new name in the destination's parent, and on MOVE a name leaving the source's: a
  // depth-0 lock on either parent protects its members' names (RFC 4918 7.4).
  const writes: WriteTarget[] = [{ path: destination, deep: true, member: !target }];
  if (kind === 'move') writes.push({ path: source.path, deep: isCollection(source), member: true });
  await services.dav.locks.assertWritable(owner, writes, dav.submittedTokens());
  if (target) await removeResource(dav, target);

  const status = target ? 204 : 201;
  const folderId = folderIdOf(parent);
  if (kind === 'move') {
    if (source.kind === 'file') await services.files.place(owner, source.file.id, folderId, name);
    else await services.folders.relocate(owner, source.folder.id, folderId, name);
    await services.dav.locks.forget(owner, source.path);
    return dav.reply.code(status).send();
  }
  if (source.kind === 'file') {
    const { file } = await services.files.copyInto(owner, source.file.id, folderId, name);
    await services.dav.properties.copy(owner, source.key, resourceKey.file(file.id));
    return dav.reply.code(status).send();
  }
  const failures: Failure[] = [];
  await copyCollection(dav, source, folderId, name, davPath(destination.names, true), depth === 'infinity', failures);
  if (failures.length === 0) return dav.reply.code(status).send();
  return dav.reply.code(207).type('application/xml; charset=utf-8').send(multistatus(dav, failures));
}

/**
 * Copies a folder into `parentId` as `name`, with its dead properties; with `deep`, then
 * each of its members: files as O(1) copies under their stored names, folders the same
 * way down. A member that fails is noted and the rest go on (RFC 4918 9.8.8).
 */
async function copyCollection(
  dav: DavExchange,
  from: Extract<DavCollection, { kind: 'folder' }>,
  parentId: string | null,
  name: string,
  at: DavPath,
  deep: boolean,
  failures: Failure[],
): Promise<void> {
  const { services } = dav.context;
  const { owner } = dav;
  const folder = await services.folders.create(owner, name, parentId ?? undefined);
  await services.dav.properties.copy(owner, from.key, resourceKey.folder(folder.id));
  if (!deep) return;
  for (const child of await services.dav.tree.children(owner, from)) {
    const childPath = davPath([...at.names, lastName(child.path)], child.kind !== 'file');
    try {
      await copyMember(dav, child, folder.id, childPath, failures);
    } catch (error) {
      const refusal = davErrorOf(error, dav.href);
      if (!refusal) throw error;
      failures.push({ path: childPath, collection: child.kind !== 'file', status: refusal.status });
    }
  }
}

async function copyMember(dav: DavExchange, child: DavResource, folderId: string, at: DavPath, failures: Failure[]): Promise<void> {
  const { services } = dav.context;
  if (child.kind === 'file') {
    const { file } = await services.files.copyInto(dav.owner, child.file.id, folderId, child.file.name);
    await services.dav.properties.copy(dav.owner, child.key, resourceKey.file(file.id));
  } else if (child.kind === 'folder') {
    await copyCollection(dav, child, folderId, child.folder.name, at, true, failures);
  }
}

function sameNames(a: DavPath, b: DavPath): boolean {
  return a.names.length === b.names.length && isWithin(a, b);
}

/** The 207 of a collection COPY with failed members (RFC 4918 9.8.8, 13). */
function multistatus(dav: DavExchange, failures: Failure[]): string {
  const responses = failures
    .map(
      (failure) =>
        `<D:response><D:href>${escapeXml(dav.href(failure.path, failure.collection))}</D:href><D:status>HTTP/1.1 ${failure.status} ${STATUS_CODES[failure.status] ?? ''}</D:status></D:response>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">${responses}</D:multistatus>\n`;
}
