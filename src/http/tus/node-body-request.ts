import type { IncomingMessage, ServerResponse } from 'node:http';
import { finished } from 'node:stream';
import { NodeRequest } from 'srvx/node';

/** What the body's web stream holds ahead of its reader, in bytes. */
const BODY_AHEAD_BYTES = 1024 * 1024;

/**
 * srvx's request for @tus/server, with its body as a web stream over the Node request that neither
 * copies nor piles up the bytes. srvx reads the body through Readable.toWeb, which (Node
 * 20) copies every chunk into a new Uint8Array and counts its queue in chunks with the
 * Readable's highWaterMark, 16,384 of them: a body that arrives faster than the store
 * writes could queue up to 1 GiB, and each copy is garbage (a tus PATCH spent a tenth of
 * its time in GC). Here the socket's own Buffers pass as they are, and the request is
 * paused once 1 MiB waits.
 */
export function nodeBodyRequest(raw: IncomingMessage, res: ServerResponse): Request {
  const request = new NodeRequest({ req: raw, res });
  let body: ReadableStream<Uint8Array> | null | undefined;
  // An own accessor in front of srvx's (a subclass may not turn Request's `body` into one).
  Object.defineProperty(request, 'body', {
    get: () => {
      if (body === undefined) body = raw.method === 'GET' || raw.method === 'HEAD' ? null : bodyStream(raw);
      return body;
    },
  });
  return request;
}

function bodyStream(raw: IncomingMessage): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  // Once cancelled, closed or errored, the stream takes nothing more (the controller would throw).
  let open = true;
  raw.pause();
  raw.on('data', (chunk: Buffer) => {
    if (!open) return;
    controller.enqueue(chunk);
    if ((controller.desiredSize ?? 0) <= 0) raw.pause();
  });
  // As Node's own adapter: the end closes the stream, a cut-off body (the client gone) errors it.
  finished(raw, { writable: false }, (error) => {
    if (!open) return;
    open = false;
    if (error) controller.error(error);
    else controller.close();
  });
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        raw.resume();
      },
      cancel(reason) {
        open = false;
        raw.destroy(reason instanceof Error ? reason : undefined);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: BODY_AHEAD_BYTES }),
  );
}
