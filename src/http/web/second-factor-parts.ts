import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TotpSetup } from '../../auth/second-factor-service.js';
import { ApiError, errors } from '../../domain/errors.js';
import type { HttpContext } from '../context.js';
import { type Html, html, raw } from '../html.js';

/** A message shown above a form, and the HTTP status it is sent with. */
export interface Problem {
  status: number;
  message: string;
  ok?: boolean;
}

export const problemNote = (problem: Problem | null | undefined): Html | string =>
  problem ? html`<p class="notice ${problem.ok ? 'ok' : 'error'}" role="${problem.ok ? 'status' : 'alert'}">${problem.message}</p>` : '';

export const WRONG_CODE: Problem = { status: 401, message: 'That code is not right, or it was used already. Try the newest code.' };
export const THROTTLED: Problem = { status: 429, message: 'Too many wrong codes. Wait a minute, then try again.' };

/** The issuer an authenticator app lists the entry under: this site's host name. */
export const issuerOf = (context: HttpContext<never>): string => {
  try {
    return new URL(context.links.webUrl).host || 'filehaven';
  } catch {
    return 'filehaven';
  }
};

/**
 * Checks a typed code as one attempt of the sign-in throttle (per address and per login,
 * like a password: API.md 8), so a 6-digit code cannot be guessed faster than a password.
 * A code always counts on the login's counter, from an address known to it too
 * (SignInThrottle.attemptCode).
 * `check` answers null for a wrong code. Returns what it gave, or the problem to show
 * (the 429's Retry-After is set on the reply).
 */
export async function throttledCode<T>(
  context: HttpContext<'limits'>,
  request: FastifyRequest,
  reply: FastifyReply,
  login: string,
  check: () => Promise<T | null>,
): Promise<{ ok: T } | { problem: Problem }> {
  try {
    return {
      ok: await context.services.limits.signIn.attemptCode(request.ip, login, async () => {
        const result = await check();
        if (result === null) throw errors.wrongCredentials();
        return result;
      }),
    };
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'errorWrongCredentials')) throw error;
    if (error.status === 429) {
      reply.headers(error.headers);
      return { problem: THROTTLED };
    }
    return { problem: WRONG_CODE };
  }
}

/**
 * The QR code of an `otpauth://` URI as inline SVG: presentation attributes only (no
 * `style`), which the pages' Content-Security-Policy allows; dark modules on a white
 * square with its quiet zone, so phones read it in dark mode too.
 */
export async function qrCode(uri: string): Promise<Html> {
  // Loaded on first use: only the set-up pages draw a QR code.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 2, width: 208, errorCorrectionLevel: 'M' });
  return raw(svg.replace('<svg ', '<svg class="qr-code" role="img" aria-label="QR code for your authenticator app" '));
}

/** The secret in groups of four, as authenticator apps show and accept it. */
export const groupedSecret = (secret: string): string => secret.match(/.{1,4}/g)!.join(' ');

/** What a set-up shows: the QR code, and the key as text for typing. */
export async function setupInstructions(setup: TotpSetup): Promise<Html> {
  return html`<ol>
<li>Open an authenticator app on your phone (such as Aegis, FreeOTP, Google Authenticator, 1Password or Bitwarden) and scan this code:</li>
</ol>
<p>${await qrCode(setup.uri)}</p>
<p class="hint">Cannot scan it? Add an entry by hand with this key (time-based, 6 digits, every 30 seconds):</p>
<p class="key-row"><code class="key" id="totp-secret">${groupedSecret(setup.secret)}</code></p>
<ol start="2">
<li>Type the 6-digit code the app shows for it:</li>
</ol>`;
}

/** A field for the 6-digit code of an authenticator app (phones show the number pad and offer the code). */
export const totpField = (id: string, label: string, autofocus = false): Html =>
  html`<label for="${id}">${label}</label>
<input id="${id}" name="code" required maxlength="7" inputmode="numeric" pattern="\\d{3} ?\\d{3}" autocomplete="one-time-code" autocapitalize="none" spellcheck="false"${autofocus ? html` autofocus` : ''}>`;

/** A field that takes either a code of the app or a recovery code (before a change to the factor). */
export const anyCodeField = (id: string): Html =>
  html`<label for="${id}">A code from your app, or a recovery code</label>
<input id="${id}" name="code" required maxlength="32" autocomplete="one-time-code" autocapitalize="none" spellcheck="false">`;

/** Recovery codes, shown this once. */
export const recoveryCodesList = (codes: string[]): Html =>
  html`<p><strong>Save these recovery codes now</strong>: they are shown only this once. Each signs you in once if you lose your phone.</p>
<pre class="key" id="recovery-codes">${codes.join('\n')}</pre>
<p class="hint">Keep them somewhere safe, apart from your phone (a password manager, or printed).</p>`;
