import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Account } from '../../domain/types.js';
import type { DavPath } from '../../webdav/dav-path.js';
import type { HttpContext } from '../context.js';
import type { DavHref } from './dav-errors.js';

/** The services the WebDAV handlers call. */
export type DavContext = HttpContext<'dav' | 'uploads' | 'files' | 'folders' | 'downloads' | 'store' | 'clock' | 'config' | 'accounts' | 'limits' | 'metrics'>;

/** One WebDAV request as its handler sees it: who, which path, and how to answer. */
export interface DavExchange {
  request: FastifyRequest;
  reply: FastifyReply;
  context: DavContext;
  /** The signed-in account whose tree this is. */
  owner: Account;
  /** The request's path in the tree. */
  path: DavPath;
  /** The URL path a tree path has in answers (DAV:href), with "/" after a collection. */
  href: DavHref;
  /**
   * The Destination header of COPY and MOVE as a tree path: 400 when missing or
   * malformed, 502 when it names another server or a place outside this tree (RFC 4918 9.8.5).
   */
  destination(): DavPath;
  /** The lock tokens the request submitted in its If header (for the lock checks). */
  submittedTokens(): ReadonlySet<string>;
}

/** One method's handler: it answers through `dav.reply`, or throws a DavError or ApiError. */
export type DavHandler = (dav: DavExchange) => Promise<unknown>;
