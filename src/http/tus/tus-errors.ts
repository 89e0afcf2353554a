import { STATUS_CODES } from 'node:http';
import { DatabaseBusyError } from '../../db/dialect.js';
import { ApiError, errors } from '../../domain/errors.js';

/**
 * Any failure as an ApiError with the SPEC code a client of the API expects: ours as
 * they are, tus's by status (its plain-text reason kept as the message), anything else a
 * logged 500 that says nothing of its cause.
 */
export function apiErrorOf(error: unknown, maxFileSize: number, log: (cause: unknown) => unknown): ApiError {
  if (error instanceof ApiError) return error;
  // Every database connection in use (a lock, a creation, a finish): a 503 to retry.
  if (error instanceof DatabaseBusyError) return errors.serverBusy();
  const tus = error as { status_code?: unknown; body?: unknown } | null;
  if (tus && typeof tus.status_code === 'number') {
    const status = tus.status_code;
    const reason = typeof tus.body === 'string' && tus.body.trim() !== '' ? tus.body.trim() : (STATUS_CODES[status] ?? 'Error');
    if (status === 404 || status === 410) return errors.uploadNotFound();
    if (status === 413)
      return new ApiError('errorFileSize', 413, reason === 'Maximum size exceeded' ? errors.fileSize(maxFileSize).message : `Upload failed: ${reason}`);
    if (status >= 500 && status !== 501) {
      log(error);
      return errors.uploadStorage();
    }
    return new ApiError('errorUploadFaild', status, `Upload failed: ${reason}`);
  }
  log(error);
  return errors.uploadStorage();
}

/** Whether a failure is one to answer in the API's shape: ours, or tus's own refusals (its lock's 423) thrown outside its handlers. */
export function isKnownFailure(error: unknown): boolean {
  return error instanceof ApiError || typeof (error as { status_code?: unknown } | null)?.status_code === 'number';
}
