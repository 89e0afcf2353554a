import type { StoredFile } from './api-types.js';

/**
 * Errors the SDK throws. It imports nothing from the server, so the codes are listed here
 * again; test/unit/client-error-codes.test.ts proves the list matches the server's
 * catalogue (src/domain/errors.ts).
 */

/** The SPEC.md codes and the server's documented extensions (docs/api.md "Errors"). */
export const API_ERROR_CODES = [
  'errorAccountNotFound',
  'errorApiKeyAlreadyCreated',
  'errorEmptyFile',
  'errorFileInBlackList',
  'errorFileInNoDownloadedStatus',
  'errorFileNotFound',
  'errorFolderNotFound',
  'errorFolderFilesAddFailed',
  'errorFileSize',
  'errorPermissionDenied',
  'errorUploadLimit',
  'errorUploadFaild',
  'errorWrongCredentials',
  'errorNotFound',
  'errorMethodNotAllowed',
  'errorFolderNotEmpty',
  'errorBadRequest',
  'errorRateLimited',
  'errorInternal',
  'errorShareNotFound',
  'errorShareExpired',
  'errorShareDownloadLimit',
  'errorSharePassword',
  'errorWrongParameters',
] as const;

/** A code the server sends in an Atom error entry. */
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/**
 * A code of the client's own, for answers that carry no Atom error: a reply that is not
 * the documented Atom feed (a proxy's page, a truncated body), or a download whose size
 * is not the announced one.
 */
export type ClientErrorCode = 'errorUnexpectedResponse' | 'errorDownloadIncomplete';

/** A failure the server reported (or, for ClientErrorCode, one the client saw in its answer). */
export class FilehavenApiError extends Error {
  override name = 'FilehavenApiError';
  constructor(
    /** The SPEC code (`errorWrongCredentials`, `errorFileNotFound`, ...) or a ClientErrorCode. */
    readonly code: ApiErrorCode | ClientErrorCode,
    /** HTTP status of the answer (0 when there was none to speak of). */
    readonly status: number,
    message: string,
    /** Seconds the server asked to wait (Retry-After of a 429), when it said. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }

  /** Whether the key (or the login and password) was refused: 401, API.md 3. */
  get isAuthError(): boolean {
    return this.status === 401;
  }
}

/** An upload into a folder: the file was stored, but could not be moved into the folder. */
export class UploadNotMovedError extends FilehavenApiError {
  override name = 'UploadNotMovedError';
  constructor(
    cause: FilehavenApiError,
    /** The file, stored at the top of the account. */
    readonly file: StoredFile,
  ) {
    super(cause.code, cause.status, `uploaded as ${file.id}, but not moved into the folder: ${cause.message}`, cause.retryAfter);
  }
}

/** The server could not be reached, or the connection broke before an answer. */
export class FilehavenConnectionError extends Error {
  override name = 'FilehavenConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Whether a string is one of the server's codes. */
export function isApiErrorCode(code: string): code is ApiErrorCode {
  return (API_ERROR_CODES as readonly string[]).includes(code);
}

/** Retry-After as seconds (a delay or an HTTP date), or undefined. */
export function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
