import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FLOW_TTL_MS, IssuerUnreachableError, type OidcPurpose, type OidcRefusal, type OidcService } from '../../auth/oidc-service.js';
import type { ActiveSession } from '../../auth/session-service.js';
import { errors } from '../../domain/errors.js';
import type { Account } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { humanDate } from './format.js';
import { sendErrorPage, sendPage } from './layout.js';
import { RETURN_FIELD, safeReturnPath } from './return-path.js';
import { bodyField, CSRF_FIELD, cookieOptions, redirectTo, requireSessionForm } from './session-plugin.js';
import { PROFILE_PATH, startWebSession } from './sign-in-session.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'sessions' | 'signInChallenges' | 'oidc'>;

/** Where the issuer sends the browser back: register exactly `{web_url}` + this at the issuer. */
export const CALLBACK_PATH = '/signin/oidc/callback';
const START_PATH = '/signin/oidc';
const LINK_PATH = '/signin/oidc/link';
const UNLINK_PATH = '/accounts/profile/identities/unlink';
/** The sign-in page with its password form under `--oidc-only` (for operators). */
const PASSWORD_SIGN_IN_PATH = '/signin?password';

/**
 * The browser's half of a flow: the random value the flow is stored under, of which the
 * `state` is a one-way hash, so a callback counts only in the browser that began it, even
 * when its URL leaks. Sent to /signin/oidc paths only.
 */
const FLOW_COOKIE = 'fh_oidc';

/** What the person reads when a callback signs nobody in, and with which status. */
const REFUSALS: Record<OidcRefusal, { status: number; title: string; message: string }> = {
  'other-browser': {
    status: 403,
    title: 'Sign-in not finished',
    message: 'This sign-in was started in another browser or tab, or its page is too old. Nobody was signed in. Start again from the sign-in page.',
  },
  stale: {
    status: 403,
    title: 'Sign-in not finished',
    message: 'This sign-in link was used already or has expired. Nobody was signed in. Start again from the sign-in page.',
  },
  'issuer-error': {
    status: 403,
    title: 'Sign-in not finished',
    message: 'The sign-in service did not sign you in (it was cancelled or refused). Start again from the sign-in page.',
  },
  'invalid-response': {
    status: 403,
    title: 'Sign-in not finished',
    message: 'The answer of the sign-in service could not be verified, so nobody was signed in. Start again from the sign-in page.',
  },
  unreachable: {
    status: 503,
    title: 'Sign-in service unreachable',
    message: 'The sign-in service cannot be reached right now. Try again in a moment, or sign in with your password.',
  },
  'no-account': {
    status: 403,
    title: 'No account',
    message:
      'No account of this site is linked to this identity, and this site does not create accounts on sign-in. Ask the operator for an account, or sign in with your password and link the identity from your profile.',
  },
  disabled: {
    status: 403,
    title: 'Account disabled',
    message: 'The account linked to this identity is disabled. Ask the operator of this site.',
  },
  'linked-elsewhere': {
    status: 409,
    title: 'Identity linked already',
    message: 'This identity is linked to another account of this site, so it was not linked to yours. Unlink it there first.',
  },
  'link-session': {
    status: 403,
    title: 'Not linked',
    message: 'You are no longer signed in to the account that asked for the link, so nothing was linked. Sign in and link again from your profile.',
  },
};

const oidcOf = (context: Context): OidcService | null => context.services.oidc;

