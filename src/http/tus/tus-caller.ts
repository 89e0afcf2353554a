import type { FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.js';
import type { Account } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { apiKeyOf, requireAccount } from '../plugins/api-auth.js';
import { SESSION_COOKIE } from '../web/session-plugin.js';
import { CSRF_HEADER } from './tus-headers.js';

/** Who sends a tus request, and through what. */
export interface TusCaller {
  account: Account;
  /** Signed in through the site (a session, not an API key): the upload's URL is on {web_url}, the page's origin. */
  viaSite: boolean;
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
