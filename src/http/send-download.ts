import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FileRecord } from '../domain/types.js';
import type { DownloadsService } from '../downloads/downloads-service.js';
import type { Requester } from '../downloads/requester.js';
import { responseGoneSignal, sendFile } from './send-blob.js';

export interface SendDownloadOptions {
  /** Who asks through what link: decides what the download costs (downloads/requester.ts). */
  requester: Requester;
  /** A preview's bytes are served like a download's but never count as a download start. */
  purpose: 'download' | 'preview';
  /** Headers that replace the download defaults (an inline preview's, sendFile). */
  headers?: Record<string, string>;
}

/**
 * Sends a file through the download use case (downloads/downloads-service.ts), which
 * decides and charges its cost, with the HTTP semantics of sendFile (ranges, 304, HEAD,
 * backpressure). Every route that sends one file's bytes comes here.
 */
export async function sendDownload(
  downloads: DownloadsService,
  request: FastifyRequest,
  reply: FastifyReply,
  file: FileRecord,
  options: SendDownloadOptions,
): Promise<FastifyReply> {
  const download = await downloads.file(file, options.requester, {
    purpose: options.purpose,
    signal: responseGoneSignal(request, reply),
    log: (error, message) => request.log.error(error, message),
  });
  return sendFile(request, reply, {
    file,
    open: (range) => download.open(range),
    beforeBody: (length, start) => download.begin(length, start),
    progress: (sent) => download.progress(sent),
    afterBody: (sent) => download.end(sent),
    headers: options.headers,
  });
}
