import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, InputError } from '../../../domain/errors.js';
import type { LinkPage, LinkState, OperatorRequestView, OperatorShareView } from '../../../sharing/operator-sharing-service.js';
import type { HttpContext } from '../../context.js';
import { type Html, html } from '../../html.js';
import { humanDate, humanSize } from '../format.js';
import { bodyField, redirectTo } from '../session-plugin.js';
import { backTo, withDone } from './console-files.js';
import { accountPath, CONSOLE_PATH, csrfField, doneNote, nextPageLink, queryText, sendConsolePage, sendRefusal, webActor } from './console-page.js';

/** The services this module calls. */
type Context = HttpContext<'operator'>;

export const SHARES_PATH = `${CONSOLE_PATH}/shares`;
const REQUESTS_PATH = `${CONSOLE_PATH}/requests`;
const PAGE_SIZE = 50;
const NOTES: Record<string, string> = {
  revoke: 'Share revoked: its link no longer works.',
  close: 'Upload request closed: its link takes nothing more; the files stay.',
};
const STATE_BADGES: Record<LinkState, string> = { live: 'badge ok', expired: 'badge', revoked: 'badge danger', closed: 'badge danger' };

type Cursor = { createdAt: number; id: string };

/** `<created_at>.<link id>` of a next-page link; anything else is the first page. */
function cursorOf(text: string): Cursor | undefined {
  const match = /^(\d{1,15})\.([A-Za-z0-9]{22})$/.exec(text);
  return match ? { createdAt: Number(match[1]), id: match[2]! } : undefined;
}
const cursorText = (name: string, next: Cursor | null) => (next ? { [name]: `${next.createdAt}.${next.id}` } : null);

const ofMax = (n: number, max: number | null, show: (v: number) => string = String) => (max === null ? show(n) : `${show(n)} / ${show(max)}`);
const until = (expiresAt: number | null) => (expiresAt === null ? 'never' : humanDate(expiresAt));
const ownerCell = (login: string, id: number) => (login ? html`<a href="${accountPath(login)}"><bdi>${login}</bdi></a>` : `#${id}`);

/**
 * Shares and upload requests of every account (issue 25): searched by owner, live ones only
 * or all, with their counts, expiry and state; an operator revokes a share or closes a
 * request (OperatorSharingService, audited as `web:<login>`), and the owner's link stops
 * at once, as if the owner had done it.
 */
