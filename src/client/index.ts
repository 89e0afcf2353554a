/**
 * `filehaven/client`: the SDK for the filehaven API (SPEC.md, API.md). It imports
 * nothing from the server, so a program that uses it loads no server code.
 *
 *   const client = new FilehavenClient({ server: 'https://files.example.com', key });
 *   const file = await client.upload('report.pdf', { onProgress: (sent, total) => ... });
 */
export { FilehavenClient, type ClientOptions, type DownloadVia, type UploadOptions, type UploadTransportChoice } from './filehaven-client.js';
export { API_ERROR_CODES, FilehavenApiError, FilehavenConnectionError, UploadNotMovedError, type ApiErrorCode, type ClientErrorCode } from './client-errors.js';
export type * from './api-types.js';
export type { CallOptions, FetchFunction } from './api-connection.js';
export type { DownloadOptions, DownloadStream, DownloadTarget } from './download.js';
export type { UploadInput, UploadSource } from './upload-source.js';
export type { UploadCall, UploadProgress, UploadTransport } from './upload-transport.js';
