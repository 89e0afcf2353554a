import { ApiError } from '../../domain/errors.js';
import type { FileRecord } from '../../domain/types.js';
import { lockNames } from '../../services/sibling-names.js';
import { lastName } from '../../webdav/dav-path.js';
import { resourceKey } from '../../webdav/dav-tree.js';
import { checkEntityTags, checkIfHeader } from './dav-conditions.js';
import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';
import { allowAllBut } from './dav-methods.js';
import { folderIdOf, parentCollection, storableName } from './dav-write.js';

/**
 * PUT (RFC 4918 9.7, RFC 9110 9.3.4): the body streams through the one upload use case
 * (uploads/uploads-service.ts) as POST /files's does, so the size limit, the upload
 * volume, the blacklist, dedup and the upload log apply, at flat memory for any size.
 * Empty files are files here. A file at the path is replaced: the old one is retired in
 * the new one's transaction (FilesService.retireWithin), its bytes released after it
 * and its dead properties carried over to the new one, 204; else 201. A body cut short leaves no file: the staging is
 * aborted and removes what it wrote.
 */
export async function handlePut(dav: DavExchange): Promise<unknown> {
  const { request, reply, context, owner, path } = dav;
  const { services } = context;
  await checkIfHeader(dav);
  // RFC 9110 14.4: a server must not apply a Content-Range of a PUT as a whole replacement.
  if (request.headers['content-range'] !== undefined) throw new DavError(400, 'Partial PUT (Content-Range) is not supported');
  if (path.names.length === 0) throw new DavError(405, 'The top of the tree is a collection', '', { Allow: ALLOW_ON_COLLECTION });
  const name = storableName(lastName(path), 'file');
  const parent = await parentCollection(dav, path);
  const existing = await services.dav.tree.child(owner, parent, name);
  // If-Match / If-None-Match (RFC 9110 13.1): "If-None-Match: *" is "only if nothing is there".
  checkEntityTags(dav, existing);
  if (existing && existing.kind !== 'file') throw new DavError(405, 'A collection is at this path', '', { Allow: ALLOW_ON_COLLECTION });
  // A new name is a new member: a Depth 0 lock on the folder guards it (RFC 4918 7.4).
  await services.dav.locks.assertWritable(owner, [{ path, deep: false, member: !existing }], dav.submittedTokens());

  const raw = request.raw;
  const gone = new AbortController();
  const onClose = () => {
    if (!raw.readableEnded) gone.abort(new Error('client disconnected during upload'));
  };
  raw.on('close', onClose);
  const length = Number(request.headers['content-length']);
  const folderId = folderIdOf(parent);
  const pathName = lastName(path);
  let replaced: FileRecord | null = null;
  let created: Awaited<ReturnType<typeof services.uploads.upload>>;
  try {
    created = await services.uploads.upload({
      owner,
      folder: folderId === null ? null : { id: folderId, ifGone: 'refuse' },
      limits: { allowEmpty: true },
      source: {
        kind: 'stream',
        declaredBytes: Number.isSafeInteger(length) && length >= 0 ? length : undefined,
        receive: async ({ stage }) => ({ staged: await stage(raw, gone.signal), name }),
      },
      // In the new file's transaction, under the folder's names lock: what the path shows
      // now (another PUT may have replaced it while this body streamed) is retired in the
      // same commit, so the last PUT to commit is what the path names, and no two
      // overlapping PUTs leave a namesake behind.
      within: async (repos, file) => {
        await lockNames(repos, { ownerId: owner.id, folderId });
        const now = await services.dav.tree.child(owner, parent, pathName, repos);
        // An ApiError: the upload use case passes refusals on as they are (anything else is a 500).
        if (now?.kind === 'folder') throw new ApiError('errorBadRequest', 405, 'A collection is at this path', { Allow: ALLOW_ON_COLLECTION });
        if (now?.kind === 'file' && now.file.id !== file.id && (await services.files.retireWithin(repos, now.file, file.createdAt))) {
          replaced = now.file;
        }
      },
    });
  } finally {
    raw.off('close', onClose);
  }
  const old = replaced as FileRecord | null;
  if (old) {
    await services.files.releaseReplaced(old);
    const oldKey = resourceKey.file(old.id);
    await services.dav.properties.copy(owner, oldKey, resourceKey.file(created.file.id));
    await services.dav.properties.forget(owner, oldKey);
  }
  // A replacement is 204 whether the file replaced is the one seen before the body or a newer one.
  const wasThere = old !== null || existing !== null;
  return reply
    .code(wasThere ? 204 : 201)
    .header('ETag', `"${created.file.sha256}"`)
    .send();
}

/** The methods a collection allows, for a 405 of PUT. */
const ALLOW_ON_COLLECTION = allowAllBut('PUT');
