import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Html, html } from '../../html.js';
import { sendPage } from '../layout.js';
import { CSRF_FIELD } from '../session-plugin.js';

/** Where the console lives; every page and form is under it. */
export const CONSOLE_PATH = '/console';

/** The console's sections, in the order of its menu. */
const SECTIONS = [
  { path: CONSOLE_PATH, label: 'Overview' },
  { path: `${CONSOLE_PATH}/accounts`, label: 'Accounts' },
  { path: `${CONSOLE_PATH}/files`, label: 'Files' },
  { path: `${CONSOLE_PATH}/shares`, label: 'Shares' },
  { path: `${CONSOLE_PATH}/blacklist`, label: 'Blacklists' },
  { path: `${CONSOLE_PATH}/audit`, label: 'Audit log' },
  { path: `${CONSOLE_PATH}/settings`, label: 'Settings' },
] as const;

/** How the audit log names the signed-in operator acting through the console. */
export const webActor = (request: FastifyRequest) => `web:${request.webSession!.account.login}`;

/** The hidden CSRF field every console form carries. */
export const csrfField = (request: FastifyRequest): Html => html`<input type="hidden" name="${CSRF_FIELD}" value="${request.webSession!.csrfToken}">`;

/** A console page: the section menu above the content, `current` marked. */
export function sendConsolePage(reply: FastifyReply, status: number, current: string, title: string, body: Html): FastifyReply {
  const menu = SECTIONS.map((section) => html`<a href="${section.path}"${section.path === current ? html` aria-current="page"` : ''}>${section.label}</a>`);
  return sendPage(
    reply,
    status,
    `${title} · Console`,
    html`<div class="console">
<nav class="console-nav" aria-label="Console">${menu}</nav>
${body}
</div>`,
  );
}

/**
 * The answer to a console form whose input the service refused: nothing changed, the
 * service's message, and a way back.
 */
export function sendRefusal(reply: FastifyReply, current: string, message: string, back: string): FastifyReply {
  return sendConsolePage(
    reply,
    400,
    current,
    'Not done',
    html`<section class="card"><h1>Nothing was changed</h1><p class="notice error" role="alert">${sentence(message)}</p><p><a class="button secondary" href="${back}">Back</a></p></section>`,
  );
}

/** A success note above a page, from a fixed list: the address never carries free text onto the page. */
export function doneNote(done: unknown, notes: Record<string, string>): Html | string {
  const text = typeof done === 'string' && Object.hasOwn(notes, done) ? notes[done] : undefined;
  return text ? html`<p class="notice ok" role="status">${text}</p>` : '';
}

/** "login must be ..." → "Login must be ...". */
export const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;

/** A "Next page" link that keeps the current filters, or nothing on the last page. */
export function nextPageLink(path: string, query: Record<string, string | undefined>, cursor: Record<string, string> | null): Html | string {
  if (!cursor) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, ...cursor })) if (value) params.set(name, value);
  return html`<p class="pager"><a class="button secondary" href="${path}?${params.toString()}" rel="next">Next page</a></p>`;
}

/** A query-string field as text ('' when absent or repeated). */
export function queryText(query: unknown, name: string): string {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** An account page's address. */
export const accountPath = (login: string) => `${CONSOLE_PATH}/accounts/${encodeURIComponent(login)}`;

/** A digest's "where is it used" page. */
export const digestPath = (sha256: string) => `${CONSOLE_PATH}/digests/${sha256}`;
