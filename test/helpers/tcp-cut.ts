import net from 'node:net';

/** A TCP relay to a backend that a test can cut and restore: an outage of the database or the object store. */
export interface CuttableRelay {
  /** host:port to connect to instead of the backend. */
  port: number;
  /** Drops every relayed connection and refuses new ones (accepted, then reset). */
  cut(): void;
  /** Relays again. */
  restore(): void;
  close(): Promise<void>;
}

export async function cuttableRelay(targetHost: string, targetPort: number): Promise<CuttableRelay> {
  const sockets = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) return void client.resetAndDestroy();
    const upstream = net.connect(targetPort, targetHost);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    down = true;
    for (const socket of sockets) socket.resetAndDestroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    restore() {
      down = false;
    },
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP relay to a server that paces what clients send, to make a transfer last long enough to be cut. */
export interface PacedRelay {
  /** host:port to connect to instead of the server. */
  port: number;
  /** The server's port on 127.0.0.1; may be set after the relay listens (a server whose public URL is the relay's). */
  targetPort: number;
  /** Bytes per second clients may send; null for no limit (changes take effect at once). */
  rate: number | null;
  /** Bytes clients have sent through the relay (requests, headers included); a test may reset it. */
  received: number;
  close(): Promise<void>;
}

export async function pacedRelay(targetPort: number, rate: number | null): Promise<PacedRelay> {
  const sockets = new Set<net.Socket>();
  const relay: PacedRelay = {
    port: 0,
    targetPort,
    rate,
    received: 0,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(relay.targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.on('data', (chunk: Buffer) => {
      relay.received += chunk.length;
      const flowing = upstream.write(chunk);
      // Paced: the client's next bytes are read once this chunk's share of a second is
      // over, and the server has taken the ones before.
      const pause = relay.rate === null ? 0 : (chunk.length / relay.rate) * 1000;
      if (pause > 0 || !flowing) {
        client.pause();
        const resume = () => client.resume();
        setTimeout(() => (upstream.writableNeedDrain ? upstream.once('drain', resume) : resume()), pause);
      }
    });
    client.on('end', () => upstream.end());
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  relay.port = (server.address() as net.AddressInfo).port;
  return relay;
}
