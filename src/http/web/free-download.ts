import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FileRecord } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { sendFile, whenResponseGone } from '../send-blob.js';

/**
 * Sends a file to anyone (the raw free download and the inline preview): a few at once
 * per client address, each at the free speed cap (API.md 8), the slot given back when
 * the response is over however it ends, and the bytes counted as served.
 */
export async function sendFreeFile(
  context: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  file: FileRecord,
  options: { countsAsDownload: boolean; headers?: Record<string, string> },
): Promise<FastifyReply> {
  const { services } = context;
  whenResponseGone(request, reply, await services.limits.freeDownloads.enter(request.ip));
  let metered: ((sent: number) => void) | undefined;
  return sendFile(request, reply, {
    file,
    open: async (range) => services.limits.freeDownloads.throttle(await services.downloads.open(file, range)),
    // A download start is counted once, not for every resumed range (expiry reads it).
    beforeBody: async () => {
      const start = !request.headers.range || request.headers.range.startsWith('bytes=0-');
      if (options.countsAsDownload && start) await services.files.recordDownload(file.id);
      // Last: afterBody, which ends the meter, runs only when beforeBody went through.
      metered = services.metrics.downloadStarted('public');
    },
    afterBody: (sent) => {
      metered?.(sent);
      services.files.recordBytesServed(file.id, sent).catch((error) => request.log.error(error, 'counting bytes served failed'));
    },
    headers: options.headers,
  });
}
