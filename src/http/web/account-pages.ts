import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, InputError } from '../../domain/errors.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { sendErrorPage, sendPage } from './layout.js';
import { checkPasswordSignInAllowed, oidcSignInOption, passwordSignInShown } from './oidc-pages.js';
import { passkeySignInOption } from './passkey-pages.js';
import { RETURN_FIELD, safeReturnPath } from './return-path.js';
import { afterPasswordSignIn } from './second-factor-pages.js';
import {
  bodyField,
  CSRF_FIELD,
  cookieOptions,
  PRE_SESSION_COOKIE,
  preSessionToken as preSessionTokenOf,
  redirectTo,
  SESSION_COOKIE,
  sessionFormValid,
} from './session-plugin.js';
import { PROFILE_PATH } from './sign-in-session.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'limits' | 'oidc' | 'passkeys' | 'secondFactors' | 'sessions' | 'signInChallenges' | 'signUp'>;

export { PROFILE_PATH };

/** A message shown above a form, and the HTTP status it is sent with. */
interface Problem {
  status: number;
  message: string;
}

const EXPIRED_FORM: Problem = {
  status: 403,
  message: 'This form has expired or did not come from this site, so nothing was sent. Please try again.',
};

/** "login must be ..." → "Login must be ...". */
const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;

const problemNote = (problem: Problem | null): Html | string => (problem ? html`<p class="notice error" role="alert">${problem.message}</p>` : '');

/**
 * Sign-in, sign-out and sign-up ("The public site"). Every form works without JavaScript;
 * every POST carries a CSRF token (session-plugin.ts, session-service.ts).
 */
