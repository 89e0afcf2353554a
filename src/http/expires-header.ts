import { sqlDateTime } from '../domain/dates.js';
import type { FileRecord } from '../domain/types.js';

/** The response header that carries a file's expiry beside SPEC's unchanged bodies (issue 25). */
export const EXPIRES_HEADER = 'Filehaven-Expires';

/**
 * `Filehaven-Expires` for a file that expires, in the API's date format (`YYYY-MM-DD
 * HH:MM:SS`, UTC, as ed:premium_end); nothing for a file that never does. On an upload's
 * answer (POST /files, the tus finish), GET /files/<id> and PUT /files/<id>;expiry.
 */
export function expiresHeaders(file: Pick<FileRecord, 'expiresAt'>): Record<string, string> {
  return file.expiresAt === null ? {} : { [EXPIRES_HEADER]: sqlDateTime(file.expiresAt) };
}
