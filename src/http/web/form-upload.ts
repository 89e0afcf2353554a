import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { BusboyInstance } from '@fastify/busboy';
import { errors } from '../../domain/errors.js';
import { openMultipart } from '../multipart-parser.js';
import { ClientGoneError } from '../multipart-upload.js';

/** Most files one upload form may carry; the parts limit follows from it. */
export const MAX_FORM_FILES = 100;

/** One file part of an upload form. */
export interface UploadFormFile {
  /** The file's bytes; the handler must read it to its end or throw. */
  stream: Readable;
  /** The filename as sent (busboy keeps only its last path segment). */
  filename: string;
  /**
   * The text fields sent before this file part, as they were when the part began: a
   * field that comes after it (a CSRF token placed after the file input) is not here,
   * even when the parser has already read it by the time the handler runs.
   */
  fieldsBefore: ReadonlyMap<string, string>;
  /** Aborted when the form fails. */
  signal: AbortSignal;
}

/**
 * Reads a browser's multipart upload form: any number of files (up to MAX_FORM_FILES),
 * each streamed to `onFile` while the body arrives, one at a time in body order; nothing
 * is buffered beyond the parser's window. Each file comes with the text fields sent
 * before it (the CSRF token, the folder), so a form must place them first, as browsers
 * send the fields in document order. A file input left empty (a part with an empty
 * filename) is skipped. Resolves with every text field once every file has been handled;
 * rejects with the first failure (onFile's, a malformed or truncated body,
 * ClientGoneError), after which the body is no longer read.
 */
export function readUploadForm(request: IncomingMessage, onFile: (file: UploadFormFile) => Promise<void>): Promise<ReadonlyMap<string, string>> {
  return new Promise((resolve, reject) => {
    let parser: BusboyInstance;
    try {
      parser = openMultipart(request.headers, {
        isPartAFile: (_name, _type, filename) => filename !== undefined,
        limits: { files: MAX_FORM_FILES, fields: 20, fieldSize: 4096, parts: MAX_FORM_FILES + 20, headerPairs: 100 },
      });
    } catch {
      reject(errors.badRequest('Expected a multipart/form-data upload form'));
      return;
    }

    const abort = new AbortController();
    // The files are handled one after another: busboy holds the next part back until the
    // current stream is read, and this chain holds its handler back until the last settled.
    let queue: Promise<void> = Promise.resolve();
    let settled = false;

    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      abort.abort(error);
      request.unpipe(parser);
      reject(error);
    };

    const fields = new Map<string, string>();
    // The first value of a field counts: a second `csrf` after the first file must not
    // make the form valid for one file and refused for the next (found by the fuzz tests).
    parser.on('field', (name, value) => {
      if (!fields.has(name)) fields.set(name, value);
    });
    parser.on('file', (_name, stream, filename) => {
      if (settled || filename === '') {
        stream.resume();
        return;
      }
      // The snapshot is taken now: a small body is parsed to its end before the handler
      // runs, so later fields must not leak into this file's view of the form.
      const fieldsBefore = new Map(fields);
      queue = queue.then(() => (settled ? void stream.resume() : onFile({ stream, filename, fieldsBefore, signal: abort.signal })));
      queue.catch(fail);
    });
    parser.on('filesLimit', () => fail(errors.badRequest(`At most ${MAX_FORM_FILES} files can be uploaded at once`)));
    parser.on('partsLimit', () => fail(errors.badRequest('Too many parts in the upload form')));
    parser.on('fieldsLimit', () => fail(errors.badRequest('Too many fields in the upload form')));
    parser.on('error', () => fail(errors.uploadMalformed('malformed or truncated multipart body')));
    parser.on('finish', () => {
      queue.then(() => {
        if (settled) return;
        settled = true;
        resolve(fields);
      }, fail);
    });
    request.on('close', () => {
      // Not `complete`: a body Node parsed whole can still lose its buffered tail to a reset.
      if (!request.readableEnded) fail(new ClientGoneError('client disconnected during upload'));
    });
    request.pipe(parser);
  });
}
