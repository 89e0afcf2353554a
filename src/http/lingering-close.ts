import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** Longest a refused request's unread body is read and dropped before the connection is cut. */
export const LINGER_MS = 30_000;

const current = Symbol('filehaven.currentRequest');
type TrackedSocket = Socket & { [current]?: IncomingMessage };

/**
 * Lingering close. An answer sent before the request's body was read (an upload refused
 * for its key, its size or the upload volume) closes the connection. Node closes the
 * socket as soon as the answer is written; the client's bytes still arriving then make
 * the kernel reset the connection, and a reset can reach the client before it has read
 * the answer, so it never learns why (a client that sends its whole body before reading,
 * as most do, always loses it). Here, such a connection is half-closed instead: the answer
 * and a FIN go out, the rest of the body is read and dropped until the client closes, the
 * body ends, or LINGER_MS pass (nginx's lingering_time, 30 s, for the same reason); only
 * then is the socket destroyed. Connections whose request was read whole close as before.
 */
export function lingerOnRefusedBodies(server: Server): void {
  server.on('request', (request: IncomingMessage) => {
    (request.socket as TrackedSocket)[current] = request;
  });
  server.on('connection', (socket: TrackedSocket) => {
    const destroySoon = socket.destroySoon.bind(socket);
    // Node calls destroySoon once the last answer of a closing connection is written.
    socket.destroySoon = () => {
      const request = socket[current];
      if (!request || request.complete || socket.destroyed) return destroySoon();
      linger(socket, request);
    };
  });
}

function linger(socket: Socket, request: IncomingMessage): void {
  const done = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(done, LINGER_MS).unref();
  // The answer, then FIN: the client reads the answer whenever it looks.
  socket.end();
  socket.once('end', done);
  socket.once('close', () => clearTimeout(timer));
  // The body flows on to its end and is dropped (Node's own _dump resumed the request);
  // once it is over nothing more is coming, and closing sends no reset.
  request.once('end', done);
  request.resume();
  socket.resume();
}
