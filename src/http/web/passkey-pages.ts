import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type NoRelyingParty, type RelyingParty, relyingPartyOf } from '../../auth/passkey-relying-party.js';
import { PASSKEY_NAME_MAX, PasskeyError } from '../../auth/passkeys-service.js';
import type { ActiveSession } from '../../auth/session-service.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { browserScript, registerStaticScript } from './browser-scripts.js';
import { humanDate } from './format.js';
import { sendErrorPage, sendPage } from './layout.js';
import { sendCeremonyPage } from './passkey-ceremony-page.js';
import { RETURN_FIELD, safeReturnPath } from './return-path.js';
import { bodyField, CSRF_FIELD, PRE_SESSION_COOKIE, redirectTo, requireSessionForm, sendCsrfRefusal } from './session-plugin.js';
import { PROFILE_PATH, startWebSession } from './sign-in-session.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'sessions' | 'signInChallenges' | 'passkeys'>;

/** The ceremony pages' script, bundled from browser/passkeys.ts. */
const script = browserScript('passkeys');

export const PASSKEY_SIGN_IN_START = '/signin/passkey/start';
export const PASSKEY_SIGN_IN = '/signin/passkey';
export const PASSKEYS_PATH = '/accounts/profile/passkeys';
const CARD = `${PROFILE_PATH}#passkeys`;

/** The relying party of the site as it is reached ({web_url}), or why passkeys cannot work there. */
const relyingParty = (context: Context): RelyingParty | NoRelyingParty => relyingPartyOf(context.links.webUrl);

const usable = (rp: RelyingParty | NoRelyingParty): rp is RelyingParty => !('problem' in rp);

/**
 * Passkeys (WebAuthn, issue 26): registration, rename and removal from the profile; the
 * sign-in ceremony. Every POST carries a CSRF token (the session's on the profile, the
 * pre-session's before sign-in). With `--passkeys false` every route answers 404.
 */
