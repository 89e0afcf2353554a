import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ActiveSession } from '../../auth/session-service.js';
import type { Account } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import type { Html } from '../html.js';
import { startWebSession } from './sign-in-session.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'limits' | 'sessions' | 'signInChallenges'>;

/** TOTP and recovery codes (issue 26): the second step of sign-in, set-up from the profile. STUB: the TOTP work fills it. */
export function registerSecondFactorPages(_app: FastifyInstance, _context: Context): void {}

/**
 * What follows a right password on the sign-in form: the second step when the account has
 * a second factor (or must set one up), else the session at once.
 */
export function afterPasswordSignIn(
  context: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  account: Account,
  next: string | null,
): Promise<FastifyReply> {
  return startWebSession(context, request, reply, account.id, next);
}

/** The profile's two-step verification card: set up, recovery codes, turn off. */
export async function secondFactorCard(_context: Context, _session: ActiveSession): Promise<Html | string> {
  return '';
}
