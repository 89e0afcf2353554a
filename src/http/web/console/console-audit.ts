import type { FastifyInstance } from 'fastify';
import { InputError } from '../../../domain/errors.js';
import type { HttpContext } from '../../context.js';
import { html } from '../../html.js';
import { humanDate } from '../format.js';
import { CONSOLE_PATH, nextPageLink, queryText, sendConsolePage, sendRefusal } from './console-page.js';

/** The services this module calls. */
type Context = HttpContext<'audit'>;

const AUDIT_PATH = `${CONSOLE_PATH}/audit`;
const PAGE_SIZE = 50;
const DAY_MS = 86_400_000;

/** A `YYYY-MM-DD` field (UTC) as epoch ms of its start; undefined when empty; InputError otherwise. */
function dateField(text: string, label: string): number | undefined {
  if (text === '') return undefined;
  const at = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
  if (!Number.isFinite(at)) throw new InputError(`the ${label} date must look like 2026-11-21`);
  return at;
}

/** `before=<at>.<id>` of a next-page link; anything else is the first page. */
function cursorOf(text: string): { at: number; id: number } | undefined {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(text);
  return match ? { at: Number(match[1]), id: Number(match[2]) } : undefined;
}

/** The audit log with filters (actor, action, object, dates), newest first, paged. */
export function registerConsoleAudit(app: FastifyInstance, context: Context): void {
  const { services } = context;

  app.get(AUDIT_PATH, { config: { web: true } }, async (request, reply) => {
    const filters = {
      actor: queryText(request.query, 'actor'),
      action: queryText(request.query, 'action'),
      object: queryText(request.query, 'object'),
      from: queryText(request.query, 'from'),
      to: queryText(request.query, 'to'),
    };
    let page: Awaited<ReturnType<typeof services.audit.search>>;
    try {
      const to = dateField(filters.to, 'to');
      page = await services.audit.search({
        actor: filters.actor,
        action: filters.action,
        object: filters.object,
        from: dateField(filters.from, 'from'),
        // "to" names the last day included.
        to: to === undefined ? undefined : to + DAY_MS,
        before: cursorOf(queryText(request.query, 'before')),
        limit: PAGE_SIZE,
      });
    } catch (error) {
      if (error instanceof InputError) return sendRefusal(reply, AUDIT_PATH, error.message, AUDIT_PATH);
      throw error;
    }
    const field = (name: keyof typeof filters, label: string, extra: ReturnType<typeof html> | string = '') =>
      html`<label>${label}<input name="${name}" value="${filters[name]}" maxlength="255" autocapitalize="none" spellcheck="false"${extra}></label>`;
    const rows = page.items.map(
      (e) => html`<tr>
<td class="when">${humanDate(e.at)}</td>
<td class="actor"><bdi>${e.actor}</bdi></td>
<td class="action"><code>${e.action}</code></td>
<td class="object"><bdi>${e.object}</bdi></td>
<td class="details"><bdi>${e.details || '–'}</bdi></td>
</tr>`,
    );
    const next = page.next ? { before: `${page.next.at}.${page.next.id}` } : null;
    return sendConsolePage(
      reply,
      200,
      AUDIT_PATH,
      'Audit log',
      html`<section class="card">
<h1>Audit log</h1>
<p class="meta">Every change made by an operator, from the command line (<code>cli:</code>) or this console (<code>web:</code>), newest first.</p>
<form class="filter-grid" method="get" action="${AUDIT_PATH}" role="search">
${field('actor', 'Actor', html` placeholder="web:admin"`)}
${field('action', 'Action starts with', html` placeholder="accounts."`)}
${field('object', 'Object', html` placeholder="account:bob"`)}
<label>From (UTC)<input name="from" type="date" value="${filters.from}"></label>
<label>To (UTC)<input name="to" type="date" value="${filters.to}"></label>
<button class="button small" type="submit">Filter</button>
</form>
${
  rows.length === 0
    ? html`<p class="meta">No entry matches.</p>`
    : html`<div class="table-scroll"><table class="console-table audit-table">
<thead><tr><th>When</th><th>Actor</th><th>Action</th><th>Object</th><th>Details</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`
}
${nextPageLink(AUDIT_PATH, filters, next)}
</section>`,
    );
  });
}
