import formbody from '@fastify/formbody';
import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { errors } from '../../domain/errors.js';
import type { RouteFlags } from '../context.js';

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

  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT }, (_request, _body, done) => done(null, undefined));
}

/** Reads the text fields of a multipart form; file parts are skipped. */
function parseMultipartFields(payload: IncomingMessage, headers: IncomingMessage['headers']): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    let parser: BusboyInstance;
    try {
      parser = Busboy({ headers: headers as BusboyHeaders, limits: { files: 0, fields: 200, fieldSize: 64 * 1024, parts: 300 } });
    } catch {
      reject(errors.badRequest('Malformed multipart/form-data body'));
      return;
    }
    const fields: Record<string, string> = {};
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('error', () => reject(errors.badRequest('Malformed multipart/form-data body')));
    parser.on('finish', () => resolve(fields));
    payload.pipe(parser);
  });
}
