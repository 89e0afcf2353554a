import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ActiveSession } from '../../auth/session-service.js';
import type { HttpContext } from '../context.js';
import type { Html } from '../html.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'sessions' | 'signInChallenges'>;

/** Passkeys (WebAuthn, issue 26): registration from the profile, sign-in. STUB: the passkey work fills it. */
export function registerPasskeyPages(_app: FastifyInstance, _context: Context): void {}

/** The "Sign in with a passkey" button of the sign-in page; '' when passkeys are off. */
export function passkeySignInOption(_context: Context, _request: FastifyRequest): Html | string {
  return '';
}

/** The profile's passkeys card: list, add, rename, remove. */
export async function passkeysCard(_context: Context, _session: ActiveSession): Promise<Html | string> {
  return '';
}
