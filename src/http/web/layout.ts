import type { FastifyReply } from 'fastify';
import { type Html, html } from '../html.js';
import { signInUrl } from './return-path.js';
import { accountNav, type Viewer, viewerOf } from './session-nav.js';

/**
 * Every page's Content-Security-Policy: no script, style or frame from anywhere but the
 * site itself, no inline code, no plugins; uploaded content never runs on this origin.
 */
export const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** What a page adds to the frame besides its body. */
export interface PageExtras {
  /** More of <head> (a download page's OpenGraph tags). */
  head?: Html;
  /** Where the header's "Sign in" leads (back to this page afterwards). */
  signInHref?: string;
}

/** The page frame: header (with the signed-in viewer, if any), content, footer. */
export function layout(title: string, body: Html, viewer: Viewer | null = null, extras: PageExtras = {}): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · filehaven</title>
<link rel="stylesheet" href="/static/site.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">${extras.head ?? ''}
</head>
<body>
<header class="top"><a class="brand" href="/">filehaven</a><nav><a href="/developers">Developers</a>${accountNav(viewer, extras.signInHref)}</nav></header>
<main>
${body}
</main>
<footer class="bottom">filehaven · self-hosted file hosting</footer>
</body>
</html>
`;
}

/** PAGE_CSP with more directives (a download page's `media-src 'self'` or `frame-src 'self'`). */
export function pageCsp(...additions: string[]): string {
  return [PAGE_CSP, ...additions.filter((directive) => directive !== '')].join('; ');
}

/** Sends a page with the security headers every page carries; `csp` defaults to PAGE_CSP. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: Html, csp: string = PAGE_CSP, head?: Html): FastifyReply {
  const { request } = reply;
  // After sign-in, a page someone asked for by GET is shown again (return-path.ts).
  const signInHref = signInUrl(request.method === 'GET' ? request.url : null);
  return reply
    .code(status)
    .headers({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': csp,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
    })
    .send(layout(title, body, viewerOf(request), { head, signInHref }).value);
}

/** What to do next, under an error page's own message. */
const ERROR_HINTS: Record<number, string> = {
  403: 'If you followed a link or sent a form, go back, reload the page and try again.',
  404: 'Check the address for typos. If someone sent you this link, ask them for a new one.',
  410: 'The file stays unavailable at this address; its owner may be able to share it again.',
  429: 'Please wait a moment, then try again.',
  500: 'The problem has been logged. Please try again in a little while.',
};

/** An error page in the same look: the status, a title, what happened, what to do, a way home. */
export function sendErrorPage(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  const hint = ERROR_HINTS[status];
  return sendPage(
    reply,
    status,
    title,
    html`<section class="card error-page">
<p class="status-code">Error ${status}</p>
<h1>${title}</h1>
<p>${message}</p>
${hint ? html`<p class="meta">${hint}</p>` : ''}
<p><a class="button secondary" href="/">Go to the home page</a></p>
</section>`,
  );
}
