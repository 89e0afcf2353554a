import type { FastifyInstance } from 'fastify';
import { ApiError, errors } from '../../domain/errors.js';
import { ID_PATTERN } from '../../domain/ids.js';
import { NameTakenError } from '../../services/sibling-names.js';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { humanDate, humanSize } from './format.js';
import { sendErrorPage, sendPage } from './layout.js';
import { backList, backUrl, sendNameTaken } from './my-files-folder-actions.js';
import { TOP_TARGET } from './my-files-list.js';
import { MY_DELETE_PATH, MY_FOLDERS_PATH, MY_MOVE_PATH, MY_RENAME_PATH, myFilesUrl } from './my-files-paths.js';
import { backState, listUrl } from './my-files-query.js';
import { bodyField, CSRF_FIELD, redirectTo, requireSessionForm } from './session-plugin.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'files' | 'folders' | 'sessions'>;

/** A folder id field: an id, or null for none (empty or malformed: the caller decides). */
const folderField = (value: string | undefined): string | null => (value !== undefined && ID_PATTERN.test(value) ? value : null);

/**
 * The forms of the My files page: create a folder, move a file into a folder (or back to
 * the top), rename a file, delete a file (after a confirm page). Each is a POST with the session's CSRF token
 * (requireSessionForm) that redirects back to the page it came from (POST/redirect/GET);
 * failures (a folder or file of another account, a deleted file) are error pages.
 */
export function registerMyFilesActions(app: FastifyInstance, context: Context): void {
  const { services } = context;
  const form = { config: { web: true }, preHandler: requireSessionForm(context) };

  app.post(MY_FOLDERS_PATH, form, async (request, reply) => {
    const session = request.webSession!;
    const name = (bodyField(request, 'name') ?? '').trim();
    if (name === '') throw errors.badRequest('Give the new folder a name.');
    const parent = folderField(bodyField(request, 'parent'));
    try {
      // The web keeps sibling folder names apart (docs/web.md "Managing My files"); the API does not.
      await services.folders.create(session.account, name, parent ?? undefined, { uniqueName: true });
    } catch (error) {
      if (!(error instanceof NameTakenError)) throw error;
      return sendNameTaken(reply, error, {
        action: MY_FOLDERS_PATH,
        fields: html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">${parent ? html`<input type="hidden" name="parent" value="${parent}">` : ''}`,
        cancel: myFilesUrl(parent),
      });
    }
    return redirectTo(reply, myFilesUrl(parent, 'folder'));
  });

  app.post(MY_MOVE_PATH, form, async (request, reply) => {
    const account = request.webSession!.account;
    const folder = bodyField(request, 'folder') ?? '';
    const from = folderField(bodyField(request, 'from'));
    if (folder === '') throw errors.badRequest('Choose the folder to move the file into.');
    if (folder === TOP_TARGET) {
      await services.folders.moveToTop(account, bodyField(request, 'file') ?? '');
      return redirectTo(reply, backUrl(request, 'to-top', from));
    }
    await services.folders.move(account, folder, [bodyField(request, 'file') ?? '']);
    return redirectTo(reply, backUrl(request, 'moved', from));
  });

  app.post(MY_RENAME_PATH, form, async (request, reply) => {
    const session = request.webSession!;
    const file = bodyField(request, 'file') ?? '';
    const from = folderField(bodyField(request, 'from'));
    try {
      await services.files.rename(session.account, file, bodyField(request, 'name') ?? '');
    } catch (error) {
      if (error instanceof ApiError && error.code === 'errorFileInBlackList') {
        return sendErrorPage(reply, 403, 'Name not allowed', 'This site does not accept that file name. Choose another one.');
      }
      if (!(error instanceof NameTakenError)) throw error;
      const back = bodyField(request, 'back');
      return sendNameTaken(reply, error, {
        action: MY_RENAME_PATH,
        fields: html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}"><input type="hidden" name="file" value="${ID_PATTERN.test(file) ? file : ''}">${
          from ? html`<input type="hidden" name="from" value="${from}">` : ''
        }${back !== undefined && backState(back) ? html`<input type="hidden" name="back" value="${back}">` : ''}`,
        cancel: listUrl(backList(request, from)),
      });
    }
    return redirectTo(reply, backUrl(request, 'renamed', from));
  });

  app.post(MY_DELETE_PATH, form, async (request, reply) => {
    const session = request.webSession!;
    const from = folderField(bodyField(request, 'from'));
    const file = await services.files.visible(bodyField(request, 'file') ?? '');
    if (file.ownerId !== session.account.id) throw errors.permissionDenied('This file belongs to another account.');
    if (bodyField(request, 'confirm') === 'yes') {
      await services.files.deleteOwned(session.account, file.id);
      return redirectTo(reply, backUrl(request, 'deleted', from));
    }
    return sendPage(
      reply,
      200,
      `Delete ${file.name}`,
      html`<section class="card narrow">
<h1>Delete “<bdi>${file.name}</bdi>”?</h1>
<p class="meta">${humanSize(file.size)} · uploaded ${humanDate(file.createdAt)}</p>
<p>The file will be removed for everyone who has its link. This cannot be undone.</p>
<form class="confirm-row" method="post" action="${MY_DELETE_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">
<input type="hidden" name="file" value="${file.id}">
${from ? html`<input type="hidden" name="from" value="${from}">` : ''}
${backState(bodyField(request, 'back')) ? html`<input type="hidden" name="back" value="${bodyField(request, 'back')!}">` : ''}
<input type="hidden" name="confirm" value="yes">
<button class="button danger" type="submit">Delete file</button>
<a class="button secondary" href="${myFilesUrl(from)}">Cancel</a>
</form>
</section>`,
    );
  });
}
