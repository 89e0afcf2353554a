import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../context.js';
import { pump } from '../send-blob.js';
import { enterFreeDownload } from './free-download.js';

/** The ZIP of a folder, beside its public page. */
export const folderZipPath = (folder: { id: string }) => `/folder/${folder.id}/zip`;

/**
 * `GET /folder/<id>/zip`: the folder and everything below it as one streamed ZIP (docs/web.md
 * "A folder as one ZIP"). Whoever may see the folder page (anyone with its link, its
 * owner among them) may download it, under the rules of free downloads (free-download.ts):
 * the ZIP, and a HEAD of it, holds one of the address's download slots from before its
 * plan is made until the response ends, however it ends, so planning is bounded by the
 * slots too; it streams at the free speed cap; only active files go in (blocked and
 * deleted ones never), and each file's download start and the bytes of it that were sent
 * are counted as a download of that file would be. No ranges: the archive is made as it
 * streams.
 */
export function registerFolderZip(app: FastifyInstance, context: HttpContext): void {
  const { services } = context;
  app.get('/folder/:id/zip', { config: { web: true } }, async (request, reply) => {
    const folder = await services.folders.find((request.params as { id: string }).id);
    const download = await enterFreeDownload(context, request, reply);
    const plan = await services.archives.plan(folder);
    reply.headers({
      'Content-Type': 'application/zip',
      'Content-Length': plan.size,
      'Content-Disposition': contentDisposition(plan.fileName, { type: 'attachment' }),
      'Cache-Control': 'private, no-cache',
      'Accept-Ranges': 'none',
      'X-Content-Type-Options': 'nosniff',
    });
    // An empty stream keeps Fastify's HEAD route from rewriting Content-Length to 0 (send-blob.ts).
    if (request.method === 'HEAD') return reply.send(Readable.from([]));

    const abort = new AbortController();
    let sent = 0;
    download.begin();
    const zip = services.archives.stream(plan, {
      signal: abort.signal,
      events: {
        entryStarted: (file) => {
          download.countStart(file.id).catch((error) => request.log.error(error, 'counting a download failed'));
        },
      },
    });
    const body = download.throttle(zip);
    const res = reply.raw;
    // After the status line a failure can only cut the connection: the client sees a
    // short body against Content-Length. A client that left is no failure.
    body.on('error', (error) => {
      if (!abort.signal.aborted) request.log.warn({ err: error }, 'folder ZIP cut short');
      res.destroy();
    });
    // The response's one listener of this download (issue 23): the end stops the archive
    // (closing the file being read) and counts what was sent of each file.
    download.whenGone(() => {
      abort.abort();
      body.destroy();
      download.end(
        sent,
        services.archives.sentPerFile(plan, sent).map(({ file, bytes }) => ({ fileId: file.id, bytes })),
      );
    });
    reply.hijack();
    // Every header set so far goes out, not only the ZIP's: the request id, a session's
    // Set-Cookie, Connection: close while the server drains (as send-blob.ts does).
    res.writeHead(200, reply.getHeaders() as OutgoingHttpHeaders);
    // Bytes count as sent once their write reached the kernel, as for a single file.
    pump(body, res, plan.size, (bytes) => {
      sent += bytes;
    });
    return reply;
  });
}
