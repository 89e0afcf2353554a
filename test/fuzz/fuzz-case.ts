import fc from 'fast-check';
import type { RawEnding } from './raw-http.js';

/**
 * One fuzz request, exactly as it goes on the wire, plus what the checks need to know
 * about it. Cases are plain data so fast-check can shrink them and print them; the
 * server's address is filled in at send time (`{host}` in a header value), so a seed
 * replays the same requests against a restarted server.
 */

/** The placeholder replaced by the server's `host:port` when the case is sent (in the target and header values). */
export const HOST = '{host}';

/**
 * How the request is framed, which decides what the server owes us:
 * - `complete`: well-formed and whole; an answer is owed (a close without one is a failure).
 * - `incomplete`: well-formed but shorter than it says (Content-Length too large, no last
 *   chunk); the client then half-closes or resets, and the server may answer or close.
 * - `malformed`: the HTTP framing itself is broken (request line, header syntax or size,
 *   Content-Length, chunk sizes); the server may answer or close, but never hang, crash,
 *   or answer outside the rules.
 */
export type Framing = 'complete' | 'incomplete' | 'malformed';

export interface FuzzCase {
  /** The generator family, for reports. */
  family: string;
  method: string;
  /** The request-target as written (raw: bad escapes, spaces, non-ASCII bytes allowed). */
  target: string;
  /** `HTTP/1.1` mostly. */
  version: string;
  /** Header lines in order; `{host}` in a value becomes the server's address. */
  headers: [string, string][];
  /** The body bytes as written after the head (already chunk-encoded when chunked). */
  body: Buffer;
  /** Digests (hex SHA-256) of the file parts whose content arrived whole, followed by their delimiter. */
  wholeFileDigests: string[];
  framing: Framing;
  /** Byte offsets into the whole request where the writer pauses, with the pause in ms. */
  pauses: [number, number][];
  ending: RawEnding;
  /** For `abort`: how long to listen for an early answer before the reset. */
  abortAfterMs: number;
}

/** The head of the request (request line, header lines, blank line) for a given `host:port`. */
export function renderHead(c: FuzzCase, host: string): Buffer {
  const lines = [
    `${c.method} ${c.target.replaceAll(HOST, host)} ${c.version}`.replace(/ $/, ''),
    ...c.headers.map(([name, value]) => `${name}: ${value.replaceAll(HOST, host)}`),
  ];
  // UTF-8: raw non-ASCII bytes in targets and header values are part of the fuzz.
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8');
}

/** The request as written pieces: bytes, with pauses (ms) between. */
export function renderPieces(c: FuzzCase, host: string): (Buffer | number)[] {
  const whole = Buffer.concat([renderHead(c, host), c.body]);
  const pieces: (Buffer | number)[] = [];
  let at = 0;
  for (const [offset, ms] of [...c.pauses].sort((a, b) => a[0] - b[0])) {
    const cut = Math.min(Math.max(offset, at), whole.length);
    if (cut > at) pieces.push(whole.subarray(at, cut));
    pieces.push(ms);
    at = cut;
  }
  if (at < whole.length) pieces.push(whole.subarray(at));
  return pieces;
}

/** A header's value (last one wins, names compared case-insensitively), or undefined. */
export function headerOf(c: FuzzCase, name: string): string | undefined {
  const lower = name.toLowerCase();
  return c.headers.filter(([n]) => n.toLowerCase() === lower).at(-1)?.[1];
}

/** Shows long runs of one character as `⟪'a' × 20000⟫` and cuts very long text in the middle. */
function compact(text: string, max = 600): string {
  const shown = (char: string) => (/^[\x20-\x7e]$/.test(char) ? JSON.stringify(char) : `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
  const squeezed = text.replace(/(.)\1{63,}/gs, (run, char: string) => `⟪${shown(char)} × ${run.length}⟫`);
  return squeezed.length <= max ? squeezed : `${squeezed.slice(0, max / 2)}⟪… ${squeezed.length - max} more …⟫${squeezed.slice(-max / 2)}`;
}

/** A readable one-case report: the request as text (JSON-escaped), how it was sent. */
export function describeCase(c: FuzzCase, host = 'HOST:PORT'): string {
  const head = renderHead(c, host).toString('utf8');
  const body = c.body.toString('latin1');
  const pauses = c.pauses.length > 0 ? `, pauses ${c.pauses.map(([at, ms]) => `${ms} ms at byte ${at}`).join(', ')}` : '';
  return [
    `[${c.family}] ${c.framing} request, then ${c.ending}${c.ending === 'abort' ? ` after ${c.abortAfterMs} ms` : ''}${pauses}`,
    `  head: ${compact(JSON.stringify(head))}`,
    `  body (${c.body.length} bytes): ${compact(JSON.stringify(body))}`,
  ].join('\n');
}

/**
 * A shell line that sends the same bytes (for a bug report): printf of the exact request
 * to nc. Runs of one byte are shown as `⟪byte × n⟫` and long requests are cut in the
 * middle, so it is for reading, not always for pasting.
 */
export function reproducer(c: FuzzCase, host = '127.0.0.1:8080'): string {
  const bytes = Buffer.concat([renderHead(c, host), c.body]);
  const escapeByte = (byte: number) =>
    byte === 0x27
      ? "'\\''"
      : byte === 0x25
        ? '%%'
        : byte === 0x5c
          ? '\\\\'
          : byte >= 0x20 && byte < 0x7f
            ? String.fromCharCode(byte)
            : `\\${byte.toString(8).padStart(3, '0')}`;
  let escaped = '';
  for (let i = 0; i < bytes.length; ) {
    let run = 1;
    while (i + run < bytes.length && bytes[i + run] === bytes[i]) run++;
    escaped += run >= 64 ? `⟪${escapeByte(bytes[i]!)} × ${run}⟫` : escapeByte(bytes[i]!).repeat(run);
    i += run;
  }
  const [hostname, port] = host.split(':');
  const cut = escaped.length <= 2000 ? escaped : `${escaped.slice(0, 1000)}⟪… ${escaped.length - 2000} more …⟫${escaped.slice(-1000)}`;
  return `printf '${cut}' | nc -q 5 ${hostname} ${port}`;
}

/** Attaches fast-check's printer, so counterexamples print as requests, not as Buffer arrays. */
export function printable(c: FuzzCase): FuzzCase {
  return Object.defineProperty(c, fc.toStringMethod, { value: () => describeCase(c), enumerable: false });
}
