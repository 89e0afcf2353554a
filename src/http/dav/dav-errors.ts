import type { FastifyReply } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { LockedError } from '../../webdav/dav-locks.js';
import { BadDavPath, type DavPath } from '../../webdav/dav-path.js';
import { BadXml, escapeXml } from './dav-xml.js';

/** A WebDAV answer other than success: a status, a message, and the RFC 4918 condition element when one applies. */
export class DavError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The body of a DAV:error element ("<D:lock-token-submitted>...</...>"), '' for none. */
    readonly conditionXml = '',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * Which WebDAV status an API refusal of the upload, files and folders use cases becomes
 * (issue 27): too large for the file size limit 413, past the upload volume 507
 * (Insufficient Storage), blacklisted 403, a folder gone 409, wrong credentials 401,
 * too many attempts 429; the Atom code's message is the body either way.
 */
function statusOf(error: ApiError): number {
  switch (error.code) {
    case 'errorFileSize':
      return 413;
    case 'errorUploadLimit':
      return 507;
    case 'errorFileInBlackList':
      return 403;
    case 'errorFolderNotFound':
      return 409;
    case 'errorFileNotFound':
      return 404;
    default:
      return error.status;
  }
}

/** The URL path of a tree path in answers (DavExchange.href): the tree's prefix, percent-encoded names. */
export type DavHref = (path: DavPath, collection: boolean) => string;

/**
 * The error a handler threw, as a DavError; null for one that is no refusal (a 500, logged
 * by the caller). `href` writes the 423's lock roots as URL paths of the tree (RFC 4918
 * 14.7: a DAV:href is a URL, as in every other answer).
 */
export function davErrorOf(error: unknown, href: DavHref): DavError | null {
  if (error instanceof DavError) return error;
  if (error instanceof BadDavPath || error instanceof BadXml) return new DavError(400, error.message);
  if (error instanceof LockedError) {
    // A lock root's kind is not known here: a collection's href without its "/" still names it.
    const hrefs = error.lockRoots.map((root) => `<D:href>${escapeXml(href(root, root.slash))}</D:href>`).join('');
    return new DavError(423, 'The resource is locked', `<D:${error.condition}>${hrefs}</D:${error.condition}>`);
  }
  if (error instanceof ApiError) return new DavError(statusOf(error), error.message, '', error.headers);
  return null;
}

/**
 * Sends a DavError: a DAV:error body when it names a condition (RFC 4918 16), else the
 * message as plain text, which is what file managers show.
 */
export function sendDavError(reply: FastifyReply, error: DavError): FastifyReply {
  reply.code(error.status).headers(error.headers);
  if (error.conditionXml !== '') {
    return reply
      .type('application/xml; charset=utf-8')
      .send(
        `<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:">${error.conditionXml}<D:responsedescription>${escapeXml(error.message)}</D:responsedescription></D:error>\n`,
      );
  }
  return reply.type('text/plain; charset=utf-8').send(`${error.message}\n`);
}
