import type { IncomingHttpHeaders } from 'node:http';
import { Busboy, type BusboyConfig, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';

/**
 * Buffer of one part's stream. It must exceed the largest chunk a socket delivers
 * (64 KiB): busboy's Dicer pauses when a push fills a part's buffer, and a part whose
 * header, data and end arrive in one chunk has already ended by then, so nothing ever
 * unpauses it and the request hangs (a 17 KB part with no form-data disposition did;
 * found by the fuzz tests). It also bounds what an upload buffers ahead of the disk.
 */
const PART_HIGH_WATER_MARK = 1024 * 1024;

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
export function openMultipart(headers: IncomingHttpHeaders, options: Omit<BusboyConfig, 'headers' | 'fileHwm'>): BusboyInstance {
  const parser = Busboy({ ...options, headers: headers as BusboyHeaders, fileHwm: PART_HIGH_WATER_MARK });
  parser.on('file', (_name, stream) => {
    stream.on('error', ignore);
  });
  return parser;
}

function ignore(): void {}
