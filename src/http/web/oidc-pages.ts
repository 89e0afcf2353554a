import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ActiveSession } from '../../auth/session-service.js';
import type { HttpContext } from '../context.js';
import type { Html } from '../html.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'sessions' | 'signInChallenges'>;

/** Single sign-on through OpenID Connect (issue 26): /signin/oidc and its callback. STUB: the OIDC work fills it. */
export function registerOidcPages(_app: FastifyInstance, _context: Context): void {}

/** The "Sign in with <name>" button of the sign-in page; '' when single sign-on is off. */
export function oidcSignInOption(_context: Context, _request: FastifyRequest): Html | string {
  return '';
}

/** Whether the sign-in page shows the password form to this request (`--oidc-only` hides it). */
export function passwordSignInShown(_context: Context, _request: FastifyRequest): boolean {
  return true;
}

/** The profile's card of linked single sign-on identities; '' when single sign-on is off. */
export async function identitiesCard(_context: Context, _session: ActiveSession): Promise<Html | string> {
  return '';
}
