import { createHash } from 'node:crypto';
import type { Fixtures } from './fixtures.js';
import { type FuzzCase, HOST, printable } from './fuzz-case.js';
import type { RawEnding } from './raw-http.js';

/**
 * The seed corpus: requests the fuzzer (or issue 7's attacker) found to break the
 * property, kept as fixed cases so each runs in every `npm test` whatever the seed. Each
 * is checked by the same property as the random ones.
 */
export interface CorpusEntry {
  /** What went wrong when it was found. */
  name: string;
  build(f: Fixtures): FuzzCase;
}

interface Spec {
  method: string;
  target: string;
  headers?: [string, string][];
  body?: Buffer | string;
  /** Content-Length of the body (default), none, or a given value. */
  length?: 'auto' | 'none' | number;
  ending?: RawEnding;
  framing?: FuzzCase['framing'];
  /** Contents of file parts that arrive whole (they may be stored). */
  files?: (Buffer | string)[];
  host?: boolean;
}

function request(spec: Spec): FuzzCase {
  const body = typeof spec.body === 'string' ? Buffer.from(spec.body, 'latin1') : (spec.body ?? Buffer.alloc(0));
  const length = spec.length ?? 'auto';
  const headers: [string, string][] = [
    ...(spec.host === false ? [] : [['Host', HOST] as [string, string]]),
    ...(spec.headers ?? []),
    ...(length === 'none' ? [] : [['Content-Length', String(length === 'auto' ? body.length : length)] as [string, string]]),
  ];
  return printable({
    family: 'corpus',
    method: spec.method,
    target: spec.target,
    version: 'HTTP/1.1',
    headers,
    body,
    wholeFileDigests: (spec.files ?? []).map((file) => createHash('sha256').update(file).digest('hex')),
    framing: spec.framing ?? 'complete',
    pauses: [],
    ending: spec.ending ?? 'wait',
    abortAfterMs: 0,
  });
}

const multipart = (boundary: string, parts: string[], closing = true) =>
  `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}${closing ? `--${boundary}--\r\n` : ''}`;
const filePart = (content: string, name = 'upload', filename = 'a.txt') =>
  `Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${content}`;

