import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TotpSetup } from '../../auth/second-factor-service.js';
import type { ActiveSession } from '../../auth/session-service.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { sendPage } from './layout.js';
import { signInUrl } from './return-path.js';
import { anyCodeField, issuerOf, type Problem, problemNote, recoveryCodesList, setupInstructions, throttledCode, totpField } from './second-factor-parts.js';
import { bodyField, CSRF_FIELD, redirectTo, requireSessionForm } from './session-plugin.js';
import { PROFILE_PATH } from './sign-in-session.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'limits' | 'secondFactors' | 'sessions'>;

/** The page of the account's second factor: set-up, confirmation, new recovery codes, turning off. */
export const SECOND_FACTOR_PROFILE_PATH = '/accounts/profile/second-factor';
const SETUP_PATH = `${SECOND_FACTOR_PROFILE_PATH}/setup`;
const CONFIRM_PATH = `${SECOND_FACTOR_PROFILE_PATH}/confirm`;
const RECOVERY_PATH = `${SECOND_FACTOR_PROFILE_PATH}/recovery-codes`;
const OFF_PATH = `${SECOND_FACTOR_PROFILE_PATH}/off`;

/** The confirm form's copy of the secret its page showed, sealed (SecondFactorService.confirm). */
const SETUP_FIELD = 'setup';
const REPLACED: Problem = { status: 409, message: 'This set-up has ended or another one replaced it. Start again with a new key.' };

const csrf = (session: ActiveSession) => html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">`;

/** The forms of an account whose factor is on: new recovery codes, turning it off; each asks for a code. */
function onForms(session: ActiveSession, open: boolean): Html {
  return html`<details class="regenerate"${open ? html` open` : ''}>
<summary>New recovery codes or turn off</summary>
<form class="stack" method="post" action="${RECOVERY_PATH}">
${csrf(session)}
${anyCodeField('renew-code')}
<button class="button secondary" type="submit">Make new recovery codes</button>
</form>
<form class="stack" method="post" action="${OFF_PATH}">
${csrf(session)}
${anyCodeField('off-code')}
<button class="button danger" type="submit">Turn off two-step verification</button>
</form>
</details>`;
}

const setupButton = (session: ActiveSession, label: string, kind = 'button') => html`<form method="post" action="${SETUP_PATH}">
${csrf(session)}
<button class="${kind}" type="submit">${label}</button>
</form>`;

/** The profile's card: whether it is on, recovery codes left, the next thing to do. */
export async function secondFactorCardOf(context: Context, session: ActiveSession): Promise<Html> {
  const { secondFactors } = context.services;
  const status = await secondFactors.status(session.account.id);
  const required = secondFactors.mustHaveOne(session.account);
  let body: Html;
  if (status.totp === 'on') {
    body = html`<p><span class="badge ok">On</span> Signing in with your password also asks for a code from your authenticator app.</p>
<p>${status.recoveryCodesLeft} of 10 recovery codes left.${status.recoveryCodesLeft <= 3 ? ' Make new ones before they run out.' : ''}</p>
${onForms(session, false)}`;
  } else if (status.totp === 'pending') {
    body = html`<p><span class="badge">Not finished</span> A set-up was started but not confirmed with a code, so it does not count yet.</p>
${setupButton(session, 'Set up again with a new key')}`;
  } else {
    body = html`<p><span class="badge">Off</span> Add a code from an app on your phone to your password, so a stolen password alone does not get in.</p>
${required ? html`<p class="hint">This site requires a second factor for your account: a passkey counts too.</p>` : ''}
${setupButton(session, 'Set up two-step verification')}`;
  }
  return html`<section class="card" id="second-factor">
<h2>Two-step verification</h2>
${body}
</section>`;
}

