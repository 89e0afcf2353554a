/**
 * `filehaven/client`: the SDK for the filehaven API (SPEC.md, API.md). It imports
 * nothing from the server, so a program that uses it loads no server code.
 *
 *   const client = new FilehavenClient({ server: 'https://files.example.com', key });
 *   const file = await client.upload('report.pdf', { onProgress: (sent, total) => ... });
 */

export type { CallOptions, FetchFunction } from './api-connection.js';
export type * from './api-types.js';
export { API_ERROR_CODES, type ApiErrorCode, type ClientErrorCode, FilehavenApiError, FilehavenConnectionError, UploadNotMovedError } from './client-errors.js';
export type { DownloadOptions, DownloadStream, DownloadTarget } from './download.js';
export {
  type ClientOptions,
  type DownloadVia,
  FilehavenClient,
  MAX_UPLOAD_CONNECTIONS,
  type RequestUploadOptions,
  type ShareDownloadOptions,
  type UploadOptions,
  type UploadTransportChoice,
} from './filehaven-client.js';
export type { ShareChanges, ShareOptions, UploadRequestChanges, UploadRequestOptions } from './sharing-forms.js';
export { DEFAULT_UPLOAD_CONNECTIONS, PARALLEL_UPLOAD_MIN_BYTES } from './tus-upload-transport.js';
export type { UploadInput, UploadSource } from './upload-source.js';
export type { RequestDestination, UploadCall, UploadProgress, UploadTransport } from './upload-transport.js';