/** Single sign-on through OpenID Connect (issue 26): /signin/oidc, its callback, linking and unlinking. */
export function registerOidcPages(app: FastifyInstance, context: Context): void {
  const oidc = oidcOf(context);
  if (!oidc) return;
  // Normalised once (`https://Files.Example.org:443` → `https://files.example.org`), so the
  // authorization and the token requests send the very same redirect URI.
  const redirectUri = () => new URL(`${context.links.webUrl}${CALLBACK_PATH}`).href;
  const flowCookie = (request: FastifyRequest) => ({ ...cookieOptions(request, context.links), path: START_PATH });

  /** Starts a flow and sets its cookie; the issuer's URL, or null when a 503 page has been sent. */
  const begin = async (request: FastifyRequest, reply: FastifyReply, purpose: OidcPurpose, accountId: number | null, next: string | null) => {
    try {
      const flow = await oidc.begin(purpose, accountId, next, redirectUri());
      reply.setCookie(FLOW_COOKIE, flow.value, { ...flowCookie(request), maxAge: FLOW_TTL_MS / 1000 });
      return flow.url;
    } catch (error) {
      if (!(error instanceof IssuerUnreachableError)) throw error;
      request.log.warn({ issuer: oidc.settings.issuer.origin, why: error.message }, 'single sign-on: the issuer cannot be reached');
      unreachablePage(reply, oidc, next);
      return null;
    }
  };

  app.get(START_PATH, { config: { web: true } }, async (request, reply) => {
    const next = safeReturnPath((request.query as Record<string, unknown>)[RETURN_FIELD]);
    if (request.webSession) return redirectTo(reply, next ?? PROFILE_PATH);
    const url = await begin(request, reply, 'sign-in', null, next);
    return url ? redirectTo(reply, url.href) : reply;
  });

  // Linking starts from a form of the profile (the session's CSRF token), and is answered
  // with a page that moves on to the issuer: the site's CSP says `form-action 'self'`, which
  // browsers also apply to a redirect after a form, so a 303 to the issuer would be blocked.
  app.post(LINK_PATH, { config: { web: true }, preHandler: requireSessionForm(context) }, async (request, reply) => {
    const session = request.webSession!;
    const url = await begin(request, reply, 'link', session.account.id, null);
    if (!url) return reply;
    return sendPage(
      reply,
      200,
      `Link ${oidc.settings.name}`,
      html`<section class="card narrow">
<h1>Link ${oidc.settings.name}</h1>
<p>On to ${oidc.settings.name}: sign in there to link the identity to this account.</p>
<p><a class="button" href="${url.href}">Continue to ${oidc.settings.name}</a></p>
</section>`,
      undefined,
      html`<meta http-equiv="refresh" content="0;url=${url.href}">`,
    );
  });

  app.get(CALLBACK_PATH, { config: { web: true } }, async (request, reply) => {
    const cookie = request.cookies[FLOW_COOKIE];
    // The flow is over whatever happens: its cookie goes.
    if (cookie !== undefined) reply.clearCookie(FLOW_COOKIE, flowCookie(request));
    const outcome = await oidc.finish(new URL(request.url, 'http://callback.invalid'), redirectUri(), cookie, request.webSession?.account.id ?? null);
    if (outcome.kind === 'signed-in') return startWebSession(context, request, reply, outcome.accountId, outcome.next);
    if (outcome.kind === 'linked') return redirectTo(reply, `${PROFILE_PATH}#identities`);
    // Never the code, the tokens or the state: the reason, and openid-client's check that failed.
    request.log.info({ reason: outcome.reason, detail: outcome.detail }, 'single sign-on callback refused');
    if (outcome.reason === 'unreachable') return unreachablePage(reply, oidc, null);
    const refusal = REFUSALS[outcome.reason];
    return sendPage(
      reply,
      refusal.status,
      refusal.title,
      html`<section class="card narrow">
<h1>${refusal.title}</h1>
<p class="notice error" role="alert">${refusal.message}</p>
<p><a class="button" href="${outcome.reason.startsWith('link') ? PROFILE_PATH : '/signin'}">${outcome.reason.startsWith('link') ? 'Your profile' : 'Sign in'}</a></p>
</section>`,
    );
  });

  app.post(UNLINK_PATH, { config: { web: true }, preHandler: requireSessionForm(context) }, async (request, reply) => {
    const session = request.webSession!;
    const id = Number(bodyField(request, 'identity'));
    const result = Number.isSafeInteger(id) ? await oidc.unlink(session.account, id) : 'unknown';
    if (result === 'unlinked') return redirectTo(reply, `${PROFILE_PATH}#identities`);
    if (result === 'last') {
      return sendErrorPage(
        reply,
        409,
        'Not unlinked',
        `This identity is the only way into your account, so it stays linked. Link another identity${oidc.settings.only ? '' : ' or set a password'} first.`,
      );
    }
    return sendErrorPage(reply, 404, 'Not found', 'This account has no such identity linked.');
  });
}

