import type { IncomingMessage } from 'node:http';
import type { BusboyInstance } from '@fastify/busboy';
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../domain/errors.js';
import type { RouteFlags } from '../context.js';
import { openMultipart } from '../multipart-parser.js';

/** Form bodies of non-upload requests are small; this bounds what is read. */
export const FORM_BODY_LIMIT = 1024 * 1024;

/**
 * Body parsing for the API: url-encoded forms (SPEC.md), multipart forms (some clients
 * send every POST as form-data), and anything else read and ignored within the limit.
 * Routes flagged `streamBody` get the multipart body unread, to stream it to storage.
 */
export async function registerBodyParsers(app: FastifyInstance): Promise<void> {
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });

  app.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    if ((request.routeOptions.config as RouteFlags | undefined)?.streamBody) return done(null, undefined);
    parseMultipartFields(payload, request.headers).then(
      (fields) => done(null, fields),
      (error: Error) => done(error, undefined),
    );
  });

  // tus's PATCH and creation-with-upload bodies: the resumable upload route streams them;
  // anywhere else they are refused unread, as too large for a form.
  app.addContentTypeParser('application/offset+octet-stream', (request, _payload, done) => {
    if ((request.routeOptions.config as RouteFlags | undefined)?.streamBody) return done(null, undefined);
    done(errors.bodyTooLarge(), undefined);
  });

  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT }, (_request, _body, done) => done(null, undefined));
}

/**
 * Reads the text fields of a multipart form; file parts are read and dropped (busboy's
 * `files: 0` limit stops emitting `finish` once a skipped part passes its buffer, so the
 * request would hang). Past FORM_BODY_LIMIT, declared or counted, the body is refused with
 * 413 and not read further. Settles in every case: finish, a malformed body, or the client gone.
 */
function parseMultipartFields(payload: IncomingMessage, headers: IncomingMessage['headers']): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > FORM_BODY_LIMIT) {
      reject(errors.bodyTooLarge());
      return;
    }
    let parser: BusboyInstance;
    try {
      parser = openMultipart(headers, { limits: { fields: 200, fieldSize: 64 * 1024, parts: 300 } });
    } catch {
      reject(errors.badRequest('Malformed multipart/form-data body'));
      return;
    }
    const fields: Record<string, string> = {};
    let received = 0;
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      payload.off('data', count);
      payload.off('close', onClose);
      if (!error) return resolve(fields);
      // Unpiped, the request pauses: the rest of the body is never read (bodyTooLarge
      // closes the connection after the answer).
      payload.unpipe(parser);
      reject(error);
    };
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > FORM_BODY_LIMIT) settle(errors.bodyTooLarge());
    };
    const onClose = () => {
      // Not `complete`: a body Node parsed whole can still lose its buffered tail to a reset.
      if (!payload.readableEnded) settle(errors.badRequest('The client disconnected'));
    };
    // Past its limits busboy drops fields or cuts values silently; a form read in part must
    // not be acted on as if whole.
    parser.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (valueTruncated) return settle(errors.badRequest('A form field is too long'));
      fields[name] = value;
    });
    parser.on('fieldsLimit', () => settle(errors.badRequest('Too many fields in the form')));
    parser.on('partsLimit', () => settle(errors.badRequest('Too many parts in the form')));
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('error', () => settle(errors.badRequest('Malformed multipart/form-data body')));
    parser.on('finish', () => settle());
    payload.on('data', count);
    payload.on('close', onClose);
    payload.on('error', () => settle(errors.badRequest('Malformed multipart/form-data body')));
    payload.pipe(parser);
  });
}
