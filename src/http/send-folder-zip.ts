import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { create as contentDisposition } from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Folder } from '../domain/types.js';
import type { DownloadsService } from '../downloads/downloads-service.js';
import type { Requester } from '../downloads/requester.js';
import { pump, responseGoneSignal } from './send-blob.js';

/**
 * Sends a folder and everything below it as one streamed ZIP through the download use case
 * (downloads/downloads-service.ts), which admits, plans, charges and counts it for
 * `requester`. Every route that sends a folder's ZIP comes here (a folder's public link,
 * a folder share), as every single file goes through send-download.ts. No ranges: the
 * archive is made as it streams, so every GET is one whole download; HEAD only describes it.
 */
export async function sendFolderZip(
  downloads: DownloadsService,
  request: FastifyRequest,
  reply: FastifyReply,
  folder: Folder,
  requester: Requester,
): Promise<FastifyReply> {
  // The response's one listener of this download (issue 23): the end gives back what the
  // admission held, stops the archive and counts what was sent of each file.
  const gone = responseGoneSignal(request, reply);
  const zip = await downloads.folder(folder, requester, { signal: gone, log: (error, message) => request.log.error(error, message) });
  const headers = {
    'Content-Type': 'application/zip',
    'Content-Length': zip.size,
    'Content-Disposition': contentDisposition(zip.fileName, { type: 'attachment' }),
    'Cache-Control': 'private, no-cache',
    'Accept-Ranges': 'none',
    'X-Content-Type-Options': 'nosniff',
  };
  // An empty stream keeps Fastify's HEAD route from rewriting Content-Length to 0 (send-blob.ts).
  if (request.method === 'HEAD') return reply.headers(headers).send(Readable.from([]));

  // Charged (and, through a share, counted) first: a refusal is still a clean error, without the ZIP's headers.
  const body = await zip.start();
  reply.headers(headers);
  const res = reply.raw;
  // After the status line a failure can only cut the connection: the client sees a
  // short body against Content-Length. A client that left is no failure.
  body.on('error', (error) => {
    if (!gone.aborted) request.log.warn({ err: error }, 'folder ZIP cut short');
    res.destroy();
  });
  reply.hijack();
  // Every header set so far goes out, not only the ZIP's: the request id, a session's
  // Set-Cookie, Connection: close while the server drains (as send-blob.ts does).
  res.writeHead(200, reply.getHeaders() as OutgoingHttpHeaders);
  // Bytes count as sent once their write reached the kernel, as for a single file.
  let sent = 0;
  pump(body, res, zip.size, (bytes) => {
    sent += bytes;
    zip.progress(sent);
  });
  return reply;
}
