import type { ApiError } from '../../domain/errors.js';
import { humanSize } from './format.js';

/** 45 s, 3 min 20 s, 12 min, 2 h 5 min: how long until an upload may be tried again. */
export function humanWait(seconds: number): string {
  // The same words as static/upload-text.js humanDuration: a refusal reads alike with or
  // without JavaScript.
  const s = Math.max(1, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 10 && s % 60 !== 0) return `${minutes} min ${s % 60} s`;
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * Why an upload was refused, in words for the site's pages: sizes in human units and what
 * to do next. The API keeps its own wording (API.md 3: "… the limit of 1048576 bytes");
 * this is only how a page says it. my-files.js says the same of tus's Atom errors.
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
      return 'This file is not allowed on this site (its content or its name is on the blacklist).';
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