export function registerAccountPages(app: FastifyInstance, context: Context): void {
  const { services } = context;

  /** The pre-session token of the sign-in and sign-up forms (one per request: session-plugin.ts). */
  const preSessionToken = (request: FastifyRequest, reply: FastifyReply): string => preSessionTokenOf(context, request, reply);

  const preSessionFormValid = (request: FastifyRequest) =>
    services.sessions.checkPreSessionCsrf(request.cookies[PRE_SESSION_COOKIE], bodyField(request, CSRF_FIELD));

  /** The page to return to: `?next=` on a GET, the hidden field on a POST; null unless safe. */
  const returnPath = (request: FastifyRequest): string | null =>
    safeReturnPath(request.method === 'POST' ? bodyField(request, RETURN_FIELD) : (request.query as Record<string, unknown>)[RETURN_FIELD]);

  const returnField = (next: string | null) => (next ? html`\n<input type="hidden" name="${RETURN_FIELD}" value="${next}">` : '');
  const withReturn = (path: string, next: string | null) => (next ? `${path}?${RETURN_FIELD}=${encodeURIComponent(next)}` : path);

  /**
   * The sign-in page: the other ways in (single sign-on, a passkey) above the password
   * form, which `--oidc-only` hides (oidc-pages.ts says for whom).
   */
  const signInPage = (request: FastifyRequest, reply: FastifyReply, login: string, problem: Problem | null) => {
    const passwordForm = passwordSignInShown(context, request)
      ? html`<form class="stack" method="post" action="/signin">
<input type="hidden" name="${CSRF_FIELD}" value="${preSessionToken(request, reply)}">${returnField(returnPath(request))}
<label for="login">Login</label>
<input id="login" name="login" value="${login}" required maxlength="64" autocomplete="username webauthn" autocapitalize="none" spellcheck="false"${problem ? '' : html` autofocus`}>
<label for="password">Password</label>
<input id="password" name="password" type="password" required maxlength="1024" autocomplete="current-password">
<button class="button" type="submit">Sign in</button>
</form>`
      : '';
    return sendPage(
      reply,
      problem?.status ?? 200,
      'Sign in',
      html`<section class="card narrow">
<h1>Sign in</h1>
${problemNote(problem)}
${oidcSignInOption(context, request)}
${passkeySignInOption(context, request, () => preSessionToken(request, reply))}
${passwordForm}
${services.signUp.open && !services.config.oidcOnly ? html`<p class="meta">No account yet? <a href="${withReturn('/signup', returnPath(request))}">Create one</a>.</p>` : ''}
</section>`,
    );
  };

  app.get('/signin', { config: { web: true } }, async (request, reply) => {
    if (request.webSession) return redirectTo(reply, returnPath(request) ?? PROFILE_PATH);
    return signInPage(request, reply, '', null);
  });

  app.post('/signin', { config: { web: true } }, async (request, reply) => {
    const login = bodyField(request, 'login') ?? '';
    if (!preSessionFormValid(request)) return signInPage(request, reply, login, EXPIRED_FORM);
    const password = bodyField(request, 'password') ?? '';
    try {
      // The brute-force limit of POST /apikeys (API.md 8): per client address and per login.
      const account = await services.limits.signIn.attempt(request.ip, login, () => services.accounts.authenticate(login, password));
      // --oidc-only: operators only, with the same answer as a wrong password for anyone else.
      checkPasswordSignInAllowed(context, account);
      return await afterPasswordSignIn(context, request, reply, account, returnPath(request));
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'errorWrongCredentials')) throw error;
      if (error.status === 429) {
        reply.headers(error.headers);
        return signInPage(request, reply, login, { status: 429, message: 'Too many failed sign-ins. Wait a minute, then try again.' });
      }
      return signInPage(request, reply, login, { status: 401, message: 'Wrong login or password.' });
    }
  });

  app.post('/signout', { config: { web: true } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    // Without a live session there is nothing to end: forget the cookie, go home.
    if (!request.webSession || token === undefined) {
      if (token !== undefined) reply.clearCookie(SESSION_COOKIE, cookieOptions(request, context.links));
      return redirectTo(reply, '/');
    }
    if (!sessionFormValid(context, request, reply)) return reply;
    await services.sessions.end(token);
    reply.clearCookie(SESSION_COOKIE, cookieOptions(request, context.links));
    return redirectTo(reply, '/');
  });

  interface SignUpValues {
    login: string;
    name: string;
    email: string;
  }

  const signUpPage = (request: FastifyRequest, reply: FastifyReply, values: SignUpValues, problem: Problem | null) =>
    sendPage(
      reply,
      problem?.status ?? 200,
      'Create an account',
      html`<section class="card narrow">
<h1>Create an account</h1>
${problemNote(problem)}
<form class="stack" method="post" action="/signup">
<input type="hidden" name="${CSRF_FIELD}" value="${preSessionToken(request, reply)}">${returnField(returnPath(request))}
<label for="login">Login</label>
<input id="login" name="login" value="${values.login}" required maxlength="64" pattern="[A-Za-z0-9._@+\\-]{1,64}" autocomplete="username" autocapitalize="none" spellcheck="false" aria-describedby="login-hint">
<p class="hint" id="login-hint">Letters, digits and . _ @ + - (up to 64).</p>
<label for="name">Name <span class="meta">(optional)</span></label>
<input id="name" name="name" value="${values.name}" maxlength="100" autocomplete="name">
<label for="email">E-mail <span class="meta">(optional)</span></label>
<input id="email" name="email" type="email" value="${values.email}" maxlength="254" autocomplete="email">
<label for="password">Password</label>
<input id="password" name="password" type="password" required minlength="8" maxlength="1024" autocomplete="new-password" aria-describedby="password-hint">
<p class="hint" id="password-hint">At least 8 characters.</p>
<label for="password_again">Password again</label>
<input id="password_again" name="password_again" type="password" required minlength="8" maxlength="1024" autocomplete="new-password">
<button class="button" type="submit">Create account</button>
</form>
<p class="meta">Have an account? <a href="${withReturn('/signin', returnPath(request))}">Sign in</a>.</p>
</section>`,
    );

  const signUpClosed = (reply: FastifyReply) => sendErrorPage(reply, 404, 'Not found', 'There is nothing at this address.');
  // Under --oidc-only accounts come from single sign-on (--oidc-signup), never from this form.
  const signUpOpen = () => services.signUp.open && !services.config.oidcOnly;

  app.get('/signup', { config: { web: true } }, async (request, reply) => {
    if (!services.signUp.open) return signUpClosed(reply);
    if (!signUpOpen()) return signUpClosed(reply);
    if (request.webSession) return redirectTo(reply, returnPath(request) ?? PROFILE_PATH);
    return signUpPage(request, reply, { login: '', name: '', email: '' }, null);
  });

  app.post('/signup', { config: { web: true } }, async (request, reply) => {
    if (!services.signUp.open) return signUpClosed(reply);
    if (!signUpOpen()) return signUpClosed(reply);
    const values: SignUpValues = {
      login: bodyField(request, 'login') ?? '',
      name: bodyField(request, 'name') ?? '',
      email: bodyField(request, 'email') ?? '',
    };
    if (!preSessionFormValid(request)) return signUpPage(request, reply, values, EXPIRED_FORM);
    try {
      const account = await services.signUp.signUp({
        ...values,
        password: bodyField(request, 'password') ?? '',
        passwordAgain: bodyField(request, 'password_again') ?? '',
      });
      // Like a password sign-in: `--second-factor-required everyone` asks for a set-up first.
      return await afterPasswordSignIn(context, request, reply, account, returnPath(request));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      return signUpPage(request, reply, values, { status: 400, message: sentence(error.message) });
    }
  });
}
