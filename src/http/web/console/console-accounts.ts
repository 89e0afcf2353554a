import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseBytes } from '../../../config/units.js';
import type { SignInMethods } from '../../../db/repositories/repositories.js';
import { MAX_PREMIUM_DAYS, MAX_TRAFFIC_BYTES, MAX_TRAFFIC_TEXT } from '../../../domain/account-bounds.js';
import { InputError } from '../../../domain/errors.js';
import { type Account, premiumState } from '../../../domain/types.js';
import type { HttpContext } from '../../context.js';
import { html } from '../../html.js';
import { humanDate, humanSize } from '../format.js';
import { bodyField, redirectTo } from '../session-plugin.js';
import { accountPath, CONSOLE_PATH, csrfField, doneNote, nextPageLink, queryText, sendConsolePage, sendRefusal, webActor } from './console-page.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'operator' | 'secondFactors'>;

const ACCOUNTS_PATH = `${CONSOLE_PATH}/accounts`;
const PAGE_SIZE = 50;

const NOTES: Record<string, string> = {
  created: 'Account created.',
  premium: 'Premium and traffic updated.',
  'premium-ended': 'Premium ended now.',
  'premium-not-active': 'Premium was not active; nothing changed.',
  disabled: 'Account disabled: its API key and sign-in stopped working, its sessions ended.',
  enabled: 'Account enabled.',
  'already-disabled': 'The account was already disabled; nothing changed.',
  'already-enabled': 'The account was already enabled; nothing changed.',
  'signed-out': 'Every web session of the account has ended; its API key still works.',
  'second-factor-reset': 'Two-step verification removed: the password alone signs in until its owner sets it up again.',
  'no-second-factor': 'The account had no two-step verification; nothing changed.',
};

/** How an account signs in besides its password, as badges (none: nothing). */
function methodBadges(methods: SignInMethods | undefined) {
  if (!methods) return '';
  return html`${methods.totp ? html`<span class="badge ok">2-step</span>` : ''}${methods.passkeys > 0 ? html`<span class="badge ok">passkeys ${methods.passkeys}</span>` : ''}${methods.identities > 0 ? html`<span class="badge">SSO</span>` : ''}`;
}

/**
 * Days from a form field, '' meaning 0; negative (shortening) only where `signed`. Parts of
 * a day are allowed (`0.5` is twelve hours), as with the CLI's --days. The service checks
 * the same bounds (account-bounds.ts); this only words the form's refusal.
 */
function daysField(raw: string | undefined, signed = false): number {
  const text = (raw ?? '').trim();
  if (text === '') return 0;
  const least = signed ? -MAX_PREMIUM_DAYS : 0;
  if (!/^-?\d{1,6}(\.\d{1,3})?$/.test(text) || Number(text) > MAX_PREMIUM_DAYS || Number(text) < least) {
    throw new InputError(`premium days must be a number such as 30 or 0.5, from ${least} to ${MAX_PREMIUM_DAYS}`);
  }
  return Number(text);
}

/** A size from a form field (`10GiB`, `500MB`, bytes), '' meaning 0; InputError past the bounds. */
function trafficField(raw: string | undefined): number {
  const text = (raw ?? '').trim();
  if (text === '') return 0;
  const bytes = parseBytes(text);
  if (bytes === null || bytes > MAX_TRAFFIC_BYTES)
    throw new InputError(`traffic must be a size like 10GiB or 500MB, at most ${MAX_TRAFFIC_TEXT}; "${text}" is not`);
  return bytes;
}

function premiumText(account: Account, now: number): string {
  const state = premiumState(account, now);
  if (state === 'Active') return `until ${humanDate(account.premiumEnd!)}`;
  return state === 'Expired' ? 'expired' : 'none';
}