/** Set-up from the profile, and the changes that need a code. Every form carries the session's CSRF token. */
export function registerSecondFactorProfile(app: FastifyInstance, context: Context): void {
  const { services } = context;
  const form = { config: { web: true }, preHandler: requireSessionForm(context) };

  const page = (reply: FastifyReply, status: number, title: string, body: Html) =>
    sendPage(
      reply,
      status,
      title,
      html`<section class="card narrow" id="second-factor">
<p class="crumbs"><a href="${PROFILE_PATH}">Your account</a></p>
<h1>${title}</h1>
${body}
</section>`,
    );

  /**
   * The page as the factor stands: the forms of a factor that is on, or the set-up this page
   * began (`setup`, from POST setup or carried by the confirm form). A set-up in progress
   * that this page did not begin (anyone with the password may begin one at the sign-in
   * step) is never shown: only a button that starts a new one.
   */
  const factorPage = async (reply: FastifyReply, session: ActiveSession, problem: Problem | null, setup: TotpSetup | null = null): Promise<FastifyReply> => {
    const status = await services.secondFactors.status(session.account.id);
    if (status.totp === 'on') {
      return page(
        reply,
        problem?.status ?? 200,
        'Two-step verification',
        html`${problemNote(problem)}
<p><span class="badge ok">On</span> ${status.recoveryCodesLeft} of 10 recovery codes left.</p>
${onForms(session, true)}`,
      );
    }
    if (!setup) {
      const pending = status.totp === 'pending';
      return page(
        reply,
        problem?.status ?? 200,
        'Two-step verification',
        html`${problemNote(problem)}
<p><span class="badge">${pending ? 'Not finished' : 'Off'}</span>${pending ? ' A set-up was started but not confirmed with a code, so it does not count yet.' : ''}</p>
${setupButton(session, pending ? 'Set up again with a new key' : 'Set up two-step verification')}`,
      );
    }
    return page(
      reply,
      problem?.status ?? 200,
      'Set up two-step verification',
      html`${problemNote(problem)}
${await setupInstructions(setup)}
<form class="stack" method="post" action="${CONFIRM_PATH}">
${csrf(session)}
<input type="hidden" name="${SETUP_FIELD}" value="${setup.sealed}">
${totpField('code', 'Code from the app', true)}
<button class="button" type="submit">Turn on</button>
</form>
<p class="hint">Until a code confirms it, nothing changes at sign-in. Starting again makes a new key.</p>
${setupButton(session, 'Start again with a new key', 'button secondary')}`,
    );
  };

  const session = (request: FastifyRequest) => request.webSession!;

  app.get(SECOND_FACTOR_PROFILE_PATH, { config: { web: true } }, async (request, reply) => {
    if (!request.webSession) return redirectTo(reply, signInUrl(request.url));
    return factorPage(reply, request.webSession, null);
  });

  app.post(SETUP_PATH, form, async (request, reply) => {
    // The answer shows the new secret itself (no redirect): only this page knows it.
    // A confirmed factor is never replaced: begin() gives null, and the page shows it is on.
    const setup = await services.secondFactors.begin(session(request).account, issuerOf(context));
    return factorPage(reply, session(request), null, setup);
  });

  app.post(CONFIRM_PATH, form, async (request, reply) => {
    const { account } = session(request);
    const code = bodyField(request, 'code') ?? '';
    const sealed = bodyField(request, SETUP_FIELD) ?? '';
    const checked = await throttledCode(context, request, reply, account.login, () =>
      services.secondFactors.confirm(account, code, sealed, `web:${account.login}`),
    );
    if ('problem' in checked) {
      const setup = await services.secondFactors.setupOf(account, issuerOf(context), sealed);
      return factorPage(reply, session(request), setup || checked.problem.status === 429 ? checked.problem : REPLACED, setup);
    }
    // The codes are the answer itself, never a redirect: shown this once, never in a URL.
    return page(
      reply,
      200,
      'Two-step verification is on',
      html`${recoveryCodesList(checked.ok)}
<p><a class="button" href="${PROFILE_PATH}">Done</a></p>`,
    );
  });

  app.post(RECOVERY_PATH, form, async (request, reply) => {
    const { account } = session(request);
    const code = bodyField(request, 'code') ?? '';
    const checked = await throttledCode(context, request, reply, account.login, () =>
      services.secondFactors.renewRecoveryCodes(account, code, `web:${account.login}`),
    );
    if ('problem' in checked) return factorPage(reply, session(request), checked.problem);
    return page(
      reply,
      200,
      'New recovery codes',
      html`<p class="notice ok" role="status">Your old recovery codes no longer work.</p>
${recoveryCodesList(checked.ok)}
<p><a class="button" href="${PROFILE_PATH}">Done</a></p>`,
    );
  });

  app.post(OFF_PATH, form, async (request, reply) => {
    const { account } = session(request);
    const code = bodyField(request, 'code') ?? '';
    const checked = await throttledCode(context, request, reply, account.login, async () =>
      (await services.secondFactors.turnOff(account, code, `web:${account.login}`)) ? true : null,
    );
    if ('problem' in checked) return factorPage(reply, session(request), checked.problem);
    return factorPage(reply, session(request), { status: 200, ok: true, message: 'Two-step verification is off: your password alone signs you in again.' });
  });
}