export function registerPasskeyPages(app: FastifyInstance, context: Context): void {
  const { services } = context;
  const sessionForm = requireSessionForm(context);
  registerStaticScript(app, script);

  /** 404 when passkeys are off, 409 when the site is reached at an IP address; else the relying party. */
  const available = (reply: FastifyReply): RelyingParty | null => {
    if (!services.config.passkeys) {
      sendErrorPage(reply, 404, 'Not found', 'There is nothing at this address.');
      return null;
    }
    const rp = relyingParty(context);
    if (usable(rp)) return rp;
    sendErrorPage(reply, 409, 'Passkeys unavailable', rp.problem);
    return null;
  };

  /** A refusal of the service as a page: the ceremony's own problem, or a bug (rethrown: a 500 page). */
  const refusal = (error: unknown): { status: number; message: string } => {
    if (error instanceof PasskeyError) return { status: error.status, message: error.message };
    throw error;
  };

  const preSessionValid = (request: FastifyRequest) =>
    services.sessions.checkPreSessionCsrf(request.cookies[PRE_SESSION_COOKIE], bodyField(request, CSRF_FIELD));

  // Sign-in, step 1: the ceremony page with fresh options (a challenge taken once).
  app.post(PASSKEY_SIGN_IN_START, { config: { web: true } }, async (request, reply) => {
    const rp = available(reply);
    if (!rp) return reply;
    if (!preSessionValid(request)) return sendCsrfRefusal(reply);
    const next = safeReturnPath(bodyField(request, RETURN_FIELD));
    return sendCeremonyPage(reply, script, {
      kind: 'sign-in',
      options: await services.passkeys.signInOptions(rp),
      action: PASSKEY_SIGN_IN,
      csrfToken: bodyField(request, CSRF_FIELD)!,
      fields: next ? { [RETURN_FIELD]: next } : {},
      back: next ? `/signin?${RETURN_FIELD}=${encodeURIComponent(next)}` : '/signin',
    });
  });

  // Sign-in, step 2: the browser's answer. A passkey with user verification is both
  // factors: straight to the session, whatever second factor the account has.
  app.post(PASSKEY_SIGN_IN, { config: { web: true } }, async (request, reply) => {
    const rp = available(reply);
    if (!rp) return reply;
    if (!preSessionValid(request)) return sendCsrfRefusal(reply);
    const next = safeReturnPath(bodyField(request, RETURN_FIELD));
    let accountId: number;
    try {
      accountId = await services.passkeys.signIn(rp, bodyField(request, 'response') ?? '');
    } catch (error) {
      const problem = refusal(error);
      return sendPage(
        reply,
        problem.status,
        'Passkey sign-in failed',
        html`<section class="card narrow">
<h1>Passkey sign-in failed</h1>
<p class="notice error" role="alert">${problem.message}</p>
<p><a class="button" href="${next ? `/signin?${RETURN_FIELD}=${encodeURIComponent(next)}` : '/signin'}">Back to sign-in</a></p>
</section>`,
      );
    }
    return startWebSession(context, request, reply, accountId, next);
  });

  // Registration, step 1: the ceremony page, the account's passkeys excluded.
  app.post(`${PASSKEYS_PATH}/start`, { config: { web: true }, preHandler: sessionForm }, async (request, reply) => {
    const rp = available(reply);
    if (!rp) return reply;
    const session = request.webSession!;
    const name = bodyField(request, 'name') ?? '';
    try {
      requireRecentSignIn(session, services.clock());
      if ([...name.trim()].length > PASSKEY_NAME_MAX) throw new PasskeyError(400, `A passkey’s name is at most ${PASSKEY_NAME_MAX} characters.`);
      return sendCeremonyPage(reply, script, {
        kind: 'register',
        options: await services.passkeys.registrationOptions(rp, session.account),
        action: PASSKEYS_PATH,
        csrfToken: session.csrfToken,
        fields: { name },
        back: CARD,
      });
    } catch (error) {
      return sendProblem(reply, refusal(error));
    }
  });

  // Registration, step 2: the browser's answer, verified and stored.
  app.post(PASSKEYS_PATH, { config: { web: true }, preHandler: sessionForm }, async (request, reply) => {
    const rp = available(reply);
    if (!rp) return reply;
    try {
      requireRecentSignIn(request.webSession!, services.clock());
      await services.passkeys.register(rp, request.webSession!.account.id, bodyField(request, 'response') ?? '', bodyField(request, 'name') ?? '');
    } catch (error) {
      return sendProblem(reply, refusal(error));
    }
    return redirectTo(reply, CARD);
  });

  app.post(`${PASSKEYS_PATH}/rename`, { config: { web: true }, preHandler: sessionForm }, async (request, reply) => {
    if (!services.config.passkeys) return sendErrorPage(reply, 404, 'Not found', 'There is nothing at this address.');
    try {
      const renamed = await services.passkeys.rename(request.webSession!.account.id, bodyField(request, 'id') ?? '', bodyField(request, 'name') ?? '');
      if (!renamed) return sendProblem(reply, NO_SUCH_PASSKEY);
    } catch (error) {
      return sendProblem(reply, refusal(error));
    }
    return redirectTo(reply, CARD);
  });

  app.post(`${PASSKEYS_PATH}/remove`, { config: { web: true }, preHandler: sessionForm }, async (request, reply) => {
    if (!services.config.passkeys) return sendErrorPage(reply, 404, 'Not found', 'There is nothing at this address.');
    // Only the signed-in account's own passkey: another account's id changes nothing.
    if (!(await services.passkeys.remove(request.webSession!.account.id, bodyField(request, 'id') ?? ''))) return sendProblem(reply, NO_SUCH_PASSKEY);
    return redirectTo(reply, CARD);
  });
}

const NO_SUCH_PASSKEY = { status: 404, message: 'Your account has no such passkey (it may have been removed already). Nothing was changed.' };

/** A refused profile action: what went wrong, and the way back to the card. */
function sendProblem(reply: FastifyReply, problem: { status: number; message: string }): FastifyReply {
  return sendPage(
    reply,
    problem.status,
    'Passkeys',
    html`<section class="card narrow">
<h1>Passkeys</h1>
<p class="notice error" role="alert">${problem.message}</p>
<p><a class="button" href="${CARD}">Back to your passkeys</a></p>
</section>`,
  );
}

