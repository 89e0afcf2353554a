import net from 'node:net';

/** What came back on a raw connection: the first response, parsed loosely, and the raw text. */
export interface Exchange {
  /** Status of the first response, 0 when none arrived. */
  status: number;
  /** Header names lowercased; the last value wins. */
  headers: Record<string, string>;
  /** Body of the first response (Content-Length or until close). */
  body: string;
  /** Everything received. */
  raw: string;
  /** Whether the server closed the connection before `timeoutMs`. */
  closedByServer: boolean;
}

/**
 * Writes `bytes` on a fresh TCP connection (nothing normalised, so malformed requests
 * reach the server as they are) and collects what comes back until the server closes or
 * `timeoutMs` passes. The writing side stays open (Node's server drops the answer to a
 * client that half-closes); send `Connection: close` to have the server end it.
 */
export function exchange(baseUrl: string, bytes: Buffer | string, options: { timeoutMs?: number } = {}): Promise<Exchange> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let closedByServer = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(Buffer.concat(chunks).toString('utf8'), closedByServer));
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 5000);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      closedByServer = true;
      finish();
    });
  });
}

function parse(raw: string, closedByServer: boolean): Exchange {
  const headEnd = raw.indexOf('\r\n\r\n');
  const head = headEnd === -1 ? raw : raw.slice(0, headEnd);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = headEnd === -1 ? '' : raw.slice(headEnd + 4);
  const length = Number(headers['content-length']);
  if (Number.isFinite(length) && headers['content-length'] !== undefined) body = Buffer.from(body).subarray(0, length).toString('utf8');
  return { status, headers, body, raw, closedByServer };
}
