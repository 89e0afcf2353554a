import net from 'node:net';

/** A TCP proxy on 127.0.0.1 whose every connection carries at most `bytesPerSecond` towards the target. */
export interface CappedProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * Caps each connection's client-to-server direction, as a long-distance TCP connection is
 * capped by its window and round trip: a client that opens four connections gets four
 * times the rate, one that opens one gets one. The other direction (answers) is not capped.
 * Each chunk is forwarded at once and the client is paused until the chunk's time at the
 * capped rate has passed (a token bucket of 50 ms), so the rate holds to within one chunk.
 */
export async function startCappedProxy(target: URL, bytesPerSecond: number): Promise<CappedProxy> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    let due = performance.now();
    let waits = 0;
    const resume = () => {
      if (--waits === 0) client.resume();
    };
    const wait = () => {
      if (waits++ === 0) client.pause();
    };
    client.on('data', (chunk: Buffer) => {
      const now = performance.now();
      // Up to 50 ms of credit: a timer that fires late (a busy loop) is made up for, not lost.
      due = Math.max(due, now - 50) + (chunk.length / bytesPerSecond) * 1000;
      if (!upstream.write(chunk)) {
        wait();
        upstream.once('drain', resume);
      }
      if (due - now > 1) {
        wait();
        setTimeout(resume, due - now);
      }
    });
    upstream.pipe(client);
    client.on('end', () => upstream.end());
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
