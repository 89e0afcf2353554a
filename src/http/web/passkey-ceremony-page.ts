import type { FastifyReply } from 'fastify';
import { html } from '../html.js';
import type { StaticScript } from './browser-scripts.js';
import { sendPage } from './layout.js';
import { CSRF_FIELD } from './session-plugin.js';

/** What a ceremony page asks the browser for, and where the answer goes. */
export interface Ceremony {
  kind: 'register' | 'sign-in';
  /** The WebAuthn options (SimpleWebAuthn's JSON form), for navigator.credentials. */
  options: unknown;
  /** Where the form posts the answer. */
  action: string;
  /** The CSRF token the form carries (the session's, or the pre-session's before sign-in). */
  csrfToken: string;
  /** Other hidden fields (the passkey's name, the return path). */
  fields: Record<string, string>;
  /** Where "Cancel" leads. */
  back: string;
}

const TEXT = {
  register: {
    title: 'Add a passkey',
    lead: 'Follow your browser’s prompt to create the passkey: unlock with your screen lock, fingerprint or face, or touch your security key.',
  },
  'sign-in': {
    title: 'Sign in with a passkey',
    lead: 'Follow your browser’s prompt: choose the passkey of your account and unlock it with your screen lock, fingerprint or face, or touch your security key.',
  },
} as const;

/**
 * The page of one WebAuthn ceremony: the options in the form, for browser/passkeys.ts to
 * hand to the browser as soon as the page loads; the answer goes back in a plain form
 * post. The site's pages allow no script to fetch (CSP default-src 'none'), so the
 * options come with the page and the answer leaves as a navigation, which also lets the
 * sign-in answer end in the usual redirect with the session cookie.
 */
export function sendCeremonyPage(reply: FastifyReply, script: StaticScript, ceremony: Ceremony, problem?: { status: number; message: string }): FastifyReply {
  const text = TEXT[ceremony.kind];
  const hidden = Object.entries(ceremony.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">\n`);
  return sendPage(
    reply,
    problem?.status ?? 200,
    text.title,
    html`<section class="card narrow">
<h1>${text.title}</h1>
${problem ? html`<p class="notice error" role="alert">${problem.message}</p>` : ''}
<p>${text.lead}</p>
<form class="stack" method="post" action="${ceremony.action}" data-passkey-ceremony="${ceremony.kind}" data-options="${JSON.stringify(ceremony.options)}">
<input type="hidden" name="${CSRF_FIELD}" value="${ceremony.csrfToken}">
${hidden}<input type="hidden" name="response" value="">
<p class="hint" role="status" data-passkey-status></p>
<noscript><p class="notice error">Passkeys need JavaScript: turn it on for this site, or go back and sign in another way.</p></noscript>
<div class="action-list"><button class="button" type="button" data-passkey-go hidden>Try again</button><a class="button secondary" href="${ceremony.back}">Cancel</a></div>
</form>
</section>
<script src="${script.path}" defer></script>`,
  );
}
