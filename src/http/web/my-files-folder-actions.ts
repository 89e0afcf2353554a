import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { ID_PATTERN } from '../../domain/ids.js';
import type { Folder } from '../../domain/types.js';
import { NameTakenError } from '../../services/sibling-names.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { sendErrorPage, sendPage } from './layout.js';
import { MY_FOLDER_DELETE_PATH, MY_FOLDER_LEAVE_PATH, MY_FOLDER_RENAME_PATH, type NoteKey } from './my-files-paths.js';
import { backState, DEFAULT_SORT, type ListState, listUrl } from './my-files-query.js';
import { bodyField, CSRF_FIELD, redirectTo, requireSessionForm } from './session-plugin.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'folders' | 'sessions'>;

/** The list a form was sent from (its `back` field), else the plain list of the folder `from`. */
export function backList(request: FastifyRequest, from: string | null = null): ListState {
  return backState(bodyField(request, 'back')) ?? { folder: from, q: '', sort: DEFAULT_SORT };
}

/** Where a form's redirect goes: back to its list, with a note. */
export const backUrl = (request: FastifyRequest, note: NoteKey, from: string | null = null): string => listUrl(backList(request, from), { note });

/**
 * The answer to a name a sibling carries already (409): what happened, and the same form
 * again with a free name filled in ("report (2).pdf"), so one press takes it.
 */
export function sendNameTaken(reply: FastifyReply, error: NameTakenError, form: { action: string; fields: Html; cancel: string }): FastifyReply {
  const where = error.kind === 'file' ? 'A file in the same folder' : 'A folder next to it';
  return sendPage(
    reply,
    409,
    'Name already taken',
    html`<section class="card narrow name-taken">
<h1>“<bdi>${error.taken}</bdi>” is taken</h1>
<p>${where} has that name already. Names are kept apart on the site’s forms, so links, lists and ZIPs stay clear.</p>
<form method="post" action="${form.action}">
${form.fields}
<label for="free-name">${error.suggestion ? 'This name is free:' : 'Choose another name:'}</label>
<div class="row"><input id="free-name" name="name" value="${error.suggestion ?? error.taken}" required maxlength="255" autocomplete="off"><button class="button" type="submit">${error.suggestion ? 'Use this name' : 'Save name'}</button></div>
</form>
<p><a class="button secondary" href="${form.cancel}">Cancel</a></p>
</section>`,
  );
}

/** A folder id of a form (the `folder` field), or '' when missing or malformed (the service refuses it: 404). */
const folderIdOf = (request: FastifyRequest) => {
  const id = bodyField(request, 'folder') ?? '';
  return ID_PATTERN.test(id) ? id : '';
};

/**
 * The forms of a folder's page: rename, leave (its files and folders move up a level),
 * delete when empty. Each goes through FoldersService (ownership, the names' lock) and
 * redirects back; a name taken by a sibling gets a page offering a free one, a folder
 * that is not empty a page saying what is left in it.
 */
export function registerMyFolderActions(app: FastifyInstance, context: Context): void {
  const { services } = context;
  const form = { config: { web: true }, preHandler: requireSessionForm(context) };
  const parentUrl = (folder: Folder, note: NoteKey) => listUrl({ folder: folder.parentId, q: '', sort: DEFAULT_SORT }, { note });

  app.post(MY_FOLDER_RENAME_PATH, form, async (request, reply) => {
    const session = request.webSession!;
    const id = folderIdOf(request);
    try {
      const folder = await services.folders.rename(session.account, id, bodyField(request, 'name') ?? '');
      return redirectTo(reply, listUrl({ folder: folder.id, q: '', sort: DEFAULT_SORT }, { note: 'folder-renamed' }));
    } catch (error) {
      if (!(error instanceof NameTakenError)) throw error;
      return sendNameTaken(reply, error, {
        action: MY_FOLDER_RENAME_PATH,
        fields: html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}"><input type="hidden" name="folder" value="${id}">`,
        cancel: listUrl({ folder: id, q: '', sort: DEFAULT_SORT }),
      });
    }
  });

  app.post(MY_FOLDER_LEAVE_PATH, form, async (request, reply) => {
    const session = request.webSession!;
    try {
      const { folder } = await services.folders.leave(session.account, folderIdOf(request));
      return redirectTo(reply, listUrl({ folder: folder.id, q: '', sort: DEFAULT_SORT }, { note: 'left' }));
    } catch (error) {
      if (!(error instanceof NameTakenError)) throw error;
      return sendErrorPage(
        reply,
        409,
        'Nothing was moved',
        `The folder “${error.taken}” cannot move up: a folder one level up has that name already. Rename one of them, then try again.`,
      );
    }
  });

  app.post(MY_FOLDER_DELETE_PATH, form, async (request, reply) => {
    const session = request.webSession!;
    const folder = await services.folders.owned(session.account, folderIdOf(request));
    try {
      await services.folders.remove(session.account, folder.id);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'errorFolderNotEmpty') throw error;
      const { activeFiles, children } = await services.folders.listing(folder, { limit: 1, children: true });
      const held = [activeFiles > 0 ? plural(activeFiles, 'file') : '', children.length > 0 ? plural(children.length, 'folder') : '']
        .filter(Boolean)
        .join(' and ');
      return sendErrorPage(
        reply,
        409,
        'The folder is not empty',
        `“${folder.name}” still holds ${held || 'blocked files'}. Only an empty folder can be deleted: move or delete what is in it first, or press “Move contents up”.`,
      );
    }
    return redirectTo(reply, parentUrl(folder, 'folder-deleted'));
  });
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
