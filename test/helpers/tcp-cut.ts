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
