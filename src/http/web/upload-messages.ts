import type { ApiError } from '../../domain/errors.js';
import { humanSize } from './format.js';

/*
 * Why an upload was refused or failed, in words for people: the site's form (server side)
 * and the page's uploader (browser/upload-*.ts, bundled with this very module) choose
 * their sentences here, so a refusal reads alike with or without JavaScript. No Node and
 * no DOM in this module: both sides import it (browser/tsconfig.json checks that).
 */

/** 45 s, 3 min 20 s, 12 min, 2 h 5 min: how long until an upload may be tried again, or how long one has left. */
export function humanWait(seconds: number): string {
  const s = Math.max(1, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 10 && s % 60 !== 0) return `${minutes} min ${s % 60} s`;
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const BLACKLISTED = 'This file is not allowed on this site (its content or its name is on the blacklist).';

/**
 * Why an upload was refused, in words for the site's pages: sizes in human units and what
 * to do next. The API keeps its own wording (API.md 3: "… the limit of 1048576 bytes");
 * this is only how a page says it. explainUploadProblem says the same of the uploader's.
 */
export function uploadErrorText(error: ApiError, limits: { maxFileSize: number }): string {
  switch (error.code) {
    case 'errorFileSize':
      return `The file is larger than the limit of ${humanSize(limits.maxFileSize)} per file. Nothing of it was kept.`;
    case 'errorUploadLimit': {
      const wait = Number(error.headers['Retry-After']);
      return `Your upload volume for the last 24 hours is used up${Number.isFinite(wait) ? `: you can upload again in about ${humanWait(wait)}` : ''}. Nothing of this file was kept.`;
    }
    case 'errorFileInBlackList':
      return BLACKLISTED;
    case 'errorEmptyFile':
      return 'The file is empty (0 B): there is nothing to upload.';
    case 'errorUploadFaild':
      return error.status >= 500
        ? 'The server could not store the file (a problem on its side). Please try again in a moment.'
        : 'The file did not arrive whole (the upload was cut off or malformed). Please try again.';
    default:
      return error.message;
  }
}

/** What the upload page knows of the account's limits (its #upload-limits line); null is unlimited or unknown. */
export interface UploadLimits {
  /** The largest file, in bytes. */
  maxFileSize: number | null;
  /** Upload volume left in the rolling 24 hours, in bytes. */
  volumeLeft: number | null;
  /** The volume per 24 hours, in bytes. */
  volumeLimit: number | null;
}

/**
 * Why a file is refused before any of it is sent, or null when it may go: `pending` is
 * what the page is sending already, not yet out of the volume left.
 */
export function refusalBeforeSending(file: { size: number }, limits: UploadLimits, pending: number): string | null {
  if (file.size === 0) return 'This file is empty (0 B): there is nothing to upload.';
  if (limits.maxFileSize !== null && file.size > limits.maxFileSize) {
    return `This file is ${humanSize(file.size)}, larger than the limit of ${humanSize(limits.maxFileSize)} per file. Nothing was sent.`;
  }
  if (limits.volumeLeft !== null && file.size > limits.volumeLeft - pending) {
    const left = Math.max(0, limits.volumeLeft - pending);
    return left === 0
      ? `Your upload volume for the last 24 hours is used up (${humanSize(limits.volumeLimit ?? 0)} per 24 hours). Nothing was sent.`
      : `This file is ${humanSize(file.size)}, but only ${humanSize(left)} of your upload volume is left for now (${humanSize(limits.volumeLimit ?? 0)} per 24 hours). Nothing was sent.`;
  }
  return null;
}

/** A request of the uploader that failed, as it saw it. */
export interface UploadProblem {
  /** The HTTP status; 0 when no answer came (a network error). */
  status: number;
  /** The site's error code: the Atom error's title (tus) or the form's JSON `code`. */
  code?: string | null;
  /** The site's message, if it gave one. */
  message?: string | null;
  /** Retry-After, in seconds. */
  retryAfter?: number | null;
  /**
   * Whether the answer came from the site itself (its Atom error, its JSON, its tus
   * headers) rather than from something in front of it: a proxy's own error page, such as
   * nginx's 413 when a request is over its client_max_body_size.
   */
  fromSite: boolean;
  /** The size of the refused request's body, when known (a tus PATCH: its chunk). */
  requestBytes?: number | null;
  /** The browser believes it is offline (navigator.onLine). */
  offline?: boolean;
}

/** A failed request in words: the site's refusal, a proxy's, or no answer at all. */
export function explainUploadProblem(problem: UploadProblem, limits: UploadLimits): string {
  const { status, code = null, message = null, retryAfter = null } = problem;
  const wait = retryAfter ? ` You can try again in about ${humanWait(retryAfter)}.` : '';
  if (status === 0) {
    return problem.offline
      ? 'You are offline: the upload stopped. Connect again, then press Retry.'
      : 'The connection to the server was lost. Press Retry to try again.';
  }
  if (!problem.fromSite) return proxyRefusal(status, problem.requestBytes ?? null);
  if (code === 'errorFileSize' || (!code && status === 413)) {
    // The API's message names the limit in bytes (API.md 3): say it in human units.
    const limit = Number(/limit of (\d+) bytes/.exec(message ?? '')?.[1] ?? limits.maxFileSize ?? Number.NaN);
    return Number.isFinite(limit)
      ? `This file is larger than the limit of ${humanSize(limit)} per file. Nothing of it was kept.`
      : 'This file is larger than the server accepts. Nothing of it was kept.';
  }
  if (code === 'errorUploadLimit')
    return `Your upload volume for the last 24 hours is used up.${wait || ' You can upload again once older uploads leave the 24-hour window.'}`;
  if (code === 'errorRateLimited' || status === 429)
    return `The server is busy with too many requests from you.${wait || ' Please wait a moment, then press Retry.'}`;
  if (code === 'errorEmptyFile') return 'This file is empty (0 B): there is nothing to upload.';
  if (code === 'errorFileInBlackList') return BLACKLISTED;
  if (code === 'errorFolderNotFound') return 'The folder you are uploading into no longer exists. Reload the page.';
  if (status === 401) return 'You are signed out. Sign in again, then choose the file again.';
  if (code === 'errorUploadFaild' && status < 500) return 'The file did not arrive whole (the upload was cut off). Please try again.';
  if (status >= 500) return 'The server could not take the file (a problem on its side). Please press Retry in a moment.';
  return message || `The server refused the upload (HTTP ${status}).`;
}

/**
 * An error page that is not the site's: the proxy in front of it answered. Its 413 is its
 * own body-size limit (nginx's client_max_body_size), lower than the site's: only the
 * operator can change that, and saying "larger than the limit per file" would blame the
 * file for the wrong limit.
 */
function proxyRefusal(status: number, requestBytes: number | null): string {
  if (status === 413) {
    const request = requestBytes === null ? 'a request' : `a request of ${humanSize(requestBytes)}`;
    return `The proxy in front of this site refused ${request} (HTTP 413): its size limit is lower than the site's own. Nothing of the file was kept. Please tell the site's operator.`;
  }
  if (status === 502 || status === 503 || status === 504) {
    return `The proxy in front of this site could not reach the server (HTTP ${status}). Please press Retry in a moment.`;
  }
  return `The proxy in front of this site refused the request (HTTP ${status}), not the site itself. Please tell the site's operator if it happens again.`;
}

/** Whether trying the same request again may help: no answer, a busy or failing server, a conflict or a lock. */
export function mayRetry(status: number): boolean {
  return status === 0 || status === 408 || status === 409 || status === 423 || status === 429 || status >= 500;
}
