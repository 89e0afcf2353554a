import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FileRecord } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { sendFile } from '../send-blob.js';

/**
 * Sends a file to anyone (the raw free download and the inline preview): a few at once
 * per client address, each at the free speed cap (API.md 8), the slot given back when
 * the response is over however it ends, and the bytes counted as served.
 */
export function sendFreeFile(
  context: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  file: FileRecord,
  options: { countsAsDownload: boolean; headers?: Record<string, string> },
): Promise<FastifyReply> {
  const { services } = context;
  const leave = services.limits.freeDownloads.enter(request.ip);
  // Given back when the response closes, or its connection (a response queued behind
  // another never closes when the connection dies), whichever comes first.
  const socket = request.raw.socket;
  let left = false;
  const release = () => {
    if (left) return;
    left = true;
    socket.removeListener('close', release);
    leave();
  };
  reply.raw.once('close', release);
  socket.once('close', release);
  if (reply.raw.destroyed || socket.destroyed) release();
  return sendFile(request, reply, {
    file,
    open: async (range) => services.limits.freeDownloads.throttle(await services.downloads.open(file, range)),
    // A download start is counted once, not for every resumed range (expiry reads it).
    beforeBody: async () => {
      const start = !request.headers.range || request.headers.range.startsWith('bytes=0-');
      if (options.countsAsDownload && start) await services.files.recordDownload(file.id);
    },
    afterBody: (sent) => {
      services.files.recordBytesServed(file.id, sent).catch((error) => request.log.error(error, 'counting bytes served failed'));
    },
    headers: options.headers,
  });
}
