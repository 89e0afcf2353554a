import { explainUploadProblem, mayRetry } from '../upload-messages.js';
import { readLimits, refreshLists, type UploadPage } from './upload-page.js';
import { detailTicker, type StoredFile, type UploadRow } from './upload-row.js';

/** The form's JSON answer (my-files-upload.ts): one entry per file, or one error for all. */
interface FormAnswer {
  files?: Array<Partial<StoredFile> & { error?: string; code?: string; reason?: string }>;
  error?: string;
  code?: string;
  reason?: string;
  retryAfter?: number;
}

/**
 * Uploads one file with its own multipart POST to the form's action, answered in JSON,
 * updating its row; resolves when the first try is over. A failure that trying again may
 * cure (no answer, a busy or failing server) offers Retry, which sends the file again from
 * its start (a small file: not worth resuming).
 */
export function postUpload(page: UploadPage, file: File, ui: UploadRow): Promise<boolean> {
  return new Promise((resolve) => {
    let firstTry = true;
    const settle = (ok: boolean) => {
      if (firstTry) {
        firstTry = false;
        resolve(ok);
      } else if (ok) {
        // A retry after the queue moved on refreshes the lists itself.
        refreshLists().catch(() => {});
      }
    };
    const attempt = () => {
      const body = new FormData();
      // The token and the folder come before the file: the server reads them first.
      for (const field of page.form.querySelectorAll<HTMLInputElement>('input[type="hidden"]')) body.append(field.name, field.value);
      body.append('upload', file, file.name);
      const request = new XMLHttpRequest();
      const ticker = detailTicker(ui, file.size);
      request.open('POST', page.form.action);
      request.setRequestHeader('Accept', 'application/json');
      ui.say('Uploading…');
      ui.cancel.onclick = () => request.abort();
      request.upload.addEventListener('progress', (event) => {
        if (!event.lengthComputable) return;
        ui.progress(event.loaded, event.total);
        ticker.update(Math.min(file.size, event.loaded));
      });
      const fail = (message: string, retryable: boolean) => {
        ticker.stop();
        ui.failed(message, retryable);
        settle(false);
      };
      request.addEventListener('load', () => {
        ticker.stop();
        let answer: FormAnswer | null = null;
        try {
          answer = JSON.parse(request.responseText) as FormAnswer;
        } catch {
          // Not our JSON (a proxy's error page): the status says what it can.
        }
        const stored = answer?.files?.[0];
        if (request.status === 201 && stored?.download && !stored.error) {
          ui.done({ download: stored.download, delete: stored.delete ?? null, id: stored.id ?? null });
          settle(true);
          return;
        }
        const header = Number.parseInt(request.getResponseHeader('Retry-After') ?? '', 10);
        const problem = {
          status: request.status,
          code: stored?.code ?? answer?.code ?? null,
          message: stored?.error ?? answer?.error ?? '',
          retryAfter: answer?.retryAfter ?? (Number.isFinite(header) ? header : null),
          // The site answers this request in JSON, refusals too; anything else came from in front of it.
          fromSite: answer !== null,
          requestBytes: file.size,
        };
        // The server's words when it gave them, else ours for its status.
        const words = stored?.reason ?? answer?.reason ?? explainUploadProblem(problem, readLimits());
        // A body cut short (errorUploadFaild, 400) is worth sending again too.
        fail(words, problem.code === 'errorUploadFaild' || (problem.code !== 'errorUploadLimit' && mayRetry(problem.status)));
      });
      request.addEventListener('error', () => fail(explainUploadProblem({ status: 0, fromSite: false, offline: !navigator.onLine }, readLimits()), true));
      request.addEventListener('abort', () => fail('Upload cancelled.', false));
      request.send(body);
    };
    ui.retry.onclick = () => {
      ui.resumed('Trying again…');
      attempt();
    };
    attempt();
  });
}
