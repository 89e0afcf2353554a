import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from '../limits/client-address.js';

/**
 * Bounds the connections one client address holds open at once (issue 7: slow clients
 * sending a byte at a time must not pile up). Counted per TCP peer, IPv6 by /64 like the
 * other per-address limits. A connection over the cap gets `refusal` (a complete HTTP
 * response) and is closed before any request on it is read.
 *
 * Behind a reverse proxy every connection comes from the proxy, so the cap is not used
 * there (`--trust-proxy`): the proxy bounds its clients' connections (nginx `limit_conn`).
 */
export function capConnectionsPerAddress(server: Server, max: number, refusal: () => string): void {
  const open = new Map<string, number>();
  // Ahead of Node's own listener, which would start parsing requests on the socket.
  server.prependListener('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const count = (open.get(key) ?? 0) + 1;
    if (count > max) {
      refuse(socket, refusal());
      return;
    }
    open.set(key, count);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}

function refuse(socket: Socket, response: string): void {
  // Nothing the client sends is read: the request never reaches a route.
  socket.pause();
  socket.on('error', () => {});
  socket.end(response);
  // A client that never reads its answer cannot hold the socket either.
  socket.setTimeout(5000, () => socket.destroy());
}
