import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from '../limits/client-address.js';

/** A refused connection that neither reads its answer nor closes is dropped after this long. */
const REFUSED_LINGER_MS = 5000;
/** How long a connection over the cap has to show its request line (a probe sends it with the connect). */
const PEEK_MS = 2000;
/** Open connections (idle keep-alive ones included) an address may hold, per request in progress it may have. */
export const OPEN_PER_BUSY = 8;
/** Health probes let in above the cap at once, per address; each such connection carries one request. */
const PROBES_ABOVE_CAP = 4;
/** Request lines of a health probe (`/healthz`, `/readyz`): cheap to answer, and an orchestrator must get the answer. */
const PROBE_STARTS = ['GET /healthz', 'HEAD /healthz', 'GET /readyz', 'HEAD /readyz'].flatMap((line) => [`${line} `, `${line}?`]);

/** Requests the cap refuses on a connection already open: the app answers them 429 without running them. */
const refused = new WeakSet<IncomingMessage>();

/** Whether the cap refused this request (its address has `max` requests in progress); answer 429 with `Connection: close`. */
export function refusedByConnectionCap(request: IncomingMessage): boolean {
  return refused.has(request);
}

/** The connections of one client address. */
interface AddressConnections {
  /** Every open connection, idle keep-alive ones included (health probes let in above the cap aside). */
  open: Set<Socket>;
  /** How many of `open` are busy (Connection.busy). */
  busy: number;
  /** Connections let in above the cap for one health probe each. */
  probes: number;
}

/** One admitted connection. */
interface Connection {
  address: AddressConnections;
  /** Counted in `address.busy`: from its arrival until its first answer, then while a request on it is in progress. */
  busy: boolean;
  /** Requests received and not yet answered (more than one when pipelined). */
  inFlight: number;
  /** Its next answer carries `Connection: close`: a probe's connection, or an idle one asked to make room. */
  closeAfterAnswer: boolean;
  /** Let in above the cap for a health probe: its first request runs, nothing else. */
  probe: boolean;
  /** Requests received on it so far. */
  requests: number;
  /** When its last answer ended, as a count of answers of the server (higher is later). */
  lastAnswer: number;
}

/**
 * Bounds what one client address holds (issue 7: slow clients sending a byte at a time
 * must not pile up), counted per TCP peer, IPv6 by /64 like the other per-address limits.
 *
 * `max` counts the connections with a request in progress (a new connection counts from
 * its arrival, so one that dribbles its head does), the resource a slow client ties up,
 * as nginx's `limit_conn` does; idle keep-alive connections only cost a socket until the
 * keep-alive timeout (65 s), and are bounded apart, at OPEN_PER_BUSY × `max` open. An
 * office behind one NAT keeps hundreds of idle connections (40 browsers × 6) and has few
 * requests in progress at any moment; a backup job with as many workers as `max` fits.
 *
 * At either bound nothing in use is ever closed: a socket closed under a client that is
 * reusing it at that instant is a reset, and after a POST the client cannot tell whether
 * its upload landed (issue 23). Instead:
 * - a new connection gets `refusal` (429 with Retry-After, `Connection: close`) and no
 *   request on it is parsed or run; its bytes are read and dropped until the client
 *   closes, so the answer is not lost to a reset;
 * - a request that arrives on an open connection while its address has `max` in
 *   progress is marked (refusedByConnectionCap) and answered 429 with `Connection: close`,
 *   at a response boundary, which every HTTP client handles;
 * - at the open bound, an idle connection of the address is told to close after its next
 *   answer (`Connection: close`), so room comes with that client's next request rather
 *   than the keep-alive timeout. Closing idle sockets on our side instead races a client
 *   that is just sending on one: clients keep them as long as the server's Keep-Alive
 *   hint says (Node's agent and undici honour `timeout=65`, browsers keep them longer),
 *   so no idle socket is safe to close before Node's own keepAliveTimeout does.
 * A health probe (GET or HEAD of /healthz or /readyz) is never refused for the cap: on
 * a new connection over it, the request line is read first, and a probe's connection is
 * let in (up to PROBES_ABOVE_CAP at once) for that one request.
 *
 * Behind a reverse proxy every connection comes from the proxy, so the cap is not used
 * there (`--trust-proxy`): the proxy bounds its clients' connections (nginx `limit_conn`).
 */
