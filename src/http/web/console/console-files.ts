import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InputError } from '../../../domain/errors.js';
import { type FileStatus, isFileStatus } from '../../../domain/types.js';
import type { OperatorFileInfo, OperatorFileView } from '../../../services/moderation-service.js';
import type { DigestUsage, SearchPage } from '../../../services/operator-search-service.js';
import type { HttpContext } from '../../context.js';
import { type Html, html } from '../../html.js';
import { humanDate, humanSize } from '../format.js';
import { bodyField, redirectTo } from '../session-plugin.js';
import { accountPath, CONSOLE_PATH, csrfField, digestPath, doneNote, nextPageLink, queryText, sendConsolePage, sendRefusal, webActor } from './console-page.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'moderation' | 'operator'>;

const FILES_PATH = `${CONSOLE_PATH}/files`;
const PAGE_SIZE = 50;
const STATE_NAMES: Record<FileStatus, string> = { A: 'active', B: 'blocked', D: 'deleted' };
const NOTES: Record<string, string> = { block: 'File blocked.', unblock: 'File unblocked.', delete: 'File deleted.', blacklisted: 'Digest blacklisted.' };

type Cursor = { createdAt: number; id: string };

/** `before=<created_at>.<id>` of a next-page link; anything else is the first page. */
function cursorOf(text: string): Cursor | undefined {
  const match = /^(\d{1,15})\.([A-Z0-9]{10})$/.exec(text);
  return match ? { createdAt: Number(match[1]), id: match[2]! } : undefined;
}
const cursorText = (next: Cursor | null) => (next ? { before: `${next.createdAt}.${next.id}` } : null);

/**
 * Where a console form may send the operator back to: a console page of this site, never
 * an address from elsewhere (an open redirect).
 */
export function backTo(raw: string | undefined): string {
  return raw && /^\/console(\/[A-Za-z0-9._~%/-]*)?(\?[A-Za-z0-9._~%&=+*-]*)?$/.test(raw) ? raw : FILES_PATH;
}

