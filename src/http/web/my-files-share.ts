import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { ID_PATTERN } from '../../domain/ids.js';
import type { ShareFields } from '../../sharing/shares-service.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { sendPage } from './layout.js';
import { MY_FILES_PATH } from './my-files-paths.js';
import { backState } from './my-files-query.js';
import { countField, expiresInField, expirySelect, MY_SHARE_PATH, MY_SHARES_PATH, sentence } from './my-shares-fields.js';
import { bodyField, CSRF_FIELD, redirectTo, requireSessionForm } from './session-plugin.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'files' | 'folders' | 'sessions' | 'shares'>;

/** What every Share form of a page needs. */
export interface ShareFormOptions {
  csrfToken: string;
  /** Whether the account has premium now: only then is "fast" offered. */
  premium: boolean;
  /** The operator's longest share expiry (null = none). */
  maxExpiryMs: number | null;
}

/** What a Share form shares. */
export interface ShareTargetRef {
  kind: 'file' | 'folder';
  id: string;
  name: string;
}

/**
 * The Share action of a file or folder in My files (issue 25): a <details> holding the
 * form, so it works without JavaScript (the my-files script opens it as a dialog). Expiry
 * in words within the operator's cap, an optional password and download limit, and "fast"
 * for premium accounts. `back` is the list the form came from; `problem` refills the form
 * with the service's message after refused input.
 */
export function shareForm(
  target: ShareTargetRef,
  options: ShareFormOptions,
  back: string | null,
  problem?: { message: string; values: Record<string, string> },
): Html {
  const id = `share-${target.id}`;
  const values = problem?.values ?? {};
  return html`<details class="share"${problem ? html` open` : ''}><summary class="button small secondary" data-share-summary>Share</summary>
<form class="share-form" method="post" action="${MY_SHARE_PATH}" aria-label="Share ${target.name}">
<p class="share-heading">Share “<bdi>${target.name}</bdi>”</p>
${problem ? html`<p class="notice error" role="alert">${sentence(problem.message)}</p>` : ''}
<input type="hidden" name="${CSRF_FIELD}" value="${options.csrfToken}">
<input type="hidden" name="${target.kind}" value="${target.id}">
${back ? html`<input type="hidden" name="back" value="${back}">` : ''}
<label for="${id}-expires">Link expires</label>
${expirySelect(`${id}-expires`, options.maxExpiryMs, null, values.expires)}
<label for="${id}-password">Password <span class="hint">(optional)</span></label>
<input id="${id}-password" name="password" type="password" autocomplete="new-password" maxlength="1024">
<label for="${id}-max">Download limit <span class="hint">(optional)</span></label>
<input id="${id}-max" name="max_downloads" inputmode="numeric" pattern="[0-9]*" maxlength="10" placeholder="No limit" value="${values.max_downloads ?? ''}">
${
  options.premium
    ? html`<label class="check"><input type="checkbox" name="fast" value="1"${values.fast === '1' ? html` checked` : ''}> Fast: downloads use your premium traffic, at full speed</label>`
    : ''
}
<button class="button small" type="submit">Create link</button>
</form>
</details>`;
}

/**
 * POST /my/files/share: creates the share through SharesService (ownership, the
 * operator's rules, the audit log), then sends the browser to the Shares page, which
 * shows the new link with a copy button (POST/redirect/GET: a reload makes no second
 * share). Input the service refuses (errorWrongParameters) gets the form again, open,
 * with its message (400); an unknown or foreign file or folder is the usual error page.
 */
export function registerShareAction(app: FastifyInstance, context: Context): void {
  const { services } = context;

  app.post(MY_SHARE_PATH, { config: { web: true }, preHandler: requireSessionForm(context) }, async (request, reply) => {
    const session = request.webSession!;
    const account = session.account;
    const premium = services.accounts.isPremium(account);
    const file = bodyField(request, 'file');
    const folder = bodyField(request, 'folder');
    const values = {
      expires: bodyField(request, 'expires') ?? '',
      max_downloads: bodyField(request, 'max_downloads') ?? '',
      fast: bodyField(request, 'fast') === '1' ? '1' : '',
    };
    try {
      const fields: ShareFields = {
        ...(file !== undefined ? { file } : {}),
        ...(folder !== undefined ? { folder } : {}),
        expiresIn: expiresInField(values.expires, services.config.shareMaxExpiryMs, false),
        password: bodyField(request, 'password') ?? '',
        maxDownloads: countField(values.max_downloads),
        // Fast is offered to premium accounts only; anyone else's form has no such field.
        ...(premium && values.fast === '1' ? { fast: '1' } : {}),
      };
      const { share } = await services.shares.create(account, fields);
      return redirectTo(reply, `${MY_SHARES_PATH}?created=${share.id}`);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'errorWrongParameters') throw error;
      // Refused input: the form again, for the same file or folder, with the reason.
      const target = await targetOf(file, folder, error);
      const back = bodyField(request, 'back');
      const backUrl = back !== undefined && backState(back) ? back : MY_FILES_PATH;
      return sendPage(
        reply,
        400,
        `Share ${target.name}`,
        html`<section class="card narrow share-again">
<h1>Share “<bdi>${target.name}</bdi>”</h1>
${shareForm(target, { csrfToken: session.csrfToken, premium, maxExpiryMs: services.config.shareMaxExpiryMs }, backUrl, { message: error.message, values })}
<p><a class="button secondary" href="${backUrl}">Back to My files</a></p>
</section>`,
      );
    }

    /** The file or folder a refused form was for (the service already checked it is the caller's). */
    async function targetOf(fileId: string | undefined, folderId: string | undefined, refusal: ApiError): Promise<ShareTargetRef> {
      if (fileId !== undefined && ID_PATTERN.test(fileId.trim())) {
        const found = await services.files.visible(fileId.trim());
        if (found.ownerId === account.id) return { kind: 'file', id: found.id, name: found.name };
      }
      if (folderId !== undefined && ID_PATTERN.test(folderId.trim())) {
        const found = await services.folders.owned(account, folderId.trim());
        return { kind: 'folder', id: found.id, name: found.name };
      }
      // Neither: nothing to show a form for, only the reason.
      throw refusal;
    }
  });
}