/**
 * The "Sign in with a passkey" button of the sign-in page; '' when passkeys are off or
 * cannot work on this address. Hidden until browser/passkeys.ts finds WebAuthn in the
 * browser: without JavaScript it is simply absent. No login is typed: the passkeys are
 * discoverable, the authenticator offers this site's.
 */
export function passkeySignInOption(context: Context, request: FastifyRequest, preSessionToken: () => string): Html | string {
  if (!context.services.config.passkeys || !usable(relyingParty(context))) return '';
  const query = request.query as Record<string, unknown>;
  const next = safeReturnPath(request.method === 'POST' ? bodyField(request, RETURN_FIELD) : query[RETURN_FIELD]);
  return html`<form class="stack" method="post" action="${PASSKEY_SIGN_IN_START}" data-passkey-offer hidden>
<input type="hidden" name="${CSRF_FIELD}" value="${preSessionToken()}">${next ? html`\n<input type="hidden" name="${RETURN_FIELD}" value="${next}">` : ''}
<button class="button secondary" type="submit">Sign in with a passkey</button>
</form>
<script src="${script.path}" defer></script>`;
}

/** The profile's passkeys card: list (name, added, last used), add with a name, rename, remove. */
export async function passkeysCard(context: Context, session: ActiveSession): Promise<Html | string> {
  if (!context.services.config.passkeys) return '';
  const intro = html`<h2>Passkeys</h2>
<p>A passkey signs you in with this device’s screen lock (fingerprint, face, PIN) or a security key, without typing your login or password. It counts as both factors, so no code is asked.</p>`;
  const rp = relyingParty(context);
  if (!usable(rp)) return html`<section class="card" id="passkeys">${intro}<p class="notice" role="note">${rp.problem}</p></section>`;
  const passkeys = await context.services.passkeys.list(session.account.id);
  const csrf = html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">`;
  const items = passkeys.map(
    (passkey) => html`<li class="share-item">
<p class="share-name"><bdi>${passkey.name}</bdi></p>
<p class="meta">Added ${humanDate(passkey.createdAt)} · ${passkey.lastUsedAt === null ? 'never used' : html`last used ${humanDate(passkey.lastUsedAt)}`}</p>
<details>
<summary>Rename or remove</summary>
<form class="stack" method="post" action="${PASSKEYS_PATH}/rename">
${csrf}<input type="hidden" name="id" value="${passkey.id}">
<label for="passkey-name-${passkey.id}">New name</label>
<input id="passkey-name-${passkey.id}" name="name" value="${passkey.name}" required maxlength="${PASSKEY_NAME_MAX}">
<button class="button secondary" type="submit">Rename</button>
</form>
<form class="stack" method="post" action="${PASSKEYS_PATH}/remove">
${csrf}<input type="hidden" name="id" value="${passkey.id}">
<button class="button danger" type="submit">Remove “${passkey.name}”</button>
</form>
</details>
</li>`,
  );
  return html`<section class="card" id="passkeys">
${intro}
${items.length > 0 ? html`<ul class="share-list">${items}</ul>` : html`<p class="meta">No passkeys yet.</p>`}
<form class="stack" method="post" action="${PASSKEYS_PATH}/start" data-passkey-offer hidden>
${csrf}
<label for="passkey-new-name">Name <span class="meta">(optional, such as “Laptop” or “Phone”)</span></label>
<input id="passkey-new-name" name="name" maxlength="${PASSKEY_NAME_MAX}" autocomplete="off">
<button class="button" type="submit">Add a passkey</button>
</form>
<p class="hint" data-passkey-unsupported>Adding a passkey needs JavaScript and a browser that supports passkeys.</p>
<script src="${script.path}" defer></script>
</section>`;
}

/** How recent a sign-in must be to add a passkey. */
const RECENT_SIGN_IN_MS = 15 * 60_000;

/**
 * A passkey outlives a password change (which ends sessions, not passkeys) and skips any
 * second factor, so a stolen session must not be enough to add one: the sign-in behind it
 * must be recent, as sites ask for the password again before such changes.
 */
function requireRecentSignIn(session: ActiveSession, now: number): void {
  if (now - session.signedInAt > RECENT_SIGN_IN_MS) {
    throw new PasskeyError(403, 'For your safety, adding a passkey needs a recent sign-in: sign out, sign in again, then add it within 15 minutes.');
  }
}
