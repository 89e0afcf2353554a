import type { FastifyReply } from 'fastify';
import { html, type Html } from '../html.js';

/**
 * Every page's Content-Security-Policy: no script, style or frame from anywhere but the
 * site itself, no inline code, no plugins; uploaded content never runs on this origin.
 */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The page frame: header, content, footer. */
export function layout(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · filehaven</title>
<link rel="stylesheet" href="/static/site.css">
</head>
<body>
<header class="top"><a class="brand" href="/">filehaven</a><nav><a href="/developers">Developers</a></nav></header>
<main>
${body}
</main>
<footer class="bottom">filehaven · self-hosted file hosting</footer>
</body>
</html>
`;
}

/** Sends a page with the security headers every page carries. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: Html): FastifyReply {
  return reply
    .code(status)
    .headers({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': PAGE_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
      'X-Frame-Options': 'DENY',
      'Cache-Control': 'no-store',
    })
    .send(layout(title, body).value);
}

/** An error page in the same look. */
export function sendErrorPage(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return sendPage(reply, status, title, html`<section class="card"><h1>${title}</h1><p>${message}</p><p><a href="/">Home</a></p></section>`);
}
