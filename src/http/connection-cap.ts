import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from '../limits/client-address.js';

/** A refused connection that does not read its answer is dropped after this long. */
const REFUSED_LINGER_MS = 5000;

/**
 * Bounds the connections one client address holds open at once (issue 7: slow clients
 * sending a byte at a time must not pile up). Counted per TCP peer, IPv6 by /64 like the
 * other per-address limits. When an address is at its cap, a new connection first takes
 * the place of one of its idle keep-alive connections (browsers keep six per host open
 * for a minute, so ten browsers behind one NAT would otherwise fill 64 doing nothing);
 * only when every one is busy does it get `refusal` (a complete HTTP response) and is
 * closed, with no request on it ever parsed or run.
 *
 * Behind a reverse proxy every connection comes from the proxy, so the cap is not used
 * there (`--trust-proxy`): the proxy bounds its clients' connections (nginx `limit_conn`).
 */
export function capConnectionsPerAddress(server: Server, max: number, refusal: () => string): void {
  // Node's own listener starts parsing requests on a socket; it must not even see a
  // refused one (a listener placed before it could not stop it from running the request).
  const httpListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const byAddress = new Map<string, Set<Socket>>();
  // Sockets that answered a request and have none in progress: idle keep-alive.
  const idle = new WeakSet<Socket>();

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    idle.delete(socket);
    response.once('close', () => idle.add(socket));
  });

  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const sockets = byAddress.get(key) ?? new Set<Socket>();
    if (sockets.size >= max) {
      const spare = [...sockets].find((open) => idle.has(open));
      if (!spare) return refuse(socket, refusal());
      sockets.delete(spare);
      spare.destroy();
    }
    sockets.add(socket);
    byAddress.set(key, sockets);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0 && byAddress.get(key) === sockets) byAddress.delete(key);
    });
    for (const listener of httpListeners) listener.call(server, socket);
  });
}

function refuse(socket: Socket, response: string): void {
  socket.on('error', () => {});
  // Whatever the client sends is read and dropped, so its writes never block the answer.
  socket.resume();
  socket.end(response);
  socket.setTimeout(REFUSED_LINGER_MS, () => socket.destroy());
  socket.once('finish', () => socket.destroySoon());
}