/** The page of a flow that cannot start (or finish) because the issuer does not answer. */
function unreachablePage(reply: FastifyReply, oidc: OidcService, next: string | null): FastifyReply {
  const retry = next ? `${START_PATH}?${RETURN_FIELD}=${encodeURIComponent(next)}` : START_PATH;
  return sendPage(
    reply,
    503,
    'Sign-in service unreachable',
    html`<section class="card narrow">
<h1>Sign-in service unreachable</h1>
<p class="notice error" role="alert">The sign-in service (${oidc.settings.name}) cannot be reached right now. Try again in a moment, or sign in with your password.</p>
<p><a class="button" href="${retry}">Try again</a> <a class="button secondary" href="${oidc.settings.only ? PASSWORD_SIGN_IN_PATH : '/signin'}">Sign in with a password</a></p>
</section>`,
  );
}

/** The "Sign in with <name>" button of the sign-in page; '' when single sign-on is off. */
export function oidcSignInOption(context: Context, request: FastifyRequest): Html | string {
  const oidc = oidcOf(context);
  if (!oidc) return '';
  const query = request.query as Record<string, unknown>;
  const next = safeReturnPath(request.method === 'POST' ? bodyField(request, RETURN_FIELD) : query[RETURN_FIELD]);
  const href = next ? `${START_PATH}?${RETURN_FIELD}=${encodeURIComponent(next)}` : START_PATH;
  // Under --oidc-only the password form is for operators; a small link shows it.
  const operators =
    oidc.settings.only && !passwordSignInShown(context, request)
      ? html`\n<p class="meta"><a href="${PASSWORD_SIGN_IN_PATH}">Operators: sign in with a password</a></p>`
      : '';
  const or = passwordSignInShown(context, request) ? html`\n<p class="meta">Or with your login and password:</p>` : '';
  return html`<p><a class="button" href="${href}">Sign in with ${oidc.settings.name}</a></p>${operators}${or}`;
}

/**
 * Whether the sign-in page shows the password form to this request: always, unless
 * `--oidc-only`, where only `/signin?password` (and the page a posted form gets) shows it.
 */
export function passwordSignInShown(context: Context, request: FastifyRequest): boolean {
  if (!oidcOf(context)?.settings.only) return true;
  return request.method === 'POST' || Object.hasOwn(request.query as object, 'password');
}

/**
 * Under `--oidc-only` a password signs in operators only (recovering access); anyone else
 * gets errorWrongCredentials, the same answer as a wrong password, so the form does not tell
 * who is an operator.
 */
export function checkPasswordSignInAllowed(context: Context, account: Account): void {
  if (oidcOf(context)?.settings.only && !account.isOperator) throw errors.wrongCredentials();
}

/** The profile's card of linked single sign-on identities; '' when single sign-on is off. */
export async function identitiesCard(context: Context, session: ActiveSession): Promise<Html | string> {
  const oidc = oidcOf(context);
  if (!oidc) return '';
  const { account } = session;
  const identities = await oidc.identities(account.id);
  const csrf = html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">`;
  const rows = [];
  for (const identity of identities) {
    const removable = await oidc.canUnlink(account, identity.id);
    rows.push(html`<li>
<p><strong>${hostOf(identity.issuer)}</strong>${identity.email ? html` · <bdi>${identity.email}</bdi>` : ''}</p>
<p class="meta">Linked ${humanDate(identity.createdAt)}${identity.lastUsedAt ? html`, last used ${humanDate(identity.lastUsedAt)}` : ''}</p>
${
  removable
    ? html`<form method="post" action="${UNLINK_PATH}">${csrf}<input type="hidden" name="identity" value="${String(identity.id)}"><button class="button secondary" type="submit">Unlink</button></form>`
    : html`<p class="hint">The only way into this account, so it cannot be unlinked.</p>`
}
</li>`);
  }
  const passwordless = !(await context.services.accounts.hasPassword(account))
    ? html`<p class="hint">This account has no password: it signs in with ${oidc.settings.name}. Setting a password is not offered on this page.</p>`
    : '';
  return html`<section class="card" id="identities">
<h2>${oidc.settings.name}</h2>
<p>Sign in to this account with ${oidc.settings.name}. A link is made only here, never from a matching e-mail address.</p>
${rows.length > 0 ? html`<ul class="stack">${rows}</ul>` : html`<p class="meta">No identity linked.</p>`}
${passwordless}
<form method="post" action="${LINK_PATH}">${csrf}<button class="button" type="submit">Link ${oidc.settings.name}</button></form>
</section>`;
}

/** The issuer as people know it: its host (and path, for realms). */
function hostOf(issuer: string): string {
  try {
    const url = new URL(issuer);
    return `${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return issuer;
  }
}
