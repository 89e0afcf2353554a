import type { FastifyRequest } from 'fastify';
import type { UploadRequestRecord } from '../../db/repositories/repositories.js';
import { errors } from '../../domain/errors.js';
import type { Account } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { linkCredentials } from '../link-credentials.js';
import { apiKeyOf, requireAccount } from '../plugins/api-auth.js';
import { SESSION_COOKIE } from '../web/session-plugin.js';
import { CSRF_HEADER } from './tus-headers.js';

/** Who sends a tus request, and through what. */
export interface TusCaller {
  account: Account;
  /** Signed in through the site (a session, not an API key): the upload's URL is on {web_url}, the page's origin. */
  viaSite: boolean;
  /**
   * Someone uploading into this upload request (issue 25), with no account: `account` is
   * the request's owner, and the caller reaches the uploads bound to this request only.
   */
  request?: UploadRequestRecord;
}

/** The caller: an API key, or a signed-in browser whose request carries its session's CSRF token. */
export async function callerOf(context: HttpContext<'accounts' | 'sessions'>, request: FastifyRequest): Promise<TusCaller> {
  if (apiKeyOf(request) !== undefined) return { account: await requireAccount(context, request), viaSite: false };
  const token = request.cookies?.[SESSION_COOKIE];
  const session = token ? await context.services.sessions.resume(token) : null;
  if (!session) throw errors.wrongApiKey();
  if (!context.services.sessions.checkCsrf(session, request.headers[CSRF_HEADER.toLowerCase()])) {
    throw errors.permissionDenied(`A request from the site must carry the page's CSRF token in ${CSRF_HEADER}`);
  }
  return { account: session.account, viaSite: true };
}

/**
 * Someone uploading into upload request `requestId` through tus: no API key, the request's
 * password in Filehaven-Share-Password or its link cookie (errorShareNotFound,
 * errorShareExpired, errorSharePassword, errorPermissionDenied when requests are off).
 */
export async function requestCallerOf(context: HttpContext<'uploadRequests'>, request: FastifyRequest, requestId: string): Promise<TusCaller> {
  const requests = context.services.uploadRequests;
  const { record, owner } = await requests.uploader(requestId, linkCredentials(request, requests.cookieName(requestId)));
  return { account: owner, viaSite: true, request: record };
}

/** The `request` key of a creation's Upload-Metadata (tus 1.0: `key base64value` pairs, comma separated); undefined when absent. */
export function requestOfMetadata(request: FastifyRequest): string | undefined {
  const header = request.headers['upload-metadata'];
  if (typeof header !== 'string') return undefined;
  for (const pair of header.split(',')) {
    const [key, value = ''] = pair.trim().split(' ');
    if (key === 'request') return Buffer.from(value, 'base64').toString('utf8');
  }
  return undefined;
}
