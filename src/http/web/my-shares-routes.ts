import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ActiveSession } from '../../auth/session-service.js';
import { ApiError } from '../../domain/errors.js';
import { LINK_ID_PATTERN } from '../../domain/ids.js';
import type { Folder } from '../../domain/types.js';
import { MAX_PAGE_SIZE } from '../../services/listing-service.js';
import type { ShareFields, ShareView } from '../../sharing/shares-service.js';
import type { UploadRequestFields } from '../../sharing/upload-requests-service.js';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { sendPage } from './layout.js';
import { countField, expiresInField, MY_REQUESTS_PATH, MY_SHARES_PATH, sizeField } from './my-shares-fields.js';
import { type FormProblem, SHARES_NOTES, type SharesNote, sharesPage } from './my-shares-page.js';
import { signInUrl } from './return-path.js';
import { bodyField, redirectTo, requireSessionForm } from './session-plugin.js';
import { MY_FILES_SCRIPT } from './upload-form.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'folders' | 'listing' | 'sessions' | 'shares' | 'uploadRequests'>;

/** Shares and requests the page lists, newest first. */
const PAGE_SIZE = 100;
/** Deepest folder chain a folder's path name walks (a guard; folders cannot form cycles). */
const MAX_DEPTH = 32;

const linkParams = {
  schema: { params: { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] } },
} as const;
type LinkRequest = FastifyRequest<{ Params: { id: string } }>;

/** Whether a service refused the input (its message goes back into the form). */
const refusedInput = (error: unknown): error is ApiError => error instanceof ApiError && error.code === 'errorWrongParameters';

/**
 * The Shares page (`/my/shares`) and its forms: change or revoke a share, open, change
 * or close an upload request. Every change goes through SharesService or
 * UploadRequestsService (ownership: another account's link is their not-found, 404;
 * the operator's rules; the audit log) and redirects back with a note; input they refuse
 * comes back as the page (400) with the message in the form that sent it.
 */
