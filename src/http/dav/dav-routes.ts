import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Account } from '../../domain/types.js';
import { BadDavPath, type DavPath, hrefOf, parseDavPath } from '../../webdav/dav-path.js';
import { handleCopy, handleMove } from './copy-move-handler.js';
import { submittedTokensOf } from './dav-conditions.js';
import { DavError, type DavHref, davErrorOf, sendDavError } from './dav-errors.js';
import type { DavContext, DavExchange, DavHandler } from './dav-exchange.js';
import { DAV_METHODS, type DavMethod } from './dav-methods.js';
import { handleDelete } from './delete-handler.js';
import { handleGet } from './get-handler.js';
import { handleLock, handleUnlock } from './lock-handler.js';
import { handleMkcol } from './mkcol-handler.js';
import { handleOptions } from './options-handler.js';
import { handlePropfind } from './propfind-handler.js';
import { handleProppatch } from './proppatch-handler.js';
import { handlePut } from './put-handler.js';

/** Where the tree is served, below the site's own path. */
export const DAV_PREFIX = '/dav';

/** The handlers, by method (RFC 4918 class 1 and 2). */
const HANDLERS: Record<DavMethod, DavHandler> = {
  OPTIONS: handleOptions,
  PROPFIND: handlePropfind,
  PROPPATCH: handleProppatch,
  GET: handleGet,
  HEAD: handleGet,
  PUT: handlePut,
  MKCOL: handleMkcol,
  DELETE: handleDelete,
  COPY: handleCopy,
  MOVE: handleMove,
  LOCK: handleLock,
  UNLOCK: handleUnlock,
};

/** What the server says of itself on every answer (RFC 4918 10.1, 18). */
export const DAV_CLASSES = '1, 2';

/**
 * WebDAV at {base_url}/dav/ (issue 27): one tree per account, signed in with HTTP Basic
 * (the login and an API key, or the password where a password alone may sign in). One
 * handler per method (./*-handler.ts); they adapt requests to the use cases (uploads/,
 * downloads/, the files and folders services) and to webdav/ (paths, locks, properties).
 * Bodies are left unread for the handlers: PUT streams them, the others read bounded XML.
 */
export function registerDavRoutes(app: FastifyInstance, context: DavContext): void {
  if (!context.services.config.webdav) return;
  app.register(async (dav) => {
    dav.removeAllContentTypeParsers();
    dav.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    const methods = [...DAV_METHODS];
    const handler = (request: FastifyRequest, reply: FastifyReply) => serve(context, request, reply);
    dav.route({ method: methods, url: DAV_PREFIX, handler });
    dav.route({ method: methods, url: `${DAV_PREFIX}/*`, handler });
  });
}

async function serve(context: DavContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.header('DAV', DAV_CLASSES);
  reply.header('MS-Author-Via', 'DAV');
  const prefix = `${sitePath(context)}${DAV_PREFIX}`;
  const href: DavHref = (target, collection) => hrefOf(prefix, target.names, collection);
  try {
    const handler = HANDLERS[request.method as DavMethod];
    if (!handler) throw new DavError(405, `${request.method} is not a WebDAV method here`, '', { Allow: DAV_METHODS.join(', ') });
    const path = parseDavPath(treePathOf(request.url));
    // OPTIONS says what the server can do before any sign-in (clients probe with it first).
    const owner = request.method === 'OPTIONS' ? null : await signIn(context, request);
    const exchange = makeExchange(context, request, reply, owner, path, prefix, href);
    await handler(exchange);
    return reply;
  } catch (error) {
    const answer = davErrorOf(error, href);
    if (!answer) {
      request.log.error({ err: error }, 'WebDAV request failed');
      return sendDavError(reply, new DavError(500, 'Internal server error'));
    }
    if (answer.status === 401) reply.header('WWW-Authenticate', 'Basic realm="filehaven", charset="UTF-8"');
    // A refused body that was not read: the connection closes rather than drain it.
    if (!request.raw.readableEnded && hasBody(request)) reply.header('Connection', 'close');
    return sendDavError(reply, answer);
  }
}

/** The request target's path after /dav, undecoded (parseDavPath decodes each name alone). */
function treePathOf(url: string): string {
  const path = url.split('?')[0]!;
  return path.slice(DAV_PREFIX.length);
}