export function capConnectionsPerAddress(server: Server, max: number, refusal: () => string): void {
  // Node's own listener starts parsing requests on a socket; it must not even see a
  // refused one (a listener placed before it could not stop it from running the request).
  const httpListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const maxOpen = max * OPEN_PER_BUSY;
  const byAddress = new Map<string, AddressConnections>();
  const connections = new WeakMap<Socket, Connection>();
  let answers = 0;
  const addressOf = (key: string) => {
    const address = byAddress.get(key) ?? { open: new Set<Socket>(), busy: 0, probes: 0 };
    byAddress.set(key, address);
    return address;
  };

  const admit = (socket: Socket, key: string, probe: boolean) => {
    const address = addressOf(key);
    const connection: Connection = { address, busy: !probe, inFlight: 0, closeAfterAnswer: probe, probe, requests: 0, lastAnswer: 0 };
    connections.set(socket, connection);
    if (probe) address.probes++;
    else {
      address.open.add(socket);
      address.busy++;
    }
    socket.once('close', () => {
      if (probe) address.probes--;
      else address.open.delete(socket);
      if (connection.busy) address.busy--;
      if (address.open.size === 0 && address.probes === 0 && byAddress.get(key) === address) byAddress.delete(key);
    });
    for (const listener of httpListeners) listener.call(server, socket);
  };

  // The idle one answered last: the likeliest to carry another request soon, so room
  // comes soonest (one answered long ago may sit unused until the keep-alive timeout);
  // its client then connects again under the same rules.
  const askOneIdleToClose = (address: AddressConnections) => {
    let chosen: Connection | undefined;
    for (const socket of address.open) {
      const connection = connections.get(socket)!;
      if (connection.busy || connection.closeAfterAnswer) continue;
      if (!chosen || connection.lastAnswer > chosen.lastAnswer) chosen = connection;
    }
    if (chosen) chosen.closeAfterAnswer = true;
  };

  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const address = byAddress.get(key);
    const full = address && (address.busy >= max || address.open.size >= maxOpen);
    if (!full) return admit(socket, key, false);
    if (address.open.size >= maxOpen) askOneIdleToClose(address);
    peekRequestLine(socket, (line) => {
      const probe = PROBE_STARTS.some((start) => line.startsWith(start));
      if (probe && addressOf(key).probes < PROBES_ABOVE_CAP) return admit(socket, key, true);
      // The answer to HEAD has no body (RFC 9110 9.3.2): a client would read it as the next answer.
      const answer = refusal();
      refuse(socket, line.startsWith('HEAD ') ? answer.slice(0, answer.indexOf('\r\n\r\n') + 4) : answer);
    });
  });

  // Before Fastify's listener, so that the mark and the header are there when it routes.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const connection = connections.get(request.socket);
    if (!connection) return;
    connection.requests++;
    connection.inFlight++;
    response.once('close', () => {
      connection.inFlight--;
      connection.lastAnswer = ++answers;
      if (connection.inFlight === 0 && connection.busy) {
        connection.busy = false;
        connection.address.busy--;
      }
    });
    if (connection.closeAfterAnswer) response.setHeader('Connection', 'close');
    // A probe's connection carries its probe and nothing else (a request pipelined behind it would run above the cap).
    if (connection.probe) {
      if (connection.requests > 1 || !isProbe(request)) refused.add(request);
      return;
    }
    if (isProbe(request)) {
      // A health probe holds no slot: a new connection counts from its arrival (its
      // request line might never come), and stops counting once it is known to be one.
      if (connection.busy && connection.inFlight === 1) {
        connection.busy = false;
        connection.address.busy--;
      }
      return;
    }
    if (connection.busy) return;
    if (connection.address.busy >= max) {
      refused.add(request);
      return;
    }
    connection.busy = true;
    connection.address.busy++;
  });
}

/** GET or HEAD of /healthz or /readyz without a body. */
function isProbe(request: IncomingMessage): boolean {
  const path = (request.url ?? '').split('?')[0];
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    (path === '/healthz' || path === '/readyz') &&
    request.headers['transfer-encoding'] === undefined &&
    !Number(request.headers['content-length'])
  );
}

/**
 * Reads the start of a new connection's first request line, up to PEEK_MS, and puts the
 * bytes back for Node's parser; `decide` gets what came (possibly nothing). Enough is read
 * to tell a probe and a HEAD, no more.
 */
function peekRequestLine(socket: Socket, decide: (line: string) => void): void {
  const longest = Math.max(...PROBE_STARTS.map((start) => start.length));
  let seen = Buffer.alloc(0);
  const ignore = () => {};
  const finish = () => {
    clearTimeout(timer);
    socket.off('readable', onReadable);
    socket.off('end', finish);
    socket.off('error', ignore);
    if (socket.destroyed) return;
    // A client that closed its side gets no answer from Node's parser anyway: refused.
    if (socket.readableEnded) return decide('');
    if (seen.length > 0) socket.unshift(seen);
    decide(seen.toString('latin1', 0, longest));
  };
  const onReadable = () => {
    for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) seen = Buffer.concat([seen, chunk]);
    const line = seen.toString('latin1', 0, longest);
    // Still a prefix of some probe's line: wait for the rest of it.
    if (!PROBE_STARTS.some((start) => start.startsWith(line) && line.length < start.length)) finish();
  };
  const timer = setTimeout(finish, PEEK_MS);
  socket.on('error', ignore);
  socket.on('readable', onReadable);
  socket.once('end', finish);
}

/**
 * Answers `response` (complete, with `Connection: close`) and closes the connection once
 * the client has: what it still sends meanwhile is read and dropped. Closing while its
 * bytes arrive (a POST body) would reset the connection, and the reset can destroy the
 * answer before the client reads it.
 */
function refuse(socket: Socket, response: string): void {
  if (socket.destroyed) return;
  socket.on('error', () => {});
  if (socket.readableEnded) {
    socket.end(response, () => socket.destroy());
    return;
  }
  const done = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(done, REFUSED_LINGER_MS);
  socket.once('end', done);
  socket.once('close', () => clearTimeout(timer));
  socket.end(response);
  socket.resume();
}