export function registerMySharesPage(app: FastifyInstance, context: Context): void {
  const { services, links } = context;
  const form = { config: { web: true }, preHandler: requireSessionForm(context) };

  /** Every folder of the account with its path name, by name. */
  const folderMenu = async (session: ActiveSession) => {
    const all = await services.listing.folders(session.account, { limit: MAX_PAGE_SIZE });
    const known = new Map<string, Folder>(all.items.map(({ folder }) => [folder.id, folder]));
    const pathName = (folder: Folder) => {
      const names = [folder.name];
      for (let parent = folder.parentId ? known.get(folder.parentId) : undefined; parent && names.length < MAX_DEPTH; ) {
        names.unshift(parent.name);
        parent = parent.parentId ? known.get(parent.parentId) : undefined;
      }
      return names.join(' / ');
    };
    return [...known.values()].map((folder) => ({ id: folder.id, name: pathName(folder) })).sort((a, b) => a.name.localeCompare(b.name));
  };

  const render = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extras: { note?: string | null; created?: ShareView | null; problem?: FormProblem },
  ) => {
    const session = request.webSession!;
    const account = session.account;
    const config = services.config;
    const [shares, requests, folders] = await Promise.all([
      services.shares.list(account, { limit: PAGE_SIZE }),
      config.uploadRequests ? services.uploadRequests.list(account, { limit: PAGE_SIZE }) : Promise.resolve({ items: [], next: null }),
      folderMenu(session),
    ]);
    return sendPage(
      reply,
      status,
      'Shares',
      html`${sharesPage(
        {
          csrfToken: session.csrfToken,
          premium: services.accounts.isPremium(account),
          now: services.clock(),
          maxExpiryMs: config.shareMaxExpiryMs,
          passwordRequired: config.sharePasswordRequired,
          uploadRequests: config.uploadRequests,
          shares: shares.items,
          moreShares: shares.next !== null,
          requests: requests.items,
          moreRequests: requests.next !== null,
          folders,
          created: extras.created ?? null,
          note: extras.note ?? null,
          problem: extras.problem ?? null,
        },
        links,
      )}
<script src="${MY_FILES_SCRIPT.path}" defer></script>`,
    );
  };

  app.get(MY_SHARES_PATH, { config: { web: true } }, async (request, reply) => {
    if (!request.webSession) return redirectTo(reply, signInUrl(request.url));
    const query = request.query as Record<string, unknown>;
    const note = typeof query.note === 'string' && Object.hasOwn(SHARES_NOTES, query.note) ? SHARES_NOTES[query.note as SharesNote] : null;
    // The share just made: only one of the viewer's own (get checks the owner).
    let created: ShareView | null = null;
    if (typeof query.created === 'string' && LINK_ID_PATTERN.test(query.created)) {
      created = await services.shares.get(request.webSession.account, query.created).catch(() => null);
    }
    return render(request, reply, 200, { note, created });
  });

  const back = (reply: FastifyReply, note: SharesNote, anchor: string) => redirectTo(reply, `${MY_SHARES_PATH}?note=${note}#${anchor}`);

  /** The password fields of an edit: a new one, "remove", or neither (absent: kept). */
  const passwordChange = (request: FastifyRequest): string | undefined => {
    if (bodyField(request, 'remove_password') === '1') return '';
    const password = bodyField(request, 'password') ?? '';
    return password === '' ? undefined : password;
  };

  app.post(`${MY_SHARES_PATH}/share/:id`, { ...form, ...linkParams }, async (request: LinkRequest, reply) => {
    const account = request.webSession!.account;
    const values = {
      expires: bodyField(request, 'expires') ?? '',
      max_downloads: bodyField(request, 'max_downloads') ?? '',
      fast: bodyField(request, 'fast') === '1' ? '1' : '',
    };
    try {
      const fields: ShareFields = {
        expiresIn: expiresInField(values.expires, services.config.shareMaxExpiryMs, true),
        password: passwordChange(request),
        // Emptied: no limit (the API's 0).
        maxDownloads: countField(values.max_downloads) ?? '0',
      };
      // Fast is the form's only when it showed the box (premium accounts); otherwise it stays.
      if (bodyField(request, 'fast_shown') === '1' && services.accounts.isPremium(account)) fields.fast = values.fast === '1' ? '1' : '0';
      await services.shares.change(account, request.params.id, fields);
    } catch (error) {
      if (!refusedInput(error)) throw error;
      return render(request, reply, 400, { problem: { form: `share-${request.params.id}`, message: error.message, values } });
    }
    return back(reply, 'share-changed', 'shares');
  });

  app.post(`${MY_SHARES_PATH}/share/:id/revoke`, { ...form, ...linkParams }, async (request: LinkRequest, reply) => {
    await services.shares.revoke(request.webSession!.account, request.params.id);
    return back(reply, 'revoked', 'shares');
  });

  /** The request form's fields as typed (sizes in human units), for the service and for a refill. */
  const requestValues = (request: FastifyRequest) => {
    const values: Record<string, string> = {};
    for (const name of ['folder', 'title', 'message', 'expires', 'max_files', 'max_bytes', 'max_file_size']) values[name] = bodyField(request, name) ?? '';
    return values;
  };

  const requestFields = (values: Record<string, string>, edit: boolean): UploadRequestFields => {
    // In an edit an emptied limit is "no limit" (the API's 0); at creation it is left out.
    const orNone = (value: string | undefined) => value ?? (edit ? '0' : undefined);
    return {
      title: values.title,
      message: values.message,
      expiresIn: expiresInField(values.expires, services.config.shareMaxExpiryMs, edit),
      maxFiles: orNone(countField(values.max_files)),
      maxBytes: orNone(sizeField(values.max_bytes, 'Most in all')),
      maxFileSize: orNone(sizeField(values.max_file_size, 'Largest file')),
    };
  };

  app.post(MY_REQUESTS_PATH, form, async (request, reply) => {
    const account = request.webSession!.account;
    const values = requestValues(request);
    try {
      await services.uploadRequests.create(account, { ...requestFields(values, false), folder: values.folder, password: bodyField(request, 'password') ?? '' });
    } catch (error) {
      if (!refusedInput(error)) throw error;
      return render(request, reply, 400, { problem: { form: 'new-request', message: error.message, values } });
    }
    return back(reply, 'request-created', 'requests');
  });

  app.post(`${MY_SHARES_PATH}/request/:id`, { ...form, ...linkParams }, async (request: LinkRequest, reply) => {
    const account = request.webSession!.account;
    const values = requestValues(request);
    try {
      await services.uploadRequests.change(account, request.params.id, { ...requestFields(values, true), password: passwordChange(request) });
    } catch (error) {
      if (!refusedInput(error)) throw error;
      return render(request, reply, 400, { problem: { form: `request-${request.params.id}`, message: error.message, values } });
    }
    return back(reply, 'request-changed', 'requests');
  });

  app.post(`${MY_SHARES_PATH}/request/:id/close`, { ...form, ...linkParams }, async (request: LinkRequest, reply) => {
    await services.uploadRequests.close(request.webSession!.account, request.params.id);
    return back(reply, 'closed', 'requests');
  });
}
