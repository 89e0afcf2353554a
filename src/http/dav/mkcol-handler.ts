import { NameTakenError } from '../../services/sibling-names.js';
import { lastName } from '../../webdav/dav-path.js';
import { checkEntityTags, checkIfHeader } from './dav-conditions.js';
import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';
import { allowAllBut } from './dav-methods.js';
import { folderIdOf, parentCollection, resolveAt, storableName } from './dav-write.js';

/**
 * MKCOL (RFC 4918 9.3): a new folder in the parent collection. A body is 415 (we know no
 * MKCOL body); anything at the path, folder or file, is 405; a missing parent 409. The
 * name must be stored as sent (storableName), and be free among the
 * parent's folders when the row is written (FoldersService.create's unique name check).
 */
export async function handleMkcol(dav: DavExchange): Promise<unknown> {
  const { request, reply, context, owner, path } = dav;
  await checkIfHeader(dav);
  const length = Number(request.headers['content-length'] ?? 0);
  if (request.headers['transfer-encoding'] !== undefined || length > 0) throw new DavError(415, 'MKCOL takes no body');
  const existing = await resolveAt(dav, path);
  checkEntityTags(dav, existing);
  if (path.names.length === 0 || existing) throw new DavError(405, 'Something is at this path already', '', { Allow: ALLOWED });
  const name = storableName(lastName(path), 'folder');
  const parent = await parentCollection(dav, path);
  // A new member of the parent: a depth-0 lock on the parent protects its names (RFC 4918 7.4).
  await context.services.dav.locks.assertWritable(owner, [{ path, deep: false, member: true }], dav.submittedTokens());
  try {
    await context.services.folders.create(owner, name, folderIdOf(parent) ?? undefined, { uniqueName: true });
  } catch (error) {
    if (error instanceof NameTakenError) throw new DavError(405, 'Something is at this path already', '', { Allow: ALLOWED });
    throw error;
  }
  return reply.code(201).header('Location', dav.href(path, true)).send();
}

/** What a mapped resource allows (everything but MKCOL), for the 405. */
const ALLOWED = allowAllBut('MKCOL');
