import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Account } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { sendPage } from './layout.js';
import { RETURN_FIELD } from './return-path.js';
import { issuerOf, type Problem, problemNote, recoveryCodesList, setupInstructions, throttledCode, totpField } from './second-factor-parts.js';
import { bodyField, CSRF_FIELD, cookieOptions, PRE_SESSION_COOKIE, preSessionToken, redirectTo } from './session-plugin.js';
import { startWebSession } from './sign-in-session.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'limits' | 'secondFactors' | 'sessions' | 'signInChallenges'>;

export const SECOND_FACTOR_PATH = '/signin/second-factor';
export const SECOND_FACTOR_SETUP_PATH = '/signin/second-factor/setup';
const CONTINUE_PATH = `${SECOND_FACTOR_SETUP_PATH}/continue`;

/** The browser's half of a sign-in waiting for its second factor: the challenge's value. */
const CHALLENGE_COOKIE = 'fh_second_factor';
const CODE_TTL_MS = 5 * 60_000;
const SETUP_TTL_MS = 15 * 60_000;
/** Wrong codes one password sign-in allows before the password must be typed again. */
export const MAX_WRONG_CODES = 5;

/** What the challenge keeps between the password and the code. */
interface Pending {
  /** Where to go once signed in (a checked path of this site), or null for the profile. */
  next: string | null;
  /** For the throttle's per-login counter. */
  login: string;
  wrong: number;
  /** Set-up only: the code confirmed the new factor, the recovery codes were shown. */
  confirmed?: boolean;
  /** Set-up only: the secret this set-up made, sealed; the only one it shows or confirms. */
  sealedSecret?: string;
}

type Kind = 'second-factor' | 'second-factor-setup';

const challengeCookieOptions = (request: FastifyRequest, context: Context) => ({ ...cookieOptions(request, context.links), path: '/signin' });

/**
 * After a right password: the second step when the account has TOTP; a set-up step when
 * `--second-factor-required` covers it and it has neither TOTP nor a passkey; else the
 * session at once. The password's success is kept server-side (a sign-in challenge, any
 * server can finish it), the browser holds only its random value in a short-lived cookie.
 */
export async function continueAfterPassword(
  context: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  account: Account,
  next: string | null,
): Promise<FastifyReply> {
  const { secondFactors, signInChallenges } = context.services;
  let kind: Kind | null = null;
  if ((await secondFactors.status(account.id)).totp === 'on') kind = 'second-factor';
  // A password sign-in the rule covers needs a code: passkeys sign in by themselves, not after a password.
  else if (secondFactors.mustHaveOne(account)) kind = 'second-factor-setup';
  if (kind === null) return startWebSession(context, request, reply, account.id, next);
  const ttl = kind === 'second-factor' ? CODE_TTL_MS : SETUP_TTL_MS;
  const { value } = await signInChallenges.issue<Pending>(kind, account.id, { next, login: account.login, wrong: 0 }, ttl);
  reply.setCookie(CHALLENGE_COOKIE, value, { ...challengeCookieOptions(request, context), maxAge: ttl / 1000 });
  return redirectTo(reply, kind === 'second-factor' ? SECOND_FACTOR_PATH : SECOND_FACTOR_SETUP_PATH);
}