function hasBody(request: FastifyRequest): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/**
 * The account of the request's Basic credentials (401 with a challenge when there are
 * none or they are wrong). Over plain HTTP from another host than this one, the request
 * is refused (403) before credentials are asked for or read, unless --webdav-allow-http:
 * WebDAV sends the password with every request, and a challenge would invite the client
 * to send it in the clear.
 */
async function signIn(context: DavContext, request: FastifyRequest): Promise<Account> {
  if (request.protocol !== 'https' && !isLocal(context, request) && !context.services.config.webdavAllowHttp) {
    throw new DavError(
      403,
      'WebDAV sends your password with every request: connect over https (see docs/webdav.md), or ask the operator for --webdav-allow-http',
    );
  }
  const header = request.headers.authorization ?? '';
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) throw new DavError(401, 'Sign in with your login and an API key (or your password)');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new DavError(401, 'Sign in with your login and an API key (or your password)');
  const login = decoded.slice(0, colon);
  const secret = decoded.slice(colon + 1);
  return context.services.dav.credentials.verify(request.ip, login, secret);
}

/** Headers a reverse proxy adds: a request that carries one came through a proxy. */
const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-forwarded-proto'] as const;

/**
 * Whether the request comes from this host itself. Without --trust-proxy, a request with
 * proxy headers is no local one even from a loopback address: it is a reverse proxy on
 * this host passing on a client from elsewhere (whose hop over the network we cannot see).
 * With --trust-proxy, request.ip is already the client's address.
 */
function isLocal(context: DavContext, request: FastifyRequest): boolean {
  if (!context.services.config.trustProxy && PROXY_HEADERS.some((name) => request.headers[name] !== undefined)) return false;
  return isLoopback(request.ip);
}

function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

function makeExchange(
  context: DavContext,
  request: FastifyRequest,
  reply: FastifyReply,
  owner: Account | null,
  path: DavPath,
  prefix: string,
  href: DavHref,
): DavExchange {
  let tokens: ReadonlySet<string> | undefined;
  return {
    request,
    reply,
    context,
    // OPTIONS alone runs with no owner, and never reads it.
    owner: owner as Account,
    path,
    href,
    destination: () => destinationOf(context, request, prefix),
    submittedTokens: () => {
      tokens ??= submittedTokensOf(request.headers.if);
      return tokens;
    },
  };
}

/** The path part of the site's base URL ("" at the root of its host). */
function sitePath(context: DavContext): string {
  try {
    return new URL(context.links.baseUrl).pathname.replace(/\/+$/, '');
  } catch {
    return '';
  }
}

/**
 * The Destination header as a path of this tree (RFC 4918 10.3: an absolute URI, or an
 * absolute path). Its host is this server's when it is the request's Host or the host of
 * the site's base URL (behind a reverse proxy that passes its upstream's name as Host, as
 * nginx's proxy_pass does by default, only the latter matches), compared without case.
 */
function destinationOf(context: DavContext, request: FastifyRequest, prefix: string): DavPath {
  const header = request.headers.destination;
  if (typeof header !== 'string' || header === '') throw new DavError(400, 'A Destination header is required');
  let url: URL;
  try {
    url = new URL(header, `${request.protocol}://${request.headers.host ?? 'localhost'}`);
  } catch {
    throw new DavError(400, 'The Destination header is not a URL');
  }
  const host = request.headers.host;
  if (host && !ourHosts(context, request.protocol, host).has(url.host)) throw new DavError(502, 'The Destination is on another server');
  const path = url.pathname;
  if (path !== prefix && !path.startsWith(`${prefix}/`)) throw new DavError(502, 'The Destination is outside this WebDAV tree');
  try {
    return parseDavPath(path.slice(prefix.length));
  } catch (error) {
    if (error instanceof BadDavPath) throw new DavError(400, `Destination: ${error.message}`);
    throw error;
  }
}

/**
 * The hosts that name this server, as URL parsing writes them (lower case, no default
 * port), as the Destination's is: the request's Host and the base URL's.
 */
function ourHosts(context: DavContext, protocol: string, host: string): Set<string> {
  const hosts = new Set<string>();
  for (const url of [`${protocol}://${host}`, context.links.baseUrl]) {
    try {
      hosts.add(new URL(url).host);
    } catch {
      // Not a URL (a malformed Host, no base URL): it names nothing.
    }
  }
  return hosts;
}