/** Accounts: search, create, and one account's page with its actions. */
export function registerConsoleAccounts(app: FastifyInstance, context: Context): void {
  const { services } = context;
  const { actions } = services.operator;

  const listPage = async (request: FastifyRequest, reply: FastifyReply) => {
    const q = queryText(request.query, 'q');
    const afterText = queryText(request.query, 'after');
    const afterId = /^\d{1,15}$/.test(afterText) ? Number(afterText) : undefined;
    const page = await services.operator.search.accounts({ text: q, afterId, limit: PAGE_SIZE });
    const now = services.clock();
    // One batch for the page, not a query per row.
    const methods = await services.secondFactors.methodsOf(page.items.map((a) => a.id));
    const rows = page.items.map(
      (a) => html`<tr>
<td><a href="${accountPath(a.login)}"><bdi>${a.login}</bdi></a></td>
<td><bdi>${a.name}</bdi></td>
<td>${premiumText(a, now)}</td>
<td class="size">${humanSize(a.trafficLeft)}</td>
<td>${a.isOperator ? html`<span class="badge">operator</span>` : ''}${a.disabled ? html`<span class="badge danger">disabled</span>` : ''}</td>
<td>${methodBadges(methods.get(a.id))}</td>
</tr>`,
    );
    return sendConsolePage(
      reply,
      200,
      ACCOUNTS_PATH,
      'Accounts',
      html`<section class="card">
<h1>Accounts</h1>
${doneNote(queryText(request.query, 'done'), NOTES)}
<form class="search-row" method="get" action="${ACCOUNTS_PATH}" role="search">
<label class="visually-hidden" for="account-q">Login, name or e-mail</label>
<input id="account-q" name="q" value="${q}" maxlength="255" placeholder="Login, name or e-mail" autocapitalize="none" spellcheck="false">
<button class="button small" type="submit">Search</button>
</form>
${
  rows.length === 0
    ? html`<p class="meta">No account matches.</p>`
    : html`<div class="table-scroll"><table class="console-table">
<thead><tr><th>Login</th><th>Name</th><th>Premium</th><th class="size">Traffic left</th><th>Flags</th><th>Sign-in</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
${nextPageLink(ACCOUNTS_PATH, { q }, page.next === null ? null : { after: String(page.next) })}
</section>
<section class="card">
<h2>Create an account</h2>
<form class="stack" method="post" action="${ACCOUNTS_PATH}">
${csrfField(request)}
<label for="new-login">Login</label>
<input id="new-login" name="login" required maxlength="64" pattern="[A-Za-z0-9._@+\\-]{1,64}" autocomplete="off" autocapitalize="none" spellcheck="false">
<label for="new-password">Password</label>
<input id="new-password" name="password" type="password" required minlength="8" maxlength="1024" autocomplete="new-password">
<label for="new-name">Name <span class="meta">(optional)</span></label>
<input id="new-name" name="name" maxlength="100">
<label for="new-email">E-mail <span class="meta">(optional)</span></label>
<input id="new-email" name="email" type="email" maxlength="254">
<label for="new-days">Premium days <span class="meta">(optional)</span></label>
<input id="new-days" name="premium_days" inputmode="decimal" pattern="\\d{0,5}(\\.\\d{1,3})?" maxlength="9">
<label for="new-traffic">Traffic <span class="meta">(optional, e.g. 10GiB)</span></label>
<input id="new-traffic" name="traffic" maxlength="32">
<button class="button" type="submit">Create account</button>
</form>
</section>`,
    );
  };

  app.get(ACCOUNTS_PATH, { config: { web: true } }, listPage);

  app.post(ACCOUNTS_PATH, { config: { web: true } }, async (request, reply) => {
    try {
      const account = await actions.createAccount(webActor(request), {
        login: bodyField(request, 'login') ?? '',
        password: bodyField(request, 'password') ?? '',
        name: bodyField(request, 'name'),
        email: bodyField(request, 'email'),
        premiumDays: daysField(bodyField(request, 'premium_days')),
        trafficBytes: trafficField(bodyField(request, 'traffic')),
      });
      return redirectTo(reply, `${accountPath(account.login)}?done=created`);
    } catch (error) {
      if (error instanceof InputError) return sendRefusal(reply, ACCOUNTS_PATH, error.message, ACCOUNTS_PATH);
      throw error;
    }
  });

  const params = { type: 'object', properties: { login: { type: 'string', maxLength: 255 } }, required: ['login'] } as const;
  const accountRoute = { config: { web: true }, schema: { params } };
  type AccountRequest = FastifyRequest<{ Params: { login: string } }>;

  app.get(`${ACCOUNTS_PATH}/:login`, accountRoute, async (request: AccountRequest, reply) => {
    const account = await services.operator.search.accountByLogin(request.params.login);
    if (!account) return sendRefusal(reply, ACCOUNTS_PATH, `no account with login "${request.params.login}"`, ACCOUNTS_PATH);
    const now = services.clock();
    const path = accountPath(account.login);
    const methods = (await services.secondFactors.methodsOf([account.id])).get(account.id)!;
    const factor = await services.secondFactors.status(account.id);
    const totpText = { on: `on, ${factor.recoveryCodesLeft} recovery codes left`, pending: 'set-up not finished', off: 'off' }[factor.totp];
    const form = (action: string, body: ReturnType<typeof html>) => html`<form method="post" action="${path}/${action}">${csrfField(request)}${body}</form>`;
    return sendConsolePage(
      reply,
      200,
      ACCOUNTS_PATH,
      account.login,
      html`<section class="card">
<p class="crumbs"><a href="${ACCOUNTS_PATH}">Accounts</a></p>
<h1><bdi>${account.login}</bdi>${account.isOperator ? html` <span class="badge">operator</span>` : ''}${account.disabled ? html` <span class="badge danger">disabled</span>` : ''}</h1>
${doneNote(queryText(request.query, 'done'), NOTES)}
<dl class="facts">
<dt>Id</dt><dd>${account.id}</dd>
<dt>Name</dt><dd><bdi>${account.name || '–'}</bdi></dd>
<dt>E-mail</dt><dd><bdi>${account.email || '–'}</bdi></dd>
<dt>Created</dt><dd>${humanDate(account.createdAt)}</dd>
<dt>Premium</dt><dd>${premiumText(account, now)}</dd>
<dt>Traffic left</dt><dd>${humanSize(account.trafficLeft)}</dd>
<dt>Two-step</dt><dd>${totpText}</dd>
<dt>Passkeys</dt><dd>${methods.passkeys}</dd>
<dt>Single sign-on</dt><dd>${methods.identities > 0 ? `${methods.identities} linked` : 'none'}</dd>
</dl>
<p class="links"><a href="${CONSOLE_PATH}/files?owner=${encodeURIComponent(account.login)}">Files of this account</a> · <a href="${CONSOLE_PATH}/audit?object=${encodeURIComponent(`account:${account.login}`)}">Audit entries</a></p>
</section>
<section class="card">
<h2>Premium</h2>
${form(
  'premium',
  html`<div class="field-row">
<label for="days">Days</label><input id="days" name="days" inputmode="decimal" pattern="-?\\d{0,5}(\\.\\d{1,3})?" maxlength="10" placeholder="30">
<label for="traffic">Traffic</label><input id="traffic" name="traffic" maxlength="32" placeholder="10GiB">
<button class="button small" type="submit">Apply</button>
</div>
<p class="hint">Days extend an active period from its end, else start one now; negative days shorten an active period. Traffic is added.</p>`,
)}
${premiumState(account, now) === 'Active' ? form('end-premium', html`<button class="button small danger" type="submit">End premium now</button>`) : ''}
</section>
<section class="card">
<h2>Access</h2>
<div class="action-list">
${form(
  account.disabled ? 'enable' : 'disable',
  account.disabled
    ? html`<button class="button small" type="submit">Enable account</button>`
    : html`<button class="button small danger" type="submit">Disable account</button>`,
)}
${form('sign-out', html`<button class="button small secondary" type="submit">Sign out everywhere</button>`)}
${form('reset-password', html`<button class="button small secondary" type="submit">Reset password</button>`)}
</div>
${
  factor.totp === 'off'
    ? ''
    : form(
        'reset-second-factor',
        html`<label class="check"><input type="checkbox" name="confirm" value="yes" required> I checked that the owner asking for this is who they say they are.</label>
<button class="button small danger" type="submit">Reset two-step verification</button>`,
      )
}
<p class="hint">Disabling stops the API key, sign-in and sessions at once. A reset shows a new password once and ends the sessions; the API key stays.</p>
</section>`,
    );
  });

  /** Runs an account action; an InputError (unknown login, bad number) becomes a refusal page. */
  const accountAction = (path: string, run: (request: AccountRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
    app.post(`${ACCOUNTS_PATH}/:login/${path}`, accountRoute, async (request: AccountRequest, reply) => {
      try {
        return await run(request, reply);
      } catch (error) {
        if (error instanceof InputError) return sendRefusal(reply, ACCOUNTS_PATH, error.message, accountPath(request.params.login));
        throw error;
      }
    });

  accountAction('premium', async (request, reply) => {
    const days = daysField(bodyField(request, 'days'), true);
    const traffic = trafficField(bodyField(request, 'traffic'));
    const account = await actions.extendPremium(webActor(request), request.params.login, days, traffic);
    return redirectTo(reply, `${accountPath(account.login)}?done=premium`);
  });

  accountAction('end-premium', async (request, reply) => {
    const { account, ended } = await actions.endPremium(webActor(request), request.params.login);
    return redirectTo(reply, `${accountPath(account.login)}?done=${ended ? 'premium-ended' : 'premium-not-active'}`);
  });

  for (const verb of ['disable', 'enable'] as const) {
    accountAction(verb, async (request, reply) => {
      const { account, changed } = await actions.setDisabled(webActor(request), request.params.login, verb === 'disable');
      return redirectTo(reply, `${accountPath(account.login)}?done=${changed ? `${verb}d` : `already-${verb}d`}`);
    });
  }

  accountAction('sign-out', async (request, reply) => {
    const { account } = await actions.signOutEverywhere(webActor(request), request.params.login);
    return redirectTo(reply, `${accountPath(account.login)}?done=signed-out`);
  });

  accountAction('reset-second-factor', async (request, reply) => {
    if (bodyField(request, 'confirm') !== 'yes') throw new InputError('tick the box to confirm the reset of two-step verification');
    const { account, removed } = await services.secondFactors.operatorReset(webActor(request), request.params.login);
    return redirectTo(reply, `${accountPath(account.login)}?done=${removed ? 'second-factor-reset' : 'no-second-factor'}`);
  });

  // The new password is the answer itself, never a redirect: it must not sit in a URL,
  // and the page is no-store like every page, so it is shown this once.
  accountAction('reset-password', async (request, reply) => {
    const { account, password } = await actions.resetPassword(webActor(request), request.params.login);
    return sendConsolePage(
      reply,
      200,
      ACCOUNTS_PATH,
      'Password reset',
      html`<section class="card">
<h1>New password for <bdi>${account.login}</bdi></h1>
<p>Give it to the account's owner now: it is shown only this once. Their web sessions have ended.</p>
<p class="key-row"><code class="key" id="new-password">${password}</code></p>
<p><a class="button secondary" href="${accountPath(account.login)}">Back to the account</a></p>
</section>`,
    );
  });
}
