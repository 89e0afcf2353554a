import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ActiveSession } from '../../auth/session-service.js';
import { money } from '../../domain/money.js';
import { type Account, premiumState } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { browserScript, registerStaticScript } from './browser-scripts.js';
import { humanDate, humanSize } from './format.js';
import { sendPage } from './layout.js';
import { identitiesCard } from './oidc-pages.js';
import { passkeysCard } from './passkey-pages.js';
import { CHANGE_PASSWORD_PATH, changePassword, type PasswordNote, passwordCard } from './password-form.js';
import { signInUrl } from './return-path.js';
import { secondFactorCard } from './second-factor-pages.js';
import { bodyField, CSRF_FIELD, redirectTo, requireSessionForm } from './session-plugin.js';
import { PROFILE_PATH } from './sign-in-session.js';
import { registerUploaderConfigs, uploadersCard } from './uploader-configs.js';
import { usageCard, usageOf } from './usage-section.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'audit' | 'clock' | 'config' | 'limits' | 'oidc' | 'passkeys' | 'secondFactors' | 'sessions' | 'signInChallenges'>;

/** The copy button's script, bundled from browser/profile.ts. */
const script = browserScript('profile');

const DAY_MS = 86_400_000;
const GiB = 1024 ** 3;

/** Where the regenerate-key form posts. */
export const REGENERATE_KEY_PATH = `${PROFILE_PATH}/regenerate-key`;

/**
 * The scale of the traffic bar. The store keeps only the traffic left, not how much was
 * granted, so the bar is drawn against the next round amount (1, 2, 5 × 10ⁿ GiB) and
 * the page prints that end of the scale.
 */
