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
  // Extensions (API.md section 3 and our own, documented in docs/api.md).
  | 'errorNotFound'
  | 'errorMethodNotAllowed'
  | 'errorFolderNotEmpty'
  | 'errorBadRequest'
  | 'errorRateLimited'
  | 'errorInternal'
  // Sharing (issue 25, docs/api.md "Shares", "Upload requests").
  | 'errorShareNotFound'
  | 'errorShareExpired'
  | 'errorShareDownloadLimit'
  | 'errorSharePassword'
  | 'errorWrongParameters';

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

/**
 * Whether the request was refused for what it is (a 4xx ApiError: empty, blacklisted, over
 * a limit): asking again changes nothing. Anything else (storage unavailable a moment) may
 * go through on another try.
 */
export function isRefusal(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status < 500;
}

/** Constructors for the catalogue, so status and wording live in one place. */
/** The Retry-After of a 503 when the database's connections were all in use (serverBusy). */
export const BUSY_RETRY_SECONDS = 5;

export const errors = {
  wrongCredentials: () => new ApiError('errorWrongCredentials', 401, 'Invalid login or password'),
  wrongApiKey: () => new ApiError('errorPermissionDenied', 401, 'Wrong apikey'),
  permissionDenied: (why: string) => new ApiError('errorPermissionDenied', 403, why),
  notPremium: () => new ApiError('errorPermissionDenied', 403, 'An active premium account is required'),
  accountNotFound: () => new ApiError('errorAccountNotFound', 404, 'Account does not exist'),
  fileNotFound: () => new ApiError('errorFileNotFound', 404, 'File does not exist or is deleted'),
  uploadNotFound: () => new ApiError('errorFileNotFound', 404, 'Upload does not exist or has expired'),
  folderNotFound: () => new ApiError('errorFolderNotFound', 404, 'Folder does not exist or is deleted'),
  fileNotDownloadable: () => new ApiError('errorFileInNoDownloadedStatus', 410, 'File is not available or is deleted'),
  emptyFile: () => new ApiError('errorEmptyFile', 400, 'The uploaded file is empty'),
  fileSize: (limit: number) => new ApiError('errorFileSize', 413, `File size exceeds the limit of ${limit} bytes`),
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
  methodNotAllowed: (allowed: string[]) => new ApiError('errorMethodNotAllowed', 405, 'Method not allowed', { Allow: allowed.join(', ') }),
  folderNotEmpty: () => new ApiError('errorFolderNotEmpty', 409, 'Folder is not empty'),
  badRequest: (why: string) => new ApiError('errorBadRequest', 400, why),
  /** A form body past its limit; the rest is not read, so the connection is closed after the answer. */
  bodyTooLarge: () => new ApiError('errorBadRequest', 413, 'Request body is too large', { Connection: 'close' }),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError('errorRateLimited', 429, 'Too many requests', {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
  internal: () => new ApiError('errorInternal', 500, 'Internal server error'),
  /**
   * The server has more requests than its database connections carry just now (every one
   * stayed in use while the request waited): nothing was done, the same request may go
   * through after Retry-After. errorInternal's code, as the client libraries know no
   * other for a server-side failure; 503 tells it apart from a 500.
   */
  serverBusy: (retryAfterSeconds = BUSY_RETRY_SECONDS) =>
    new ApiError('errorInternal', 503, 'The server is busy, try again shortly', {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
  /** A share or upload request that does not exist, was revoked or closed, or is another account's. */
  shareNotFound: () => new ApiError('errorShareNotFound', 404, 'Share does not exist or was revoked'),
  requestNotFound: () => new ApiError('errorShareNotFound', 404, 'Upload request does not exist or was closed'),
  shareExpired: () => new ApiError('errorShareExpired', 410, 'Share has expired'),
  requestExpired: () => new ApiError('errorShareExpired', 410, 'Upload request has expired'),
  /**
   * An upload request's max_files or max_bytes is taken by the files stored and the uploads
   * still arriving. Retry-After is a slot's lease (a minute): room comes back only if an
   * upload in flight fails, and a failed one's slot is gone by then at the latest.
   */
  requestFull: () => new ApiError('errorUploadLimit', 429, 'Upload request is full: its file or byte limit is reached', { 'Retry-After': '60' }),
  shareDownloadLimit: () => new ApiError('errorShareDownloadLimit', 410, 'Share has reached its download limit'),
  /** A protected share or request asked without its password, or with a wrong one. */
  sharePassword: () => new ApiError('errorSharePassword', 401, 'This share needs its password'),
  /** Too many wrong passwords for one share from one address, or for one share in all. */
  sharePasswordThrottled: (retryAfterSeconds: number) =>
    new ApiError('errorSharePassword', 429, 'Too many wrong passwords, try again later', {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
  /** A form field of a share, request or expiry that is missing, malformed or out of range. */
  wrongParameters: (why: string) => new ApiError('errorWrongParameters', 400, why),
  /** The HTTP parser refused the request (bad request line, header or chunk syntax). */
  malformedHttp: () => new ApiError('errorBadRequest', 400, 'Malformed HTTP request'),
  /** The request head did not arrive within the headers timeout (a slow or stalled client). */
  requestTimeout: () => new ApiError('errorBadRequest', 408, 'Request timeout: the request headers did not arrive in time'),
  headersTooLarge: () => new ApiError('errorBadRequest', 431, 'Request header fields too large'),
  /** An `Expect` header other than 100-continue (RFC 9110 10.1.1). */
  expectationFailed: () => new ApiError('errorBadRequest', 417, 'Expectation failed: only 100-continue is supported'),
  /** The client's address holds as many open connections as it may (see --max-connections-per-ip). */
  tooManyConnections: () => new ApiError('errorRateLimited', 429, 'Too many open connections from your address', { 'Retry-After': '1' }),
  /** The server is shutting down; another server (or this one, restarted) will answer. */
  /** Too many failed sign-ins (API.md 8: errorWrongCredentials with 429). */
  signInThrottled: (retryAfterSeconds: number) =>
    new ApiError('errorWrongCredentials', 429, 'Too many failed sign-ins, try again later', {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
  /** Every free download slot of the client's address is taken (API.md 8). */
  tooManyDownloads: (retryAfterSeconds: number) =>
    new ApiError('errorRateLimited', 429, 'Too many downloads at once from your address. Wait for one to finish, then try again.', {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    }),
};

/**
 * What every code means (SPEC.md "Errors", plus our extensions), for the developers page.
 * A Record over ErrorCode, so a new code cannot be added without its meaning.
 */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  errorAccountNotFound: 'Account does not exist.',
  errorApiKeyAlreadyCreated: 'An API key is already created (answer to an explicit create=1).',
  errorEmptyFile: 'Upload of a zero-size file.',
  errorFileInBlackList: 'The file (its digest or its name) is in the black list.',
  errorFileInNoDownloadedStatus: 'File is not available (blocked) or is deleted: no direct link.',
  errorFileNotFound: 'File does not exist or is deleted.',
  errorFolderNotFound: 'Folder does not exist or is deleted.',
  errorFolderFilesAddFailed: 'Files were not added to the folder; nothing was moved.',
  errorFileSize: 'File size exceeds the limit.',
  errorPermissionDenied: 'No permission to run the command: a missing or wrong API key, no active premium, not the owner.',
  errorUploadLimit: 'Upload volume limit of the account exceeded for now, or an upload request is full (its max_files or max_bytes).',
  errorUploadFaild: 'Upload failed: a malformed or interrupted body, or a storage failure. (The spelling is the code as defined.)',
  errorWrongCredentials: 'Invalid login or password, or too many failed attempts.',
  errorNotFound: 'Extension: no such API path.',
  errorMethodNotAllowed: 'Extension: the path exists, the method does not (see Allow).',
  errorFolderNotEmpty: 'Extension: only an empty folder can be removed.',
  errorBadRequest: 'Extension: a malformed parameter or body.',
  errorRateLimited: 'Extension: too many requests or open connections from this key or address.',
  errorInternal: 'Extension: an unexpected server failure (500; details stay in the server log), or a server too busy to answer now (503 with Retry-After).',
  errorShareNotFound: 'Extension: the share or upload request does not exist, was revoked or closed, or is not yours.',
  errorShareExpired: 'Extension: the share or upload request has expired.',
  errorShareDownloadLimit: 'Extension: the share has been downloaded as many times as its owner allowed.',
  errorSharePassword:
    'Extension: the share or upload request needs its password (Filehaven-Share-Password), or the one given is wrong; 429 with Retry-After after too many wrong ones.',
  errorWrongParameters: 'Extension: a share, upload request or expiry field is missing, malformed or out of range.',
};

/**
 * A problem with what a person typed (CLI arguments, the console's and sign-up's forms),
 * not an API failure: its message is shown as is, and the entry point decides how (exit
 * code 2, the form again with the message).
 */
export class InputError extends Error {
  override name = 'InputError';
}
