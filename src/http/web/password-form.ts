import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActiveSession } from '../../auth/session-service.js';
import { ApiError, InputError } from '../../domain/errors.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { bodyField, CSRF_FIELD, redirectTo, setSessionCookie } from './session-plugin.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'audit' | 'clock' | 'limits' | 'sessions'>;

/** Where the change-password form posts (under the profile SPEC.md names). */
export const CHANGE_PASSWORD_PATH = '/accounts/profile/misc/password';

/** A message over the form: a failure (with its status) or the success after the redirect. */
export interface PasswordNote {
  status: number;
  ok: boolean;
  message: string;
}

/** The "Change password" card of the profile; it works without JavaScript. */
export function passwordCard(session: ActiveSession, note: PasswordNote | null): Html {
  return html`<section class="card" id="password">
<h2>Password</h2>
${note ? html`<p class="notice ${note.ok ? 'ok' : 'error'}" role="${note.ok ? 'status' : 'alert'}">${note.message}</p>` : ''}
<details class="change-password"${note && !note.ok ? html` open` : ''}>
<summary>Change your password</summary>
<form class="stack" method="post" action="${CHANGE_PASSWORD_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">
<input type="text" name="username" value="${session.account.login}" autocomplete="username" hidden>
<label for="current_password">Current password</label>
<input id="current_password" name="current_password" type="password" required maxlength="1024" autocomplete="current-password">
<label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" required minlength="8" maxlength="1024" autocomplete="new-password" aria-describedby="new-password-hint">
<p class="hint" id="new-password-hint">At least 8 characters. Every other browser signed in to this account is signed out; your API key stays.</p>
<label for="new_password_again">New password again</label>
<input id="new_password_again" name="new_password_again" type="password" required minlength="8" maxlength="1024" autocomplete="new-password">
<button class="button" type="submit">Change password</button>
</form>
</details>
</section>`;
}

/** "login must be ..." → "Login must be ...". */
const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;

/**
 * The form's POST (CSRF checked before): the current password is checked like a sign-in
 * (the same per-address and per-login limit, so a borrowed session cannot guess it), the
 * change is audited like the CLI's set-password, every session of the account ends and
 * this browser gets a new one. Returns the failure to show, or null when the redirect
 * to the profile has been sent.
 */
export async function changePassword(context: Context, request: FastifyRequest, reply: FastifyReply, session: ActiveSession): Promise<PasswordNote | null> {
  const { services } = context;
  const { account } = session;
  const current = bodyField(request, 'current_password') ?? '';
  const next = bodyField(request, 'new_password') ?? '';
  if (next !== (bodyField(request, 'new_password_again') ?? '')) {
    return { status: 400, ok: false, message: 'The two new passwords differ. Your password was not changed.' };
  }
  try {
    await services.limits.signIn.attempt(request.ip, account.login, () => services.accounts.changePassword(account, current, next));
  } catch (error) {
    if (error instanceof InputError) return { status: 400, ok: false, message: `${sentence(error.message)} Your password was not changed.` };
    if (!(error instanceof ApiError && error.code === 'errorWrongCredentials')) throw error;
    if (error.status === 429) {
      reply.headers(error.headers);
      return { status: 429, ok: false, message: 'Too many wrong passwords. Wait a minute, then try again.' };
    }
    return { status: 401, ok: false, message: 'The current password is wrong. Your password was not changed.' };
  }
  // The same trail as `filehaven accounts set-password`; never the password itself.
  await services.audit.record({
    actor: `web:${account.login}`,
    action: 'accounts.set-password',
    object: `account:${account.login}`,
    details: `id=${account.id} by the account itself`,
  });
  const fresh = await services.sessions.start(account.id);
  setSessionCookie(request, reply, context, fresh.token, fresh.expiresAt);
  redirectTo(reply, '/accounts/profile/misc?changed=password#password');
  return null;
}