export const CORPUS: readonly CorpusEntry[] = [
  {
    name: 'issue 7.1: a file part cut before its closing boundary, to /healthz (crashed the process)',
    build: () =>
      request({
        method: 'POST',
        target: '/healthz',
        headers: [['Content-Type', 'multipart/form-data; boundary=XB']],
        body: '--XB\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nabcdef',
      }),
  },
  {
    name: 'issue 7.2: PROPFIND on an API path with Accept: text/html (answered an HTML 404)',
    build: () => request({ method: 'PROPFIND', target: '/account', headers: [['Accept', 'text/html']], length: 'none' }),
  },
  {
    name: 'issue 7.2: a 20 KiB header on an API path (answered 431 in Fastify JSON)',
    build: () => request({ method: 'GET', target: '/files', headers: [['X-Pad', 'a'.repeat(20_000)]], length: 'none', framing: 'malformed' }),
  },
  {
    name: 'issue 7.2: a lower-case method on an API path (answered 400 in Fastify JSON)',
    build: () => request({ method: 'get', target: '/account', length: 'none', framing: 'malformed' }),
  },
  {
    name: 'issue 7.2: a chunk size that is no number (answered 400 in Fastify JSON)',
    build: () =>
      request({
        method: 'POST',
        target: '/apikeys',
        headers: [['Transfer-Encoding', 'chunked']],
        body: 'zz\r\nabc\r\n0\r\n\r\n',
        length: 'none',
        framing: 'malformed',
      }),
  },
  {
    name: 'no Host header on an API path (answered Node’s bodiless 400)',
    build: () => request({ method: 'GET', target: '/account', length: 'none', host: false, framing: 'malformed' }),
  },
  {
    name: 'CONNECT on an API path (the connection was dropped without an answer)',
    build: () => request({ method: 'CONNECT', target: '/account', length: 'none' }),
  },
  {
    name: 'Expect other than 100-continue on an API path (answered Node’s bodiless 417)',
    build: () => request({ method: 'POST', target: '/apikeys', headers: [['Expect', 'something-else']], length: 0 }),
  },
  {
    name: 'a form part with no form-data disposition past 16 KiB (the request was never answered)',
    build: () =>
      request({
        method: 'POST',
        target: '/apikeys',
        headers: [['Content-Type', 'multipart/form-data; boundary=a']],
        body: multipart('a', ['Content-Disposition: form-data; name="login"\r\n\r\nx', `X-Other: 1\r\n\r\n${'E'.repeat(20_000)}`]),
      }),
  },
  {
    name: 'an upload whose file is followed by a 20 KiB part with no form-data disposition (never answered; its temp file stayed)',
    build: (f) =>
      request({
        method: 'POST',
        target: '/files',
        headers: [
          ['Authorization', f.premium.key],
          ['Content-Type', 'multipart/form-data; boundary=b'],
        ],
        body: multipart('b', [filePart('small'), `Content-Disposition: attachment; filename="x"\r\n\r\n${'x'.repeat(20_000)}`]),
        files: ['small'],
      }),
  },
  {
    name: 'a whole 150 KB upload, then the client resets (its temp file stayed in tmp/)',
    build: (f) => {
      const content = 'q'.repeat(150_000);
      return request({
        method: 'POST',
        target: '/files',
        headers: [
          ['Authorization', f.premium.key],
          ['Content-Type', 'multipart/form-data; boundary=b'],
        ],
        body: multipart('b', [filePart(content)]),
        ending: 'abort',
        files: [content],
      });
    },
  },
  {
    name: 'a whole 150 KB upload, then the client half-closes (its temp file stayed in tmp/)',
    build: (f) => {
      const content = 'h'.repeat(150_000);
      return request({
        method: 'POST',
        target: '/files',
        headers: [
          ['Authorization', f.premium.key],
          ['Content-Type', 'multipart/form-data; boundary=b'],
        ],
        body: multipart('b', [filePart(content)]),
        ending: 'half-close',
        files: [content],
      });
    },
  },
  {
    name: 'an upload followed by bytes that are no request (answered 400 for the upload, which was stored)',
    build: (f) => {
      const content = 'hello pipelined garbage';
      const body = multipart('b', [filePart(content)]);
      return request({
        method: 'POST',
        target: '/files',
        headers: [
          ['Authorization', f.premium.key],
          ['Content-Type', 'multipart/form-data; boundary=b'],
        ],
        body: `${body}garbage\r\n\r\n`,
        length: body.length,
        files: [content],
      });
    },
  },
  {
    name: 'an unknown two-segment path without Host (answered an HTML page to an API client)',
    build: () => request({ method: 'GET', target: '/x/files', length: 'none', host: false, framing: 'malformed' }),
  },
  {
    name: 'POST /<not an id>/copy with a body that does not parse (answered an HTML page to an API client)',
    build: () => request({ method: 'POST', target: '/x/copy', headers: [['Content-Type', 'application/json']], body: '{x}' }),
  },
  {
    name: 'GET /account/?_method=PUT without Host, from a signed-in browser, a chunked multipart body, then half-close (answered the web 400 page)',
    build: (f) =>
      request({
        method: 'GET',
        target: '/account/?_method=PUT',
        headers: [
          ['Authorization', f.premium.key],
          ['Cookie', `${f.session.cookie}; ${f.presession.cookie}; other=1`],
          ['Content-Type', 'Multipart/Form-Data; BOUNDARY=0; charset=utf-8'],
          ['Expect', '100-continue'],
          ['Transfer-Encoding', 'chunked'],
        ],
        length: 'none',
        ending: 'half-close',
        host: false,
      }),
  },
  {
    name: 'GET * (the asterisk form is for OPTIONS only; answered the home page)',
    build: () => request({ method: 'GET', target: '*', length: 'none' }),
  },
];
