import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError, errors } from '../../domain/errors.js';
import { ID_PATTERN } from '../../domain/ids.js';
import type { Folder } from '../../domain/types.js';
import type { CreatedFile } from '../../services/new-file-row.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { ClientGoneError } from '../multipart-upload.js';
import { readUploadForm } from './form-upload.js';
import { humanSize, readableUrl } from './format.js';
import { sendPage } from './layout.js';
import { MY_UPLOAD_PATH, myFilesUrl } from './my-files-paths.js';
import { CSRF_FIELD, sendCsrfRefusal, sessionFormValid } from './session-plugin.js';
import { MY_FILES_SCRIPT } from './upload-form.js';
import { uploadErrorText } from './upload-messages.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'config' | 'folders' | 'sessions' | 'uploads'>;

/** What became of one file of the form. */
interface Outcome {
  /** The stored (sanitised) name, or the name as sent when refused. */
  name: string;
  created?: CreatedFile;
  /** Why this file was refused (empty, blacklisted), with the status it carries. */
  error?: ApiError;
}

/** The form's CSRF token was missing, wrong, or came after a file part. */
class CsrfRefused extends Error {}

/** The script's answer: JSON, never cached or sniffed. */
const sendJson = (reply: FastifyReply, status: number, body: object) =>
  reply
    .code(status)
    .headers({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' })
    .send(JSON.stringify(body));

/** Seconds of an error's Retry-After, or null. */
const retryAfterOf = (error: ApiError): number | null => {
  const seconds = Number(error.headers['Retry-After']);
  return Number.isFinite(seconds) ? seconds : null;
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The web upload (POST /my/files/upload): the browser's multipart form with any number of
 * files, each streamed through the upload use case (uploads/, as the API upload) while the
 * body arrives. The CSRF token and the target folder are form fields
 * placed before the file input, so they are known before the first byte of a file is
 * kept. A file that is refused on its own (empty, blacklisted) is reported and the others
 * are kept; a failure of the stream itself (too large, upload volume, malformed body)
 * ends the form there. Without JavaScript the answer is a page listing each file with its
 * download and delete links (the delete link is shown only this once, like the API's
 * delete_link); the my-files script sends one file per request with `Accept: application/json`.
 */
export function registerMyFilesUpload(app: FastifyInstance, context: Context): void {
  const { services, links } = context;
  /** A refusal in words for people (human sizes, what to do); `error` keeps the API's own message. */
  const reason = (error: ApiError) => uploadErrorText(error, { maxFileSize: services.config.maxFileSize });

  app.post(MY_UPLOAD_PATH, { config: { web: true, streamBody: true } }, async (request, reply) => {
    const json = /\bapplication\/json\b/.test(request.headers.accept ?? '');
    const session = request.webSession;
    if (!session) {
      // The body is not read: close rather than drain what may be gigabytes.
      reply.header('Connection', 'close');
      if (json) return sendJson(reply, 403, { files: [], error: 'You are signed out. Sign in and try again.' });
      sessionFormValid(context, request, reply); // sends the signed-out page
      return reply;
    }
    const account = session.account;

    let folderId: string | undefined;
    let folder: Promise<Folder | null> | undefined;
    const outcomes: Outcome[] = [];
    let fields: ReadonlyMap<string, string> | undefined;
    let fatal: unknown;
    try {
      fields = await readUploadForm(request.raw, async ({ stream, filename, fieldsBefore, signal }) => {
        if (!services.sessions.checkCsrf(session, fieldsBefore.get(CSRF_FIELD))) throw new CsrfRefused();
        if (folder === undefined) {
          // The folder field as sent before the first file is the target of the whole form.
          folderId = fieldsBefore.get('folder');
          folder = folderId ? services.folders.owned(account, folderId) : Promise.resolve(null);
        }
        const target = await folder;
        // An `expires_in` field before the file (seconds, as the API's): checked before a byte is kept.
        const expiresIn = services.uploads.expiresIn(fieldsBefore.get('expires_in'));
        // The upload use case, as the API upload's: the upload volume (API.md 8) refused
        // when none is left, else reserved as the bytes stream; the file is created in its
        // folder in one transaction (errorFolderNotFound if the folder went meanwhile).
        let received = false;
        try {
          const created = await services.uploads.upload({
            owner: account,
            folder: target ? { id: target.id, ifGone: 'refuse' } : null,
            expiresIn,
            source: {
              kind: 'stream',
              receive: async ({ stage }) => {
                try {
                  const staged = await stage(stream, signal);
                  received = true;
                  return { staged, name: filename };
                } catch (error) {
                  throw error instanceof ApiError ? error : errors.uploadMalformed('the file could not be read');
                }
              },
            },
          });
          outcomes.push({ name: created.file.name, created });
        } catch (error) {
          // A refusal of this file alone (empty, blacklisted) is reported and the form goes
          // on; a failure of the stream itself (too large, volume, malformed) ends it.
          if (!received || !(error instanceof ApiError) || error.status >= 500) throw error;
          outcomes.push({ name: filename, error });
        }
      });
    } catch (error) {
      if (error instanceof ClientGoneError) throw error;
      fatal = error;
    }
    if (fatal !== undefined && !request.raw.complete) reply.header('Connection', 'close');

    // A form without files is checked too: a forged one is refused, not told "choose a file".
    const emptyForgery = fields !== undefined && outcomes.length === 0 && !services.sessions.checkCsrf(session, fields.get(CSRF_FIELD));
    if (fatal instanceof CsrfRefused || emptyForgery) {
      if (json) return sendJson(reply, 403, { files: [], error: 'This form has expired. Reload the page and try again.' });
      return sendCsrfRefusal(reply);
    }
    if (fatal !== undefined && !(fatal instanceof ApiError)) {
      if (outcomes.length > 0) request.log.warn(`an upload form failed after ${outcomes.length} stored files`);
      throw fatal;
    }
    const failure = fatal instanceof ApiError ? fatal : outcomes.length === 0 ? errors.badRequest('Choose at least one file to upload.') : undefined;
    if (failure) reply.headers(failure.headers);
    const stored = outcomes.filter((outcome) => outcome.created);
    const status = failure?.status ?? (stored.length > 0 ? 201 : outcomes[0]!.error!.status);

    if (json) {
      return sendJson(reply, status, {
        files: outcomes.map(({ name, created, error }) =>
          created
            ? {
                name,
                size: created.file.size,
                sizeText: humanSize(created.file.size),
                id: created.file.id,
                download: links.download(created.file),
                delete: links.delete(created.file, created.deleteSecret),
              }
            : { name, error: error!.message, code: error!.code, reason: reason(error!) },
        ),
        // The code and Retry-After let the script decide whether trying again can help.
        ...(failure ? { error: failure.message, code: failure.code, reason: reason(failure), retryAfter: retryAfterOf(failure) } : {}),
      });
    }
    return resultsPage(reply, status === 201 ? 200 : status, outcomes, failure, folderId);
  });

  const resultItem = ({ name, created, error }: Outcome): Html => {
    if (!created) {
      return html`<li class="upload failed"><span class="file-name"><bdi>${name}</bdi></span><p class="notice error">${reason(error!)}</p></li>`;
    }
    const download = links.download(created.file);
    return html`<li class="upload done"><a class="file-name" href="${download}"><bdi>${name}</bdi></a> <span class="file-meta">${humanSize(created.file.size)}</span>
<dl class="links">
<dt>Download link</dt><dd><a href="${download}">${readableUrl(download)}</a> <button class="button small secondary" type="button" data-copy-text="${download}" hidden>Copy</button></dd>
<dt>Delete link</dt><dd><a class="delete-link" href="${links.delete(created.file, created.deleteSecret)}">${links.delete(created.file, created.deleteSecret)}</a></dd>
</dl></li>`;
  };

  const resultsPage = (reply: FastifyReply, status: number, outcomes: Outcome[], failure: ApiError | undefined, folderId: string | undefined) => {
    const stored = outcomes.filter((outcome) => outcome.created).length;
    const title = stored === 0 ? 'Upload failed' : `Uploaded ${plural(stored, 'file')}`;
    return sendPage(
      reply,
      status,
      title,
      html`<section class="card">
<h1>${title}</h1>
${failure ? html`<p class="notice error" role="alert">${reason(failure)}</p>` : ''}
${outcomes.length > 0 ? html`<ul class="uploads">${outcomes.map(resultItem)}</ul>` : ''}
${stored > 0 ? html`<p class="hint">Keep a file’s delete link to delete it without signing in: it is shown only now.</p>` : ''}
<p><a class="button" href="${myFilesUrl(folderId !== undefined && ID_PATTERN.test(folderId) ? folderId : null)}">Back to My files</a></p>
</section>
<script src="${MY_FILES_SCRIPT.path}" defer></script>`,
    );
  };
}
