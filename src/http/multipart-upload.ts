import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { BusboyInstance } from '@fastify/busboy';
import type { StagedBlob } from '../blob/blob-store.js';
import { ApiError, errors } from '../domain/errors.js';
import { openMultipart } from './multipart-parser.js';

/** The file of an upload request, staged but not yet stored. */
export interface ReceivedFile {
  staged: StagedBlob;
  /** The part's filename as sent (decoded as UTF-8), before sanitising. */
  filename: string;
}

/** The client went away before the body was complete; there is nobody to answer. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError';
}

type Stage = (source: Readable, signal: AbortSignal) => Promise<StagedBlob>;
type Discard = (staged: StagedBlob) => Promise<void>;
/** Reads a form field beside the file; throwing an ApiError refuses the upload (the file is then discarded). */
type OnField = (name: string, value: string) => void;

/**
 * Reads a multipart upload with exactly one file (API.md section 2): the part named
 * `upload`, or the first part with a filename. The file streams straight into `stage`;
 * on any failure (malformed or truncated body, a second file, the client gone, a limit)
 * the staging is aborted or discarded, so nothing is left on disk. Other fields go to
 * `onField` as they are parsed, before or after the file part: a field after the file is
 * read once the file's bytes have streamed into staging (nothing is buffered for it), and
 * a refusal then discards what was staged.
 */
export function receiveSingleFile(request: IncomingMessage, stage: Stage, discard: Discard, onField?: OnField): Promise<ReceivedFile> {
  return new Promise((resolve, reject) => {
    let parser: BusboyInstance;
    try {
      parser = openMultipart(request.headers, {
        // A part named `upload` is the file even without a filename (curl -F upload=<file).
        isPartAFile: (name, _type, filename) => filename !== undefined || name === 'upload',
        limits: { files: 1, fields: 50, fieldSize: 64 * 1024, parts: 100, headerPairs: 100 },
      });
    } catch {
      reject(errors.uploadMalformed('expected a multipart/form-data body'));
      return;
    }

    const abort = new AbortController();
    let staging: Promise<StagedBlob> | undefined;
    let filename = '';
    let settled = false;

    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      abort.abort(error);
      request.unpipe(parser);
      // The answer waits for the cleanup, so a refused upload has left nothing behind by
      // the time its client hears of it: an aborted staging removes its own temp file
      // before it rejects, and one that already finished is discarded here.
      const cleanup = staging ? staging.then(discard, () => {}).catch(() => {}) : Promise.resolve();
      void cleanup.then(() => reject(error));
    };

    parser.on('file', (_name, stream, name) => {
      filename = name ?? '';
      staging = stage(stream, abort.signal);
      staging.catch((error: unknown) => fail(error instanceof ApiError ? error : errors.uploadMalformed('the file could not be read')));
    });
    parser.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (settled || !onField) return;
      try {
        if (valueTruncated) throw errors.wrongParameters(`the field ${name} is too long`);
        onField(name, value);
      } catch (error) {
        fail(error instanceof ApiError ? error : errors.uploadMalformed(`the field ${name} could not be read`));
      }
    });
    parser.on('filesLimit', () => fail(errors.uploadMalformed('exactly one file per request')));
    parser.on('partsLimit', () => fail(errors.uploadMalformed('too many parts')));
    parser.on('fieldsLimit', () => fail(errors.uploadMalformed('too many fields')));
    parser.on('error', () => fail(errors.uploadMalformed('malformed or truncated multipart body')));
    parser.on('finish', () => {
      if (settled) return;
      if (!staging) return fail(errors.uploadMalformed('no file part in the request'));
      staging.then(
        (staged) => {
          if (settled) return void discard(staged).catch(() => {});
          settled = true;
          resolve({ staged, filename });
        },
        () => {},
      );
    });
    // Not `complete`: Node may have parsed the whole body while part of it still waits in
    // the stream's buffer, and a client that resets or half-closes then takes those bytes
    // with it. Only a body read to its end lets the parser finish.
    request.on('close', () => {
      if (!request.readableEnded) fail(new ClientGoneError('client disconnected during upload'));
    });
    request.pipe(parser);
  });
}
