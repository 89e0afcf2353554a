import { checkEntityTags, checkIfHeader } from './dav-conditions.js';
import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';
import { depthOf, removeResource, resolveAt } from './dav-write.js';

/**
 * DELETE (RFC 4918 9.6): a file as its owner deletes it; a collection with everything
 * under it (FoldersService.removeTree), which only Depth: infinity may ask for (400
 * otherwise). The top stays (403). What is gone loses its locks and dead properties. 204.
 * If-Match / If-None-Match are checked against it (412); the name leaves its parent, so a
 * depth-0 lock on the parent stands in the way too (RFC 4918 7.4).
 */
export async function handleDelete(dav: DavExchange): Promise<unknown> {
  await checkIfHeader(dav);
  const resource = await resolveAt(dav, dav.path);
  checkEntityTags(dav, resource);
  if (!resource) throw new DavError(404, 'Nothing is at this path');
  if (resource.kind === 'top') throw new DavError(403, 'The top of the tree cannot be deleted');
  if (resource.kind === 'folder' && depthOf(dav, 'infinity') !== 'infinity') throw new DavError(400, 'A collection is deleted with Depth: infinity only');
  await dav.context.services.dav.locks.assertWritable(
    dav.owner,
    [{ path: resource.path, deep: resource.kind === 'folder', member: true }],
    dav.submittedTokens(),
  );
  await removeResource(dav, resource);
  return dav.reply.code(204).send();
}
