import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
    body = html`<p><span class="badge">Not finished</span> The set-up was started but not confirmed with a code, so it does not count yet.</p>
<p><a class="button" href="${SECOND_FACTOR_PROFILE_PATH}">Finish the set-up</a></p>`;
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

  /** The page as the factor stands: the set-up in progress, or the forms of a factor that is on. */
  const factorPage = async (reply: FastifyReply, session: ActiveSession, problem: Problem | null): Promise<FastifyReply> => {
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
    const setup = await services.secondFactors.pending(session.account, issuerOf(context));
    if (!setup) {
      return page(
        reply,
        problem?.status ?? 200,
        'Two-step verification',
        html`${problemNote(problem)}
<p><span class="badge">Off</span></p>
${setupButton(session, 'Set up two-step verification')}`,
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
    // A confirmed factor is never replaced: begin() leaves it, and the page shows it is on.
    await services.secondFactors.begin(session(request).account, issuerOf(context));
    return redirectTo(reply, SECOND_FACTOR_PROFILE_PATH);
  });

  app.post(CONFIRM_PATH, form, async (request, reply) => {
    const { account } = session(request);
    const code = bodyField(request, 'code') ?? '';
    const checked = await throttledCode(context, request, reply, account.login, () => services.secondFactors.confirm(account.id, code));
    if ('problem' in checked) return factorPage(reply, session(request), checked.problem);
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
    const checked = await throttledCode(context, request, reply, account.login, () => services.secondFactors.renewRecoveryCodes(account.id, code));
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
      (await services.secondFactors.turnOff(account.id, code)) ? true : null,
    );
    if ('problem' in checked) return factorPage(reply, session(request), checked.problem);
    return factorPage(reply, session(request), { status: 200, ok: true, message: 'Two-step verification is off: your password alone signs you in again.' });
  });
}
