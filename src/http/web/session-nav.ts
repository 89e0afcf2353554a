import type { FastifyRequest } from 'fastify';
import { type Html, html } from '../html.js';

/** Who the page header greets: the signed-in login and the sign-out form's CSRF token. */
export interface Viewer {
  login: string;
  csrfToken: string;
  /** Operators get a link to the console (/console); nobody else sees it exists. */
  operator?: boolean;
}

/** The viewer of a request: its web session, if signed in (see session-plugin.ts). */
export function viewerOf(request: FastifyRequest): Viewer | null {
  const session = request.webSession;
  return session ? { login: session.account.login, csrfToken: session.csrfToken, operator: session.account.isOperator } : null;
}

/**
 * The account part of the header: "Sign in" (to `signInHref`, which returns to this page),
 * or "My files", "Shares", the login, "Profile" and a sign-out button (a form: no JS needed).
 */
export function accountNav(viewer: Viewer | null, signInHref = '/signin'): Html {
  if (!viewer) return html`<a href="${signInHref}">Sign in</a>`;
  return html`${viewer.operator ? html`<a href="/console">Console</a>` : ''}<a href="/my/files">My files</a><a href="/my/shares">Shares</a><span class="who" title="Signed in"><bdi>${viewer.login}</bdi></span><a href="/accounts/profile/misc">Profile</a><form class="inline" method="post" action="/signout"><input type="hidden" name="csrf" value="${viewer.csrfToken}"><button class="link" type="submit">Sign out</button></form>`;
}
