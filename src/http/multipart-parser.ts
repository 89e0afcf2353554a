import { Busboy, type BusboyConfig, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The one way this app opens a multipart parser. busboy reports a part cut short (a body
 * that ends before the closing boundary) by emitting `error` on the part's file stream
 * as well as on the parser; a file stream nobody listens to yet (queued, skipped, or
 * already unpiped after a failure) would turn that into an uncaught exception that ends
 * the process. Every file stream gets a listener here, before any handler sees it; the
 * failure still reaches the caller through the parser's own `error` event.
 *
 * Throws when the headers do not describe a multipart body (no boundary, another type).
 */
export function openMultipart(headers: IncomingHttpHeaders, options: Omit<BusboyConfig, 'headers'>): BusboyInstance {
  const parser = Busboy({ ...options, headers: headers as BusboyHeaders });
  parser.on('file', (_name, stream) => {
    stream.on('error', ignore);
  });
  return parser;
}

function ignore(): void {}
