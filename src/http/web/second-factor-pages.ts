import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ActiveSession } from '../../auth/session-service.js';
import type { Account } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import type { Html } from '../html.js';
import { registerSecondFactorProfile, secondFactorCardOf } from './second-factor-profile.js';
import { continueAfterPassword, registerSecondFactorSignIn } from './second-factor-sign-in.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'limits' | 'secondFactors' | 'sessions' | 'signInChallenges'>;

/**
 * TOTP and recovery codes (issue 26): the second step of password sign-in
 * (second-factor-sign-in.ts) and the set-up and changes from the profile
 * (second-factor-profile.ts).
 */
export function registerSecondFactorPages(app: FastifyInstance, context: Context): void {
  registerSecondFactorSignIn(app, context);
  registerSecondFactorProfile(app, context);
}

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
  return continueAfterPassword(context, request, reply, account, next);
}

/** The profile's two-step verification card: set up, recovery codes, turn off. */
export function secondFactorCard(context: Context, session: ActiveSession): Promise<Html | string> {
  return secondFactorCardOf(context, session);
}
