import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../context.js';
import { pump, responseGoneSignal } from '../send-blob.js';

/** The services this module calls. */
type Context = HttpContext<'downloads' | 'folders'>;

/** The ZIP of a folder, beside its public page. */
export const folderZipPath = (folder: { id: string }) => `/folder/${folder.id}/zip`;

/**
 * `GET /folder/<id>/zip`: the folder and everything below it as one streamed ZIP (docs/web.md
 * "A folder as one ZIP"). Whoever may see the folder page (anyone with its link, its
 * owner among them) may download it as a public download: what it costs (a free slot held
 * from before its plan until the response ends, however it ends, and the speed cap) and
 * what it counts is the download use case's (downloads/downloads-service.ts); this route
 * adapts it to HTTP. No ranges: the archive is made as it streams.
 */
export function registerFolderZip(app: FastifyInstance, context: Context): void {
  const { services } = context;
  app.get('/folder/:id/zip', { config: { web: true } }, async (request, reply) => {
    const folder = await services.folders.find((request.params as { id: string }).id);
    // The response's one listener of this download (issue 23): the end gives the slot
    // back, stops the archive and counts what was sent of each file.
    const gone = responseGoneSignal(request, reply);
    const zip = await services.downloads.folder(
      folder,
      { link: 'public', address: request.ip },
      { signal: gone, log: (error, message) => request.log.error(error, message) },
    );
    reply.headers({
      'Content-Type': 'application/zip',
      'Content-Length': zip.size,
      'Content-Disposition': contentDisposition(zip.fileName, { type: 'attachment' }),
      'Cache-Control': 'private, no-cache',
      'Accept-Ranges': 'none',
      'X-Content-Type-Options': 'nosniff',
    });
    // An empty stream keeps Fastify's HEAD route from rewriting Content-Length to 0 (send-blob.ts).
    if (request.method === 'HEAD') return reply.send(Readable.from([]));

    const body = await zip.start();
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
  });
}