export function trafficScale(bytes: number): number {
  for (let power = 1; ; power *= 10) {
    for (const step of [1, 2, 5]) if (bytes <= step * power * GiB) return step * power * GiB;
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The premium part: state, days left as a bar over the period, traffic left as a bar. */
function premiumSection(account: Account, now: number): Html {
  const state = premiumState(account, now);
  let period: Html;
  if (state === 'Active' && account.premiumStart !== null && account.premiumEnd !== null) {
    const totalDays = Math.max(1, Math.ceil((account.premiumEnd - account.premiumStart) / DAY_MS));
    const daysLeft = Math.min(totalDays, Math.ceil((account.premiumEnd - now) / DAY_MS));
    period = html`<p><span class="badge ok">Active</span> until ${humanDate(account.premiumEnd)} · ${plural(daysLeft, 'day')} left</p>
<progress class="bar" max="${totalDays}" value="${daysLeft}" aria-label="Premium days left">${daysLeft} of ${totalDays} days left</progress>`;
  } else if (state === 'Expired' && account.premiumEnd !== null) {
    period = html`<p><span class="badge">Expired</span> on ${humanDate(account.premiumEnd)}. Direct links need an active premium period.</p>`;
  } else {
    period = html`<p><span class="badge">Not premium</span> Premium periods are granted by the operator and bring direct download links.</p>`;
  }
  const scale = trafficScale(account.trafficLeft);
  return html`<section class="card">
<h2>Premium</h2>
${period}
<p class="bar-label"><span>Traffic left</span><strong>${humanSize(account.trafficLeft)}</strong></p>
<meter class="bar" min="0" max="${scale}" low="${Math.floor(scale / 10)}" optimum="${scale}" value="${account.trafficLeft}" aria-label="Premium traffic left">${humanSize(account.trafficLeft)}</meter>
<p class="scale"><span>0</span><span>${humanSize(scale)}</span></p>
</section>`;
}

interface KeyNote {
  status: number;
  message: string;
  ok: boolean;
}

/**
 * The profile page SPEC.md names ({web_url}/accounts/profile/misc): account details,
 * premium, and the API key with a copy button and a confirmed "regenerate".
 */
export function registerProfilePage(app: FastifyInstance, context: Context): void {
  const { services } = context;
  registerUploaderConfigs(app, context);

  registerStaticScript(app, script);

  const profilePage = async (reply: FastifyReply, session: ActiveSession, notes: { key?: KeyNote; password?: PasswordNote }) => {
    const { account } = session;
    const note = notes.key ?? null;
    // Created on first use, like POST /apikeys: the same key either way.
    const key = await services.accounts.apiKeyFor(account);
    const usage = await usageOf(services, account);
    const unset = html`<span class="meta">not set</span>`;
    return sendPage(
      reply,
      notes.key?.status ?? notes.password?.status ?? 200,
      'Your account',
      html`<section class="card">
<h1>Your account</h1>
<dl class="facts">
<dt>Login</dt><dd><bdi>${account.login}</bdi></dd>
<dt>Name</dt><dd>${account.name ? html`<bdi>${account.name}</bdi>` : unset}</dd>
<dt>E-mail</dt><dd>${account.email ? html`<bdi>${account.email}</bdi>` : unset}</dd>
<dt>Balance</dt><dd>${money(account.balanceCents)}</dd>
</dl>
<p class="hint profile-files"><a href="/my/files">My files</a>: upload files, share their links, sort them into folders.</p>
</section>
${premiumSection(account, services.clock())}
${usageCard(usage)}
${passwordCard(session, notes.password ?? null)}
${await secondFactorCard(context, session)}
${await passkeysCard(context, session)}
${await identitiesCard(context, session)}
<section class="card" id="api-key">
<h2>API key</h2>
${note ? html`<p class="notice ${note.ok ? 'ok' : 'error'}" role="${note.ok ? 'status' : 'alert'}">${note.message}</p>` : ''}
<p>Clients send this key in the <code>Authorization</code> header (see <a href="/developers">the API reference</a>). Keep it secret.</p>
<div class="key-row"><code class="key" id="api-key-value">${key}</code><button class="button secondary" type="button" data-copy="api-key-value" hidden>Copy</button></div>
<p class="hint" role="status" id="copy-status"></p>
<details class="regenerate"${note && !note.ok ? html` open` : ''}>
<summary>Regenerate the key</summary>
<form class="stack" method="post" action="${REGENERATE_KEY_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">
<label class="check"><input type="checkbox" name="confirm" value="yes" required> I understand that the current key stops working at once, in every client that uses it.</label>
<button class="button danger" type="submit">Regenerate key</button>
</form>
</details>
</section>
${uploadersCard()}
<script src="${script.path}" defer></script>`,
    );
  };

  app.get(PROFILE_PATH, { config: { web: true } }, async (request, reply) => {
    const session = request.webSession;
    // Back here after sign-in, with the query (the notice this page shows).
    if (!session) return redirectTo(reply, signInUrl(request.url));
    const query = request.query as Record<string, unknown>;
    return profilePage(reply, session, {
      key: query.key === 'new' ? { status: 200, ok: true, message: 'This is your new API key. The old one no longer works.' } : undefined,
      password:
        query.changed === 'password'
          ? { status: 200, ok: true, message: 'Your password has been changed. Other browsers signed in to this account have been signed out.' }
          : undefined,
    });
  });

  app.post(CHANGE_PASSWORD_PATH, { config: { web: true }, preHandler: requireSessionForm(context) }, async (request, reply) => {
    const session = request.webSession!;
    const problem = await changePassword(context, request, reply, session);
    return problem ? profilePage(reply, session, { password: problem }) : reply;
  });

  app.post(REGENERATE_KEY_PATH, { config: { web: true }, preHandler: requireSessionForm(context) }, async (request, reply) => {
    const session = request.webSession!;
    if (bodyField(request, 'confirm') !== 'yes') {
      return profilePage(reply, session, {
        key: { status: 400, ok: false, message: 'Tick the box to confirm, then press “Regenerate key” again. Your key was not changed.' },
      });
    }
    await services.accounts.regenerateApiKey(session.account.id);
    return redirectTo(reply, `${PROFILE_PATH}?key=new#api-key`);
  });
}
