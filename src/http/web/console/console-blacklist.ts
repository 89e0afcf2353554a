import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InputError } from '../../../domain/errors.js';
import type { HttpContext } from '../../context.js';
import { html } from '../../html.js';
import { humanDate } from '../format.js';
import { bodyField, redirectTo } from '../session-plugin.js';
import { backTo, withDone } from './console-files.js';
import { CONSOLE_PATH, csrfField, digestPath, doneNote, queryText, sendConsolePage, sendRefusal, webActor } from './console-page.js';

/** The services this module calls. */
type Context = HttpContext<'files' | 'moderation' | 'operator'>;

const BLACKLIST_PATH = `${CONSOLE_PATH}/blacklist`;
const PAGE_SIZE = 50;
const NOTES: Record<string, string> = {
  'digest-added': 'Digest blacklisted.',
  'digest-removed': 'Digest removed from the blacklist.',
  'name-added': 'Name pattern blacklisted.',
  'name-removed': 'Name pattern removed from the blacklist.',
};

/** `?digests=N` / `?names=N`: a page number from 1, else 1. */
const pageNumber = (text: string) => (/^[1-9]\d{0,5}$/.test(text) ? Number(text) : 1);

/** The name and digest blacklists: list (paged), add, remove. */
export function registerConsoleBlacklist(app: FastifyInstance, context: Context): void {
  const { services } = context;
  const { actions } = services.operator;

  app.get(BLACKLIST_PATH, { config: { web: true } }, async (request, reply) => {
    // Both lists are short by nature (an operator types each entry); paged here all the same.
    const [digests, names] = await Promise.all([services.files.blacklist(), services.moderation.namePatterns()]);
    const digestPage = pageNumber(queryText(request.query, 'digests'));
    const namePage = pageNumber(queryText(request.query, 'names'));
    const slice = <T>(list: T[], page: number) => list.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
    const pager = (name: 'digests' | 'names', page: number, total: number) => {
      const other: Record<string, string> = name === 'digests' ? { names: String(namePage) } : { digests: String(digestPage) };
      const link = (to: number, label: string) =>
        html`<a class="button small secondary" href="${BLACKLIST_PATH}?${new URLSearchParams({ ...other, [name]: String(to) }).toString()}">${label}</a>`;
      if (total <= PAGE_SIZE) return '';
      return html`<p class="pager">${page > 1 ? link(page - 1, 'Previous') : ''} <span class="meta">page ${page} of ${Math.ceil(total / PAGE_SIZE)}</span> ${page * PAGE_SIZE < total ? link(page + 1, 'Next') : ''}</p>`;
    };
    const removeForm = (action: string, field: string, value: string) =>
      html`<form class="inline" method="post" action="${BLACKLIST_PATH}/${action}/remove">${csrfField(request)}<input type="hidden" name="${field}" value="${value}"><button class="button small danger" type="submit">Remove</button></form>`;
    const nameRows = slice(names, namePage).map(
      (n) =>
        html`<tr><td><code><bdi>${n.pattern}</bdi></code></td><td><bdi>${n.reason || '–'}</bdi></td><td>${humanDate(n.createdAt)}</td><td class="actions">${removeForm('names', 'pattern', n.pattern)}</td></tr>`,
    );
    const digestRows = slice(digests, digestPage).map(
      (d) =>
        html`<tr><td><a href="${digestPath(d.sha256)}"><code>${d.sha256.slice(0, 16)}…</code></a></td><td><bdi>${d.reason || '–'}</bdi></td><td>${humanDate(d.createdAt)}</td><td class="actions">${removeForm('digests', 'sha256', d.sha256)}</td></tr>`,
    );
    const head = html`<thead><tr><th>Entry</th><th>Reason</th><th>Added</th><th></th></tr></thead>`;
    return sendConsolePage(
      reply,
      200,
      BLACKLIST_PATH,
      'Blacklists',
      html`<section class="card">
<h1>File-name patterns</h1>
${doneNote(queryText(request.query, 'done'), NOTES)}
<p class="meta">Uploads whose whole name matches are refused, ignoring case: <code>*</code> any run of characters, <code>?</code> one.</p>
<form class="field-row" method="post" action="${BLACKLIST_PATH}/names">
${csrfField(request)}
<label for="pattern">Pattern</label><input id="pattern" name="pattern" required maxlength="255" placeholder="*.exe" autocapitalize="none" spellcheck="false">
<label for="name-reason">Reason</label><input id="name-reason" name="reason" maxlength="255">
<button class="button small" type="submit">Add pattern</button>
</form>
${nameRows.length === 0 ? html`<p class="meta">No pattern is listed.</p>` : html`<div class="table-scroll"><table class="console-table">${head}<tbody>${nameRows}</tbody></table></div>`}
${pager('names', namePage, names.length)}
</section>
<section class="card">
<h2>Contents (SHA-256)</h2>
<p class="meta">Uploads with a listed digest are refused. Listing one can block the files already stored with it.</p>
<form class="stack" method="post" action="${BLACKLIST_PATH}/digests">
${csrfField(request)}
<label for="sha256">SHA-256</label><input id="sha256" name="sha256" required maxlength="64" minlength="64" pattern="[0-9a-fA-F]{64}" autocapitalize="none" spellcheck="false">
<label for="digest-reason">Reason <span class="meta">(optional)</span></label><input id="digest-reason" name="reason" maxlength="255">
<label class="check"><input type="checkbox" name="block_existing" value="yes"> Block the active files with this content too</label>
<button class="button" type="submit">Add digest</button>
</form>
${digestRows.length === 0 ? html`<p class="meta">No digest is listed.</p>` : html`<div class="table-scroll"><table class="console-table">${head}<tbody>${digestRows}</tbody></table></div>`}
${pager('digests', digestPage, digests.length)}
</section>`,
    );
  });

  /** A blacklist form: an InputError (bad digest or pattern, not listed) becomes a refusal page. */
  const blacklistForm = (path: string, run: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
    app.post(`${BLACKLIST_PATH}/${path}`, { config: { web: true } }, async (request, reply) => {
      try {
        return await run(request, reply);
      } catch (error) {
        if (error instanceof InputError) return sendRefusal(reply, BLACKLIST_PATH, error.message, BLACKLIST_PATH);
        throw error;
      }
    });

  blacklistForm('digests', async (request, reply) => {
    await actions.blacklistDigest(
      webActor(request),
      bodyField(request, 'sha256') ?? '',
      bodyField(request, 'reason') ?? '',
      bodyField(request, 'block_existing') === 'yes',
    );
    const back = bodyField(request, 'back');
    return redirectTo(reply, back ? withDone(backTo(back), 'blacklisted') : `${BLACKLIST_PATH}?done=digest-added`);
  });
  blacklistForm('digests/remove', async (request, reply) => {
    await actions.unblacklistDigest(webActor(request), bodyField(request, 'sha256') ?? '');
    return redirectTo(reply, `${BLACKLIST_PATH}?done=digest-removed`);
  });
  blacklistForm('names', async (request, reply) => {
    await actions.blacklistName(webActor(request), bodyField(request, 'pattern') ?? '', bodyField(request, 'reason') ?? '');
    return redirectTo(reply, `${BLACKLIST_PATH}?done=name-added`);
  });
  blacklistForm('names/remove', async (request, reply) => {
    await actions.unblacklistName(webActor(request), bodyField(request, 'pattern') ?? '');
    return redirectTo(reply, `${BLACKLIST_PATH}?done=name-removed`);
  });
}
