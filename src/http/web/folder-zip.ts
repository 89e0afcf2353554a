import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { HttpContext } from '../context.js';
import { whenResponseGone } from '../send-blob.js';

/** The ZIP of a folder, beside its public page. */
export const folderZipPath = (folder: { id: string }) => `/folder/${folder.id}/zip`;

/**
 * `GET /folder/<id>/zip`: the folder and everything below it as one streamed ZIP (README
 * "A folder as one ZIP"). Whoever may see the folder page (anyone with its link, its
 * owner among them) may download it, under the rules of free downloads: the ZIP holds
 * one of the address's download slots until it ends, however it ends, and streams at the
 * free speed cap; only active files go in (blocked and deleted ones never), and each
 * file's download start and bytes are counted as a download of that file would be. No
 * ranges: the archive is made as it streams.
 */
export function registerFolderZip(app: FastifyInstance, context: HttpContext): void {
  const { services } = context;
  app.get('/folder/:id/zip', { config: { web: true } }, async (request, reply) => {
    const folder = await services.folders.find((request.params as { id: string }).id);
    const plan = await services.archives.plan(folder);
    const headers: OutgoingHttpHeaders = {
      'Content-Type': 'application/zip',
      'Content-Length': plan.size,
      'Content-Disposition': contentDisposition(plan.fileName, { type: 'attachment' }),
      'Cache-Control': 'private, no-cache',
      'Accept-Ranges': 'none',
      'X-Content-Type-Options': 'nosniff',
    };
    // An empty stream keeps Fastify's HEAD route from rewriting Content-Length to 0 (send-blob.ts).
    if (request.method === 'HEAD') return reply.headers(headers).send(Readable.from([]));

    // One slot for the whole archive, given back when the response is over however it ends.
    const release = await services.limits.freeDownloads.enter(request.ip);
    const abort = new AbortController();
    let sent = 0;
    const metered = services.metrics.downloadStarted('public');
    whenResponseGone(request, reply, () => {
      abort.abort();
      release();
      metered(sent);
    });
    const zip = services.archives.stream(plan, {
      signal: abort.signal,
      events: {
        entryStarted: (file) => {
          services.files.recordDownload(file.id).catch((error) => request.log.error(error, 'counting a download failed'));
        },
        entryDone: (file) => {
          services.files.recordBytesServed(file.id, file.size).catch((error) => request.log.error(error, 'counting bytes served failed'));
        },
      },
    });
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        sent += chunk.length;
        callback(null, chunk);
      },
    });
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, headers);
    try {
      await pipeline(services.limits.freeDownloads.throttle(zip), counted, res);
    } catch (error) {
      // After the status line a failure can only cut the connection: the client sees a
      // short body against Content-Length. A client that left is no failure.
      if (!abort.signal.aborted) request.log.warn({ err: error }, 'folder ZIP cut short');
      res.destroy();
    }
    return reply;
  });
}
