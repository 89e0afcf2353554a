import cookie, { type CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ActiveSession } from '../../auth/session-service.js';
import { bodyField } from '../api/form.js';
import type { HttpContext, RouteFlags } from '../context.js';
import { html } from '../html.js';
import type { Links } from '../links.js';
import { sendErrorPage, sendPage } from './layout.js';
import { refererPath, signInUrl } from './return-path.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'sessions'>;

/** The session cookie: a random 256-bit token; the server keeps only its hash. */
export const SESSION_COOKIE = 'fh_session';
/** The short-lived cookie the sign-in and sign-up forms' CSRF tokens are bound to. */
export const PRE_SESSION_COOKIE = 'fh_presession';
/** The form field every state-changing form carries its CSRF token in. */
export const CSRF_FIELD = 'csrf';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in browser's session on web routes; null when signed out (and on API routes). */
    webSession: ActiveSession | null;
  }
}

/**
 * Cookie parsing (@fastify/cookie) and the session of every web request: pages and
 * browser 404s read `request.webSession`. API routes never look at cookies; they use
 * API keys (SPEC.md "Authentication").
 */
export async function registerSessions(app: FastifyInstance, context: Context): Promise<void> {
  // No cookie secret: the cookies carry random tokens checked against the server, not signed data.
  await app.register(cookie);
  app.decorateRequest('webSession', null);
  // A callback hook: every API request passes here, and has no session to wait for.
  app.addHook('onRequest', (request, reply, done) => {
    const flags = request.routeOptions.config as RouteFlags | undefined;
    if (!flags?.web && !request.is404) return done();
    loadWebSession(context, request, reply).then(() => done(), done);
  });
}

/**
 * Reads the session cookie into `request.webSession` (and renews or forgets the cookie).
 * Web routes get it from the hook above; a route outside the site that may serve a
 * signed-in browser (a direct link opened in the browser) calls it itself, only then.
 */
export async function loadWebSession(context: Context, request: FastifyRequest, reply: FastifyReply): Promise<ActiveSession | null> {
  const token = request.cookies[SESSION_COOKIE];
  if (token === undefined) return null;
  const session = await context.services.sessions.resume(token);
  if (!session) {
    // Ended, unknown or disabled: the browser forgets the dead token.
    writeCookie(reply, SESSION_COOKIE, '', { ...cookieOptions(request, context.links), expires: new Date(0), maxAge: 0 });
    return null;
  }
  request.webSession = session;
  if (session.renewed) setSessionCookie(request, reply, context, token, session.expiresAt);
  return session;
}

/**
 * HttpOnly, SameSite=Lax, Path=/, and Secure whenever the site is served over HTTPS:
 * {web_url} is https, or this request came over TLS (X-Forwarded-Proto counts only with
 * --trust-proxy, which Fastify's request.protocol honours).
 */
export function cookieOptions(request: FastifyRequest, links: Links): CookieSerializeOptions {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: links.webUrl.startsWith('https:') || request.protocol === 'https',
  };
}

const preSessionTokens = new WeakMap<FastifyRequest, string>();

/**
 * The pre-session the forms before sign-in (sign-in, sign-up, the second step) are bound
 * to: the browser's own while it is fresh, else a new short-lived cookie. Returns the token
 * for the hidden field. Once per request, whichever page module asks: two fresh
 * pre-sessions would send two cookies, the first form's token lost.
 */
export function preSessionToken(context: Context, request: FastifyRequest, reply: FastifyReply): string {
  const made = preSessionTokens.get(request);
  if (made !== undefined) return made;
  const held = request.cookies[PRE_SESSION_COOKIE];
  const pre = context.services.sessions.preSession(held);
  if (pre.cookie !== held) {
    const maxAge = Math.round((pre.expiresAt - context.services.clock()) / 1000);
    reply.setCookie(PRE_SESSION_COOKIE, pre.cookie, { ...cookieOptions(request, context.links), maxAge });
  }
  preSessionTokens.set(request, pre.csrfToken);
  return pre.csrfToken;
}

/** Sets the session cookie to live as long as the session does. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, context: Context, token: string, expiresAt: number): void {
  const maxAge = Math.max(0, Math.round((expiresAt - context.services.clock()) / 1000));
  writeCookie(reply, SESSION_COOKIE, token, { ...cookieOptions(request, context.links), maxAge });
}

/**
 * The session cookie is written as a header at once, not through @fastify/cookie's onSend
 * hook: a download takes its response over (send-blob.ts) and runs no onSend hook, and a
 * session renewed (or ended) by a download must reach the browser all the same.
 */
function writeCookie(reply: FastifyReply, name: string, value: string, options: CookieSerializeOptions): void {
  // cookieOptions never says secure: 'auto' (which only the plugin's own hook resolves).
  reply.header('Set-Cookie', cookie.fastifyCookie.serialize(name, value, { ...options, secure: options.secure === true }));
}

/** A text field of a url-encoded or multipart form body (never the query string), else undefined. */
export { bodyField };

/**
 * The check of every state-changing form of a signed-in browser: the session must exist
 * and the form must carry its CSRF token. True when it does; otherwise a 403 page has
 * been sent and nothing may change.
 */
export function sessionFormValid(context: Context, request: FastifyRequest, reply: FastifyReply): boolean {
  const session = request.webSession;
  if (!session) {
    // Sign-in comes back to the page the form was on, to send it again.
    const back = signInUrl(refererPath(request.headers.referer, context.links.webUrl));
    sendPage(
      reply,
      403,
      'Signed out',
      html`<section class="card"><h1>You are signed out</h1><p>Your session has ended, so this form was not sent. Sign in and try again.</p><p><a class="button" href="${back}">Sign in</a></p></section>`,
    );
    return false;
  }
  if (!context.services.sessions.checkCsrf(session, bodyField(request, CSRF_FIELD))) {
    sendCsrfRefusal(reply);
    return false;
  }
  return true;
}

/** sessionFormValid as a route's preHandler. */
export function requireSessionForm(context: Context) {
  // An async hook that has answered returns the reply, so Fastify stops there.
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> =>
    sessionFormValid(context, request, reply) ? undefined : reply;
}

/** The 403 page of a form without a valid CSRF token. */
export function sendCsrfRefusal(reply: FastifyReply): FastifyReply {
  return sendErrorPage(
    reply,
    403,
    'Forbidden',
    'This form has expired or did not come from this site, so nothing was changed. Go back, reload the page and try again.',
  );
}

/** A 303 to another page of the site (after a form: POST/redirect/GET), never cached. */
export function redirectTo(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('Cache-Control', 'no-store').header('Location', location).send();
}