/** Files: search by name, owner, digest; block, unblock, delete; where a digest is used. */
export function registerConsoleFiles(app: FastifyInstance, context: Context): void {
  const { services } = context;

  /** The file table with each row's actions; `back` is the page the forms return to. */
  const fileTable = (request: FastifyRequest, page: SearchPage<OperatorFileView, Cursor>, back: string): Html => {
    if (page.items.length === 0) return html`<p class="meta">No file matches.</p>`;
    // A live file past its expiry behaves as deleted already; gc marks it D on its next run.
    const now = services.clock();
    const expiryNote = (status: FileStatus, expiresAt: number | null): Html | string =>
      status === 'D' || expiresAt === null
        ? ''
        : expiresAt <= now
          ? html` <span class="badge state-D" title="since ${humanDate(expiresAt)}">expired</span>`
          : html`<div class="meta-line">expires ${humanDate(expiresAt)}</div>`;
    const action = (file: OperatorFileView, verb: string, label: string, danger = false) =>
      html`<form class="inline" method="post" action="${FILES_PATH}/${file.id}/${verb}">${csrfField(request)}<input type="hidden" name="back" value="${back}"><button class="button small${danger ? ' danger' : ' secondary'}" type="submit">${label}</button></form>`;
    const rows = page.items.map(
      (f) => html`<tr>
<td><bdi>${f.name}</bdi><div class="meta-line"><code>${f.id}</code> · ${humanDate(f.createdAt)} · <a href="${digestPath(f.sha256)}" title="Where this content is used">${f.sha256.slice(0, 12)}…</a></div></td>
<td>${f.ownerLogin ? html`<a href="${accountPath(f.ownerLogin)}"><bdi>${f.ownerLogin}</bdi></a>` : `#${f.ownerId}`}</td>
<td><span class="badge state-${f.status}">${STATE_NAMES[f.status]}</span>${expiryNote(f.status, f.expiresAt)}</td>
<td class="size">${humanSize(f.size)}</td>
<td class="actions">${f.status === 'A' ? action(f, 'block', 'Block') : ''}${f.status === 'B' ? action(f, 'unblock', 'Unblock') : ''}${f.status !== 'D' ? action(f, 'delete', 'Delete', true) : ''}</td>
</tr>`,
    );
    return html`<div class="table-scroll"><table class="console-table">
<thead><tr><th>Name</th><th>Owner</th><th>State</th><th class="size">Size</th><th>Actions</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
  };

  app.get(FILES_PATH, { config: { web: true } }, async (request, reply) => {
    const filters = {
      name: queryText(request.query, 'name'),
      owner: queryText(request.query, 'owner'),
      sha256: queryText(request.query, 'sha256'),
      status: queryText(request.query, 'status'),
    };
    const states = isFileStatus(filters.status) ? [filters.status] : undefined;
    let page: SearchPage<OperatorFileView, Cursor>;
    try {
      page = await services.operator.search.files({ ...filters, states, before: cursorOf(queryText(request.query, 'before')), limit: PAGE_SIZE });
    } catch (error) {
      if (error instanceof InputError) return sendRefusal(reply, FILES_PATH, error.message, FILES_PATH);
      throw error;
    }
    const back = request.url;
    const option = (value: string, label: string) => html`<option value="${value}"${filters.status === value ? html` selected` : ''}>${label}</option>`;
    return sendConsolePage(
      reply,
      200,
      FILES_PATH,
      'Files',
      html`<section class="card">
<h1>Files</h1>
${doneNote(queryText(request.query, 'done'), NOTES)}
<form class="filter-grid" method="get" action="${FILES_PATH}" role="search">
<label>Name contains<input name="name" value="${filters.name}" maxlength="255"></label>
<label>Owner login<input name="owner" value="${filters.owner}" maxlength="64" autocapitalize="none" spellcheck="false"></label>
<label>SHA-256<input name="sha256" value="${filters.sha256}" maxlength="64" autocapitalize="none" spellcheck="false"></label>
<label>State<select name="status">${option('', 'any')}${option('A', 'active')}${option('B', 'blocked')}${option('D', 'deleted')}</select></label>
<button class="button small" type="submit">Search</button>
</form>
${fileTable(request, page, back)}
${nextPageLink(FILES_PATH, filters, cursorText(page.next))}
</section>`,
    );
  });

  const fileRoute = {
    config: { web: true },
    schema: { params: { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] } },
  } as const;
  type FileRequest = FastifyRequest<{ Params: { id: string } }>;

  for (const verb of ['block', 'unblock'] as const) {
    app.post(`${FILES_PATH}/:id/${verb}`, fileRoute, async (request: FileRequest, reply) => fileAction(request, reply, verb));
  }

  // Deleting asks first (a page with the file and a confirm button), as My files does.
  app.post(`${FILES_PATH}/:id/delete`, fileRoute, async (request: FileRequest, reply) => {
    if (bodyField(request, 'confirm') === 'yes') return fileAction(request, reply, 'delete');
    const back = backTo(bodyField(request, 'back'));
    let file: OperatorFileInfo;
    try {
      file = await services.moderation.fileInfo(request.params.id);
    } catch (error) {
      if (error instanceof InputError) return sendRefusal(reply, FILES_PATH, error.message, back);
      throw error;
    }
    return sendConsolePage(
      reply,
      200,
      FILES_PATH,
      `Delete ${file.name}`,
      html`<section class="card narrow">
<h1>Delete “<bdi>${file.name}</bdi>”?</h1>
<p class="meta">${humanSize(file.size)} · owner <bdi>${file.ownerLogin || `#${file.ownerId}`}</bdi> · uploaded ${humanDate(file.createdAt)}</p>
<p>The file goes for its owner and everyone who has its link. This cannot be undone.</p>
<form class="confirm-row" method="post" action="${FILES_PATH}/${file.id}/delete">
${csrfField(request)}
<input type="hidden" name="back" value="${back}">
<input type="hidden" name="confirm" value="yes">
<button class="button danger" type="submit">Delete file</button>
<a class="button secondary" href="${back}">Cancel</a>
</form>
</section>`,
    );
  });

  const fileAction = async (request: FileRequest, reply: FastifyReply, verb: 'block' | 'unblock' | 'delete') => {
    const back = backTo(bodyField(request, 'back'));
    try {
      await services.operator.actions.changeFile(webActor(request), verb, request.params.id);
    } catch (error) {
      if (error instanceof InputError) return sendRefusal(reply, FILES_PATH, error.message, back);
      throw error;
    }
    return redirectTo(reply, withDone(back, verb));
  };

  app.get(
    `${CONSOLE_PATH}/digests/:sha256`,
    { config: { web: true }, schema: { params: { type: 'object', properties: { sha256: { type: 'string', maxLength: 128 } }, required: ['sha256'] } } },
    async (request: FastifyRequest<{ Params: { sha256: string } }>, reply) => {
      let usage: DigestUsage;
      try {
        usage = await services.operator.search.digest(request.params.sha256, { before: cursorOf(queryText(request.query, 'before')), limit: PAGE_SIZE });
      } catch (error) {
        if (error instanceof InputError) return sendRefusal(reply, FILES_PATH, error.message, FILES_PATH);
        throw error;
      }
      const path = digestPath(usage.sha256);
      return sendConsolePage(
        reply,
        200,
        FILES_PATH,
        'Where a content is used',
        html`<section class="card">
<p class="crumbs"><a href="${FILES_PATH}">Files</a></p>
<h1>Where this content is used</h1>
${doneNote(queryText(request.query, 'done'), NOTES)}
<p class="digest"><code>${usage.sha256}</code></p>
<p>${usage.stored ? html`<span class="badge ok">stored</span>` : html`<span class="badge">not stored</span>`}${usage.blacklisted ? html`<span class="badge danger">blacklisted</span>` : ''}</p>
${fileTable(request, usage.files, path)}
${nextPageLink(path, {}, cursorText(usage.files.next))}
${
  usage.blacklisted
    ? html`<p class="meta">Uploads of this content are refused. <a href="${CONSOLE_PATH}/blacklist">Blacklists</a></p>`
    : html`<form class="stack" method="post" action="${CONSOLE_PATH}/blacklist/digests">
${csrfField(request)}
<input type="hidden" name="sha256" value="${usage.sha256}">
<input type="hidden" name="back" value="${path}">
<label for="digest-reason">Blacklist it: reason <span class="meta">(optional)</span></label>
<input id="digest-reason" name="reason" maxlength="255">
<label class="check"><input type="checkbox" name="block_existing" value="yes" checked> Block the active files above too</label>
<button class="button danger" type="submit">Blacklist this content</button>
</form>`
}
</section>`,
      );
    },
  );
}

/** `back` with `done=<verb>` for the success note, replacing an earlier one. */
export function withDone(back: string, done: string): string {
  const [path, query = ''] = back.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  params.set('done', done);
  return `${path}?${params.toString()}`;
}
