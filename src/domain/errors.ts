/**
 * The API's error catalogue (SPEC.md "Errors", API.md section 3). Every failure a
 * client can see is an ApiError; anything else becomes a 500 whose details stay in the log.
 */
export type ErrorCode =
  | 'errorAccountNotFound'
  | 'errorApiKeyAlreadyCreated'
  | 'errorEmptyFile'
  | 'errorFileInBlackList'
  | 'errorFileInNoDownloadedStatus'
  | 'errorFileNotFound'
  | 'errorFolderNotFound'
  | 'errorFolderFilesAddFailed'
  | 'errorFileSize'
  | 'errorPermissionDenied'
  | 'errorUploadLimit'
  | 'errorUploadFaild'
  | 'errorWrongCredentials'
  // Extensions (API.md section 3 and our own, documented in the README).
  | 'errorNotFound'
  | 'errorMethodNotAllowed'
  | 'errorFolderNotEmpty'
  | 'errorBadRequest'
  | 'errorRateLimited'
  | 'errorInternal';

export class ApiError extends Error {
  constructor(
    /** The SPEC code, the entry title of the Atom error. */
    readonly code: ErrorCode,
    /** HTTP status of API.md section 3. */
    readonly status: number,
    message: string,
    /** Extra response headers (Retry-After, Allow). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Constructors for the catalogue, so status and wording live in one place. */
export const errors = {
  wrongCredentials: () => new ApiError('errorWrongCredentials', 401, 'Invalid login or password'),
  wrongApiKey: () => new ApiError('errorPermissionDenied', 401, 'Wrong apikey'),
  permissionDenied: (why: string) => new ApiError('errorPermissionDenied', 403, why),
  notPremium: () => new ApiError('errorPermissionDenied', 403, 'An active premium account is required'),
  accountNotFound: () => new ApiError('errorAccountNotFound', 404, 'Account does not exist'),
  fileNotFound: () => new ApiError('errorFileNotFound', 404, 'File does not exist or is deleted'),
  folderNotFound: () => new ApiError('errorFolderNotFound', 404, 'Folder does not exist or is deleted'),
  fileNotDownloadable: () =>
    new ApiError('errorFileInNoDownloadedStatus', 410, 'File is not available or is deleted'),
  emptyFile: () => new ApiError('errorEmptyFile', 400, 'The uploaded file is empty'),
  fileSize: (limit: number) =>
    new ApiError('errorFileSize', 413, `File size exceeds the limit of ${limit} bytes`),
  uploadLimit: (retryAfterSeconds: number) =>
    new ApiError('errorUploadLimit', 429, 'Upload limit exceeded', {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
  blacklisted: () => new ApiError('errorFileInBlackList', 403, 'File is in the black list'),
  folderFilesAddFailed: (why: string) => new ApiError('errorFolderFilesAddFailed', 422, why),
  apiKeyAlreadyCreated: () => new ApiError('errorApiKeyAlreadyCreated', 409, 'An API key is already created'),
  uploadMalformed: (why: string) => new ApiError('errorUploadFaild', 400, `Upload failed: ${why}`),
  uploadStorage: () => new ApiError('errorUploadFaild', 500, 'Upload failed: storage error'),
  notFound: () => new ApiError('errorNotFound', 404, 'No such resource'),
  methodNotAllowed: (allowed: string[]) =>
    new ApiError('errorMethodNotAllowed', 405, 'Method not allowed', { Allow: allowed.join(', ') }),
  folderNotEmpty: () => new ApiError('errorFolderNotEmpty', 409, 'Folder is not empty'),
  badRequest: (why: string) => new ApiError('errorBadRequest', 400, why),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError('errorRateLimited', 429, 'Too many requests', {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
  internal: () => new ApiError('errorInternal', 500, 'Internal server error'),
};