/** The second step of password sign-in: a code from the app or a recovery code; or the required set-up. */
export function registerSecondFactorSignIn(app: FastifyInstance, context: Context): void {
  const { services } = context;

  // The pre-session of the sign-in form carries on: its CSRF token guards these forms too.
  const csrf = (request: FastifyRequest, reply: FastifyReply) =>
    html`<input type="hidden" name="${CSRF_FIELD}" value="${preSessionToken(context, request, reply)}">`;
  const formValid = (request: FastifyRequest) => services.sessions.checkPreSessionCsrf(request.cookies[PRE_SESSION_COOKIE], bodyField(request, CSRF_FIELD));

  const peek = (kind: Kind, request: FastifyRequest) => services.signInChallenges.peek<Pending>(kind, request.cookies[CHALLENGE_COOKIE]);

  const signInAgainHref = (next: string | null) => (next ? `/signin?${RETURN_FIELD}=${encodeURIComponent(next)}` : '/signin');

  /** The sign-in in progress has ended (expired, finished, too many wrong codes): back to the password. */
  const ended = (request: FastifyRequest, reply: FastifyReply, status: number, message: string, next: string | null = null) => {
    reply.clearCookie(CHALLENGE_COOKIE, challengeCookieOptions(request, context));
    return sendPage(
      reply,
      status,
      'Sign in again',
      html`<section class="card narrow">
<h1>Sign in again</h1>
<p class="notice error" role="alert">${message}</p>
<p><a class="button" href="${signInAgainHref(next)}">Sign in</a></p>
</section>`,
    );
  };
  const EXPIRED = 'This sign-in has expired or has already ended. Sign in again with your password.';

  /** A wrong code: counted on the challenge; past the limit the challenge is gone and the password is asked again. */
  const wrongCode = async (
    kind: Kind,
    request: FastifyRequest,
    reply: FastifyReply,
    problem: Problem,
    show: (problem: Problem) => FastifyReply | Promise<FastifyReply>,
  ) => {
    const challenge = await peek(kind, request);
    if (!challenge) return ended(request, reply, 403, EXPIRED);
    if (problem.status === 429) return show(problem);
    // Read, then written back: two parallel wrong codes may count once here. The bound that
    // matters holds anyway: every code counts on the login's throttle (SignInThrottle.attemptCode).
    const wrong = challenge.payload.wrong + 1;
    if (wrong >= MAX_WRONG_CODES) {
      await services.signInChallenges.take(kind, request.cookies[CHALLENGE_COOKIE]);
      return ended(request, reply, 401, 'Too many wrong codes for this sign-in. Sign in again with your password.', challenge.payload.next);
    }
    await services.signInChallenges.update(challenge, { ...challenge.payload, wrong });
    return show(problem);
  };

  // ---- The code of an account with TOTP ----

  const codePage = (request: FastifyRequest, reply: FastifyReply, problem: Problem | null) =>
    sendPage(
      reply,
      problem?.status ?? 200,
      'Two-step verification',
      html`<section class="card narrow">
<h1>Two-step verification</h1>
${problemNote(problem)}
<form class="stack" method="post" action="${SECOND_FACTOR_PATH}">
${csrf(request, reply)}
${totpField('code', 'The 6-digit code from your authenticator app', true)}
<button class="button" type="submit">Verify</button>
</form>
<details>
<summary>Lost your phone? Use a recovery code</summary>
<form class="stack" method="post" action="${SECOND_FACTOR_PATH}">
${csrf(request, reply)}
<label for="recovery-code">Recovery code</label>
<input id="recovery-code" name="code" required maxlength="32" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="xxxxx-xxxxx">
<button class="button secondary" type="submit">Use recovery code</button>
</form>
</details>
<p class="meta"><a href="/signin">Cancel</a></p>
</section>`,
    );

  app.get(SECOND_FACTOR_PATH, { config: { web: true } }, async (request, reply) => {
    if (!(await peek('second-factor', request))) return ended(request, reply, 403, EXPIRED);
    return codePage(request, reply, null);
  });

  app.post(SECOND_FACTOR_PATH, { config: { web: true } }, async (request, reply) => {
    if (!formValid(request))
      return codePage(request, reply, { status: 403, message: 'This form has expired or did not come from this site. Please try again.' });
    const challenge = await peek('second-factor', request);
    if (!challenge || challenge.accountId === null) return ended(request, reply, 403, EXPIRED);
    const accountId = challenge.accountId;
    // Disabled since the password was typed: no code is looked at.
    if (!(await services.accounts.activeAccount(accountId))) return ended(request, reply, 403, EXPIRED);
    const code = bodyField(request, 'code') ?? '';
    const checked = await throttledCode(context, request, reply, challenge.payload.login, () => services.secondFactors.verify(accountId, code));
    if ('problem' in checked) return wrongCode('second-factor', request, reply, checked.problem, (problem) => codePage(request, reply, problem));
    // Single use: of two requests with right codes (two tabs, two servers), one signs in.
    const taken = await services.signInChallenges.take<Pending>('second-factor', request.cookies[CHALLENGE_COOKIE]);
    if (!taken) return ended(request, reply, 403, EXPIRED);
    reply.clearCookie(CHALLENGE_COOKIE, challengeCookieOptions(request, context));
    return startWebSession(context, request, reply, accountId, taken.payload.next);
  });

  // ---- The set-up `--second-factor-required` asks of an account without a second factor ----

  /**
   * The set-up step shows only the secret this set-up made (kept sealed in its challenge):
   * a new one the first time, or when another set-up has replaced it since. An unfinished
   * set-up begun elsewhere (by anyone with the password) is replaced, never shown.
   */
  const setupPage = async (request: FastifyRequest, reply: FastifyReply, account: Account, problem: Problem | null): Promise<FastifyReply> => {
    const challenge = await peek('second-factor-setup', request);
    if (!challenge) return ended(request, reply, 403, EXPIRED);
    const held = challenge.payload.sealedSecret;
    let setup = held === undefined ? null : await services.secondFactors.setupOf(account, issuerOf(context), held);
    if (!setup) {
      setup = await services.secondFactors.begin(account, issuerOf(context));
      if (!setup || !(await services.signInChallenges.update(challenge, { ...challenge.payload, sealedSecret: setup.sealed })))
        return ended(request, reply, 403, EXPIRED);
    }
    return sendPage(
      reply,
      problem?.status ?? 200,
      'Set up two-step verification',
      html`<section class="card narrow">
<h1>Set up two-step verification</h1>
<p>This site asks every ${services.config.secondFactorRequired === 'operators' ? 'operator' : 'account'} for a second step at sign-in: a code from an app on your phone, besides your password.</p>
${problemNote(problem)}
${await setupInstructions(setup)}
<form class="stack" method="post" action="${SECOND_FACTOR_SETUP_PATH}">
${csrf(request, reply)}
${totpField('code', 'Code from the app')}
<button class="button" type="submit">Turn on and continue</button>
</form>
<p class="meta"><a href="/signin">Cancel</a></p>
</section>`,
    );
  };

  const setupAccount = async (request: FastifyRequest) => {
    const challenge = await peek('second-factor-setup', request);
    if (!challenge || challenge.accountId === null || challenge.payload.confirmed) return null;
    const account = await services.accounts.activeAccount(challenge.accountId);
    return account ? { challenge, account } : null;
  };

  app.get(SECOND_FACTOR_SETUP_PATH, { config: { web: true } }, async (request, reply) => {
    const found = await setupAccount(request);
    if (!found) return ended(request, reply, 403, EXPIRED);
    return setupPage(request, reply, found.account, null);
  });

  app.post(SECOND_FACTOR_SETUP_PATH, { config: { web: true } }, async (request, reply) => {
    const found = await setupAccount(request);
    if (!found) return ended(request, reply, 403, EXPIRED);
    const { challenge, account } = found;
    if (!formValid(request))
      return setupPage(request, reply, account, { status: 403, message: 'This form has expired or did not come from this site. Please try again.' });
    const code = bodyField(request, 'code') ?? '';
    const checked = await throttledCode(context, request, reply, account.login, () =>
      services.secondFactors.confirm(account, code, challenge.payload.sealedSecret ?? '', `web:${account.login}`),
    );
    if ('problem' in checked)
      return wrongCode('second-factor-setup', request, reply, checked.problem, (problem) => setupPage(request, reply, account, problem));
    await services.signInChallenges.update(challenge, { ...challenge.payload, confirmed: true });
    return sendPage(
      reply,
      200,
      'Two-step verification is on',
      html`<section class="card narrow">
<h1>Two-step verification is on</h1>
${recoveryCodesList(checked.ok)}
<form class="stack" method="post" action="${CONTINUE_PATH}">
${csrf(request, reply)}
<button class="button" type="submit">I saved them: continue</button>
</form>
</section>`,
    );
  });

  app.post(CONTINUE_PATH, { config: { web: true } }, async (request, reply) => {
    if (!formValid(request)) return ended(request, reply, 403, 'This form has expired or did not come from this site. Sign in again.');
    const challenge = await peek('second-factor-setup', request);
    // Only a confirmed set-up continues: the session starts with the second factor in place.
    if (!challenge?.payload.confirmed || challenge.accountId === null) return ended(request, reply, 403, EXPIRED);
    const taken = await services.signInChallenges.take<Pending>('second-factor-setup', request.cookies[CHALLENGE_COOKIE]);
    if (!taken) return ended(request, reply, 403, EXPIRED);
    reply.clearCookie(CHALLENGE_COOKIE, challengeCookieOptions(request, context));
    return startWebSession(context, request, reply, challenge.accountId, taken.payload.next);
  });
}
