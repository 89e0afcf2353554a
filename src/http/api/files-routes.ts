import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sqlDateTime } from '../../domain/dates.js';
import { errors } from '../../domain/errors.js';
import type { ExpiresIn } from '../../domain/expiry.js';
import type { FileRecord } from '../../domain/types.js';
import { entryEl, linkEl, textEl } from '../atom.js';
import type { HttpContext } from '../context.js';
import { expiresHeaders } from '../expires-header.js';
import { receiveSingleFile } from '../multipart-upload.js';
import { requireAccount, requirePremium } from '../plugins/api-auth.js';
import { sendAtom } from '../plugins/atom-reply.js';
import { apiRoute, type MethodTable, refRoute } from '../plugins/method-dispatch.js';
import { createdFileEntry } from './file-entries.js';
import { formField } from './form.js';
import { listFilesHandler } from './listing-routes.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'directLinks' | 'files' | 'listing' | 'uploads'>;

/** A file's expiry beside SPEC's unchanged body (issue 25); none for a file that never expires. */
function expiresHeader(reply: FastifyReply, file: FileRecord): void {
  reply.headers(expiresHeaders(file));
}

/** Multipart framing around the file: boundaries, part headers, small fields. */
const MULTIPART_SLACK = 1024 * 1024;

/**
 * The file routes of SPEC.md: upload, details, direct link, copy, and the owner's
 * DELETE (API.md 1). `/files/<ref>` carries `<id>`, `<id>;DirectLink` (`;` raw or as
 * %3B) and the `copy:<id>` alias, so the ref is parsed here rather than by the router.
 */
export function registerFileRoutes(app: FastifyInstance, context: Context): void {
  const { services, links } = context;

  const upload = async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > services.config.maxFileSize + MULTIPART_SLACK) {
      // Refuse before reading; the body is not drained, so the connection is closed.
      reply.header('Connection', 'close');
      throw errors.fileSize(services.config.maxFileSize);
    }
    // The upload volume (API.md 8) is taken before the body is read: a refusal then closes
    // the connection rather than drain the body. Once reading, the error handler closes it
    // when the body was not read to its end.
    let reading = false;
    const { file, deleteSecret } = await services.uploads
      .upload({
        owner: account,
        folder: null,
        source: {
          kind: 'stream',
          declaredBytes: Number.isFinite(declared) ? declared : undefined,
          receive: async ({ stage, discard }) => {
            reading = true;
            // `expires_in` (issue 25) may come before or after the file part: checked as it is read.
            let expiresIn: ExpiresIn | undefined;
            const received = await receiveSingleFile(request.raw, stage, discard, (name, value) => {
              if (name !== 'expires_in') return;
              if (expiresIn !== undefined) throw errors.wrongParameters('expires_in is given more than once');
              expiresIn = services.uploads.expiresIn(value);
            });
            return { staged: received.staged, name: received.filename, expiresIn };
          },
        },
      })
      .catch((error: unknown) => {
        if (!reading) reply.header('Connection', 'close');
        throw error;
      });
    // The delete link is a secret, shown this once: no cache may keep it.
    reply.header('Cache-Control', 'no-store');
    expiresHeader(reply, file);
    return sendAtom(context, request, reply, 201, 'File upload result', [entryEl(...createdFileEntry(links, file, deleteSecret, 'self'))]);
  };

  const copy = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const { file, deleteSecret } = await services.files.copy(account, id);
    reply.header('Cache-Control', 'no-store');
    // A copy gets the server's default expiry (--file-expiry-default), told as an upload's is.
    expiresHeader(reply, file);
    return sendAtom(context, request, reply, 201, 'File copy', [entryEl(...createdFileEntry(links, file, deleteSecret, 'related'))]);
  };

  const details = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    await requirePremium(context, request);
    const file = await services.files.visible(id);
    expiresHeader(reply, file);
    return sendAtom(context, request, reply, 200, 'File Full info', [
      entryEl(
        textEl('id', file.id),
        textEl('title', file.name),
        textEl('ed:status', file.status),
        linkEl(['href', links.download(file)], ['rel', 'enclosure'], ['length', file.size]),
      ),
    ]);
  };

  const directLink = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const { file, token } = await services.directLinks.directLink(account, id);
    // The signed link downloads on the account's traffic: no cache may keep it (issue 14).
    reply.header('Cache-Control', 'no-store');
    return sendAtom(context, request, reply, 200, 'File info', [
      entryEl(textEl('id', file.id), textEl('title', file.name), linkEl(['href', links.direct(file, token)], ['rel', 'enclosure'], ['length', file.size])),
    ]);
  };

  const remove = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const file = await services.files.deleteOwned(account, id);
    return sendAtom(context, request, reply, 200, 'File delete', [
      entryEl(textEl('id', file.id), textEl('title', file.name), textEl('ed:status', file.status)),
    ]);
  };

  const changeExpiry = (id: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const account = await requireAccount(context, request);
    const file = await services.files.setExpiry(account, id, formField(request, 'expires_in'));
    expiresHeader(reply, file);
    return sendAtom(context, request, reply, 200, 'File expiry', [
      entryEl(textEl('id', file.id), textEl('title', file.name), textEl('ed:expires', sqlDateTime(file.expiresAt))),
    ]);
  };

  const uploadTable: MethodTable = { POST: upload };
  // GET only on /files: /file is the upload alias of SPEC.md, the listing is our extension.
  apiRoute(app, '/files', { ...uploadTable, GET: listFilesHandler(context) }, { streamBody: true });
  apiRoute(app, '/file', uploadTable, { streamBody: true });

  // A suffix is no part of a copy reference: the whole of it is the (then unknown) id.
  refRoute(app, '/files/copy/:id', (id, suffix) => ({ POST: copy(suffix === undefined ? id : `${id};${suffix}`) }));
  refRoute(app, '/files/:ref', (id, suffix) => {
    if (suffix === undefined && id.startsWith('copy:')) return { POST: copy(id.slice('copy:'.length)) };
    if (suffix === undefined) return { GET: details(id), DELETE: remove(id) };
    if (suffix === 'expiry') return { PUT: changeExpiry(id) };
    return suffix === 'DirectLink' ? { GET: directLink(id) } : null;
  });
}
