import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpContext } from '../context.js';
import { cookieOptions, PRE_SESSION_COOKIE, redirectTo, SESSION_COOKIE, setSessionCookie } from './session-plugin.js';

/** Where a browser lands after signing in or up. */
export const PROFILE_PATH = '/accounts/profile/misc';

/**
 * The last step of every way in (password, password and second factor, single sign-on, a
 * passkey, sign-up): a new session (a new token, never the one the browser sent), and on to
 * the page that asked for the sign-in (a checked path of this site, `next`), else the profile.
 */
export async function startWebSession(
  context: HttpContext<'sessions' | 'clock'>,
  request: FastifyRequest,
  reply: FastifyReply,
  accountId: number,
  next: string | null,
): Promise<FastifyReply> {
  const session = await context.services.sessions.start(accountId, request.cookies[SESSION_COOKIE]);
  setSessionCookie(request, reply, context, session.token, session.expiresAt);
  reply.clearCookie(PRE_SESSION_COOKIE, cookieOptions(request, context.links));
  return redirectTo(reply, next ?? PROFILE_PATH);
}