export function registerConsoleShares(app: FastifyInstance, context: Context): void {
  const { services } = context;
  const sharing = services.operator.sharing;

  const button = (request: FastifyRequest, action: string, label: string, back: string) =>
    html`<form class="inline" method="post" action="${action}">${csrfField(request)}<input type="hidden" name="back" value="${back}"><button class="button small danger" type="submit">${label}</button></form>`;

  const shareTable = (request: FastifyRequest, page: LinkPage<OperatorShareView>, back: string): Html => {
    if (page.items.length === 0) return html`<p class="meta">No share matches.</p>`;
    const rows = page.items.map(
      ({ share, ownerLogin, target, state }) => html`<tr data-share="${share.id}">
<td><bdi>${target || '(gone)'}</bdi><div class="meta-line">${share.fileId !== null ? 'file' : 'folder'} <code>${share.fileId ?? share.folderId ?? ''}</code> · link <code>${share.id}</code> · ${humanDate(share.createdAt)}</div></td>
<td>${ownerCell(ownerLogin, share.ownerId)}</td>
<td class="size">${ofMax(share.downloads, share.maxDownloads)}</td>
<td class="when">${until(share.expiresAt)}</td>
<td><span class="${STATE_BADGES[state]}">${state}</span>${share.passwordHash !== null ? html` <span class="badge">password</span>` : ''}${share.fast ? html` <span class="badge ok">fast</span>` : ''}</td>
<td class="actions">${state === 'live' || state === 'expired' ? button(request, `${SHARES_PATH}/${share.id}/revoke`, 'Revoke', back) : ''}</td>
</tr>`,
    );
    return html`<div class="table-scroll"><table class="console-table shares-table">
<thead><tr><th>Shared</th><th>Owner</th><th class="size">Downloads</th><th>Expires</th><th>State</th><th>Actions</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
  };

  const requestTable = (request: FastifyRequest, page: LinkPage<OperatorRequestView>, back: string): Html => {
    if (page.items.length === 0) return html`<p class="meta">No upload request matches.</p>`;
    const rows = page.items.map(
      ({ request: r, ownerLogin, folder, state }) => html`<tr data-request="${r.id}">
<td><bdi>${r.title || '(untitled)'}</bdi><div class="meta-line">into <bdi>${folder === null ? 'the top level' : folder || '(gone)'}</bdi> · link <code>${r.id}</code> · ${humanDate(r.createdAt)}</div></td>
<td>${ownerCell(ownerLogin, r.ownerId)}</td>
<td class="size">${ofMax(r.files, r.maxFiles)}</td>
<td class="size">${ofMax(r.bytes, r.maxBytes, humanSize)}</td>
<td class="when">${until(r.expiresAt)}</td>
<td><span class="${STATE_BADGES[state]}">${state}</span>${r.passwordHash !== null ? html` <span class="badge">password</span>` : ''}</td>
<td class="actions">${state !== 'closed' ? button(request, `${REQUESTS_PATH}/${r.id}/close`, 'Close', back) : ''}</td>
</tr>`,
    );
    return html`<div class="table-scroll"><table class="console-table shares-table">
<thead><tr><th>Request</th><th>Owner</th><th class="size">Files</th><th class="size">Bytes</th><th>Expires</th><th>State</th><th>Actions</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
  };

  app.get(SHARES_PATH, { config: { web: true } }, async (request, reply) => {
    const filters = { owner: queryText(request.query, 'owner'), live: queryText(request.query, 'live') === '1' ? '1' : '' };
    const search = { owner: filters.owner, liveOnly: filters.live === '1', limit: PAGE_SIZE };
    let shares: LinkPage<OperatorShareView>;
    let requests: LinkPage<OperatorRequestView>;
    try {
      [shares, requests] = await Promise.all([
        sharing.shares({ ...search, before: cursorOf(queryText(request.query, 'shares_before')) }),
        sharing.requests({ ...search, before: cursorOf(queryText(request.query, 'requests_before')) }),
      ]);
    } catch (error) {
      if (error instanceof InputError) return sendRefusal(reply, SHARES_PATH, error.message, SHARES_PATH);
      throw error;
    }
    const back = request.url;
    return sendConsolePage(
      reply,
      200,
      SHARES_PATH,
      'Shares',
      html`<section class="card">
<h1>Shares and upload requests</h1>
${doneNote(queryText(request.query, 'done'), NOTES)}
<form class="filter-grid" method="get" action="${SHARES_PATH}" role="search">
<label>Owner login<input name="owner" value="${filters.owner}" maxlength="64" autocapitalize="none" spellcheck="false"></label>
<label>Show<select name="live"><option value="">all</option><option value="1"${filters.live ? html` selected` : ''}>live only (not revoked or closed)</option></select></label>
<button class="button small" type="submit">Search</button>
</form>
<h2 id="shares">Shares</h2>
${shareTable(request, shares, back)}
${nextPageLink(SHARES_PATH, filters, cursorText('shares_before', shares.next))}
<h2 id="requests">Upload requests</h2>
${requestTable(request, requests, back)}
${nextPageLink(SHARES_PATH, filters, cursorText('requests_before', requests.next))}
</section>`,
    );
  });

  const linkRoute = {
    config: { web: true },
    schema: { params: { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] } },
  } as const;
  type LinkRequest = FastifyRequest<{ Params: { id: string } }>;

  /** Runs an operator's revoke or close; a link that is unknown, revoked or closed already changes nothing and says so. */
  const act = async (request: LinkRequest, reply: FastifyReply, done: 'revoke' | 'close', work: () => Promise<unknown>) => {
    const asked = bodyField(request, 'back');
    const back = asked === undefined ? SHARES_PATH : backTo(asked);
    try {
      await work();
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return sendRefusal(reply, SHARES_PATH, error.message, back);
      throw error;
    }
    return redirectTo(reply, withDone(back, done));
  };

  app.post(`${SHARES_PATH}/:id/revoke`, linkRoute, async (request: LinkRequest, reply) =>
    act(request, reply, 'revoke', () => sharing.revokeShare(webActor(request), request.params.id)),
  );
  app.post(`${REQUESTS_PATH}/:id/close`, linkRoute, async (request: LinkRequest, reply) =>
    act(request, reply, 'close', () => sharing.closeRequest(webActor(request), request.params.id)),
  );
}
