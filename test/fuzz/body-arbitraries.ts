import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Framing } from './fuzz-case.js';
import { FUZZ_MAX_FILE_SIZE } from './targets.js';

/**
 * Request bodies and their framing: url-encoded and multipart forms (well-formed, cut at
 * random, cut inside a boundary, several files, wrong boundaries), random bytes, and the
 * ways to frame them (Content-Length right, short, long, garbage or twice; chunked right,
 * with bad sizes, unterminated, or next to a Content-Length).
 */

export const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>): fc.WeightedArbitrary<T> => ({ weight, arbitrary });

/** A body before framing, with where its file parts lie (to know which arrived whole). */
export interface BodyContent {
  bytes: Buffer;
  /** The Content-Type the body wants (undefined: none). */
  contentType: string | undefined;
  /** Each file part: its content's digest and the offset where its closing delimiter ends. */
  fileParts: { digest: string; wholeAt: number }[];
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// --- form fields ------------------------------------------------------------------------------

/** Field names the routes read (API.md 2, the web forms), plus random ones. */
export const fieldNameArb: fc.Arbitrary<string> = fc.oneof(
  w(
    6,
    fc.constantFrom(
      'login',
      'password',
      'pass',
      'password_again',
      'create',
      'name',
      'email',
      'parent',
      'files[0]',
      'files[1]',
      'files[]',
      '_method',
      'csrf',
      'file',
      'folder',
      'from',
      'confirm',
      'upload',
      'note',
    ),
  ),
  w(1, fc.string({ maxLength: 12 })),
);

/** A value for a field: useful ones (the fixtures' ids and tokens), odd ones, long ones. */
export function fieldValueArb(useful: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    w(4, useful),
    w(
      2,
      fc.constantFrom('PUT', 'DELETE', 'POST', 'GET', 'put', 'FOO', '1', 'yes', 'root', '', ' ', 'wrong password', 'Reports', '../x', '%zz', '\u202e\u0000'),
    ),
    w(2, fc.string({ maxLength: 30 })),
    w(
      1,
      fc.integer({ min: 1_000, max: 70_000 }).map((n) => 'v'.repeat(n)),
    ),
  );
}

export type Field = [string, string];

/** Fields as `application/x-www-form-urlencoded`: encoded properly, or raw (bad escapes pass through). */
export function urlEncodedArb(fields: fc.Arbitrary<Field[]>): fc.Arbitrary<BodyContent> {
  return fc
    .tuple(
      fields,
      fc.boolean(),
      fc.constantFrom(
        'application/x-www-form-urlencoded',
        'application/x-www-form-urlencoded; charset=utf-8',
        'application/x-www-form-urlencoded; charset=latin1',
      ),
    )
    .map(([pairs, raw, contentType]) => ({
      bytes: Buffer.from(pairs.map(([k, v]) => (raw ? `${k}=${v}` : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)).join('&'), 'utf8'),
      contentType,
      fileParts: [],
    }));
}

// --- multipart --------------------------------------------------------------------------------

export const boundaryArb: fc.Arbitrary<string> = fc.oneof(
  w(16, fc.stringMatching(/^-{0,8}[A-Za-z0-9]{1,40}$/)),
  w(1, fc.constantFrom('x'.repeat(70), 'b'.repeat(200), 'with space', "a'()+_,-./:=?", 'é')),
);

/** File content: mostly small random bytes; sometimes empty; sometimes around the size limit. */
const contentArb: fc.Arbitrary<Buffer> = fc.oneof(
  w(
    6,
    fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes)),
  ),
  w(
    2,
    fc.string({ maxLength: 200 }).map((text) => Buffer.from(text, 'utf8')),
  ),
  w(1, fc.constant(Buffer.alloc(0))),
  w(
    1,
    fc.integer({ min: 16 * 1024, max: FUZZ_MAX_FILE_SIZE + 64 * 1024 }).map((n) => Buffer.alloc(n, n % 251)),
  ),
);

const filenameArb: fc.Arbitrary<string | null> = fc.oneof(
  w(
    3,
    fc.constantFrom(
      'a.txt',
      'report 2026.pdf',
      '../../etc/passwd',
      '..\\..\\win.ini',
      '',
      '.',
      '..',
      'x'.repeat(300),
      'emoji 📄.txt',
      '<&">.txt',
      'a\u0000b.txt',
      'setup.exe',
      'Grüße.txt',
      'semi;colon.txt',
      '%2e%2e%2fx',
      'picture.png',
    ),
  ),
  w(2, fc.string({ maxLength: 40 })),
  w(1, fc.constant(null)),
);

/** One part of a multipart body. */
export type PartSpec =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string | null; type: string | null; content: Buffer }
  | { kind: 'raw'; headerLines: string[]; content: Buffer };

export const fieldParts = (fields: Field[]): PartSpec[] => fields.map(([name, value]) => ({ kind: 'field', name, value }));

/** A file part, named as clients name it (`upload`, `file`) or not. */
export const filePartArb: fc.Arbitrary<PartSpec> = fc
  .record({
    name: fc.oneof(w(6, fc.constantFrom('upload', 'file')), w(1, fc.string({ maxLength: 10 }))),
    filename: filenameArb,
    type: fc.option(fc.constantFrom('application/octet-stream', 'text/plain', 'image/png', 'text/html', ''), { nil: null }),
    content: contentArb,
  })
  .map((spec): PartSpec => ({ kind: 'file', ...spec }));

/** Any part: a text field, a file, or header lines no client writes. */
export function partArb(fields: fc.Arbitrary<Field>): fc.Arbitrary<PartSpec> {
  return fc.oneof(
    w(
      3,
      fields.map(([name, value]): PartSpec => ({ kind: 'field', name, value })),
    ),
    w(4, filePartArb),
    w(
      1,
      fc
        .record({
          headerLines: fc.array(
            fc.oneof(
              fc.constantFrom(
                'Content-Disposition: form-data',
                'Content-Disposition: attachment; filename="x"',
                'Content-Disposition: form-data; name=',
                'Content-Disposition: form-data; name="upload"; filename*=UTF-8\'\'%E2%82%AC%20rates.txt',
                'Content-Disposition: form-data; name="upload"; filename="a"; filename="b"',
                'Content-Type: multipart/mixed; boundary=inner',
                'no colon here',
                ': empty name',
                `X-Long: ${'h'.repeat(2000)}`,
              ),
              fc.string({ maxLength: 60 }),
            ),
            { maxLength: 3 },
          ),
          content: contentArb,
        })
        .map((spec): PartSpec => ({ kind: 'raw', ...spec })),
    ),
  );
}

/** Where a multipart body is cut, if at all. */
type Cut = { kind: 'none' } | { kind: 'no-closing' } | { kind: 'at'; fraction: number } | { kind: 'in-delimiter'; which: number; into: number };

const cutArb: fc.Arbitrary<Cut> = fc.oneof(
  w(12, fc.constant<Cut>({ kind: 'none' })),
  w(1, fc.constant<Cut>({ kind: 'no-closing' })),
  w(
    2,
    fc.double({ min: 0, max: 1, noNaN: true }).map((fraction): Cut => ({ kind: 'at', fraction })),
  ),
  w(
    2,
    fc.record({ which: fc.nat(), into: fc.nat() }).map(({ which, into }): Cut => ({ kind: 'in-delimiter', which, into })),
  ),
);

/** The Content-Type of a multipart body: right, or wrong in one of the ways clients get it wrong. */
function multipartTypeArb(): fc.Arbitrary<(boundary: string) => string> {
  return fc.oneof(
    w(
      16,
      fc.constant((b: string) => `multipart/form-data; boundary=${b}`),
    ),
    w(
      1,
      fc.constant((b: string) => `multipart/form-data; boundary="${b}"`),
    ),
    w(
      1,
      fc.constant((b: string) => `Multipart/Form-Data; BOUNDARY=${b}; charset=utf-8`),
    ),
    w(
      1,
      fc.constantFrom(
        () => 'multipart/form-data',
        () => 'multipart/form-data; boundary=',
        () => 'multipart/form-data; boundary=other',
        () => 'multipart/form-data; boundary="unterminated',
      ),
    ),
    w(
      1,
      fc.constant((b: string) => `multipart/mixed; boundary=${b}`),
    ),
  );
}

/**
 * A multipart/form-data body of the given parts, with an optional preamble and epilogue,
 * the closing delimiter or not, maybe cut anywhere or inside a delimiter, under a right or
 * wrong Content-Type.
 */
export function multipartArb(parts: fc.Arbitrary<PartSpec[]>): fc.Arbitrary<BodyContent> {
  return fc
    .record({
      boundary: boundaryArb,
      parts,
      preamble: fc.option(fc.constantFrom('preamble text\r\n', '\r\n', '--\r\n', 'garbage'), { nil: undefined, freq: 8 }),
      epilogue: fc.option(fc.constantFrom('epilogue', '\r\n--also-not-a-boundary--\r\n'), { nil: undefined, freq: 8 }),
      cut: cutArb,
      type: multipartTypeArb(),
    })
    .map(({ boundary, parts: all, preamble, epilogue, cut, type }) => {
      const chunks: Buffer[] = [];
      let length = 0;
      const push = (bytes: Buffer | string) => {
        const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
        chunks.push(buffer);
        length += buffer.length;
      };
      const delimiters: number[] = [];
      const fileParts: { digest: string; wholeAt: number }[] = [];
      if (preamble !== undefined) push(preamble);
      for (const [index, part] of all.entries()) {
        delimiters.push(length);
        push(`${index === 0 && preamble === undefined ? '' : '\r\n'}--${boundary}\r\n`);
        let content: Buffer;
        if (part.kind === 'field') {
          push(`Content-Disposition: form-data; name="${part.name}"\r\n\r\n`);
          content = Buffer.from(part.value, 'utf8');
        } else if (part.kind === 'file') {
          push(`Content-Disposition: form-data; name="${part.name}"${part.filename === null ? '' : `; filename="${part.filename}"`}\r\n`);
          if (part.type !== null) push(`Content-Type: ${part.type}\r\n`);
          push('\r\n');
          content = part.content;
        } else {
          for (const line of part.headerLines) push(`${line}\r\n`);
          push('\r\n');
          content = part.content;
        }
        push(content);
        // Any part may be the file (a field named upload is, API.md 2; so may a raw part):
        // its content counts as whole once the next delimiter (CRLF, dashes, boundary) arrived.
        fileParts.push({ digest: sha256(content), wholeAt: length + 4 + Buffer.byteLength(boundary) });
      }
      if (cut.kind !== 'no-closing') {
        delimiters.push(length);
        push(`${all.length === 0 && preamble === undefined ? '' : '\r\n'}--${boundary}--\r\n`);
        if (epilogue !== undefined) push(epilogue);
      }
      let bytes = Buffer.concat(chunks, length);
      if (cut.kind === 'at') bytes = bytes.subarray(0, Math.floor(cut.fraction * bytes.length));
      if (cut.kind === 'in-delimiter' && delimiters.length > 0) {
        const start = delimiters[cut.which % delimiters.length]!;
        bytes = bytes.subarray(0, start + 1 + (cut.into % (Buffer.byteLength(boundary) + 5)));
      }
      return { bytes, contentType: type(boundary), fileParts };
    });
}

/** Bytes that are no form at all, under some Content-Type or none. */
export const randomBodyArb: fc.Arbitrary<BodyContent> = fc
  .record({
    bytes: fc.oneof(
      w(
        3,
        fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes)),
      ),
      w(
        1,
        fc.constantFrom('{"login":"x","password":"y"}', '{bad json', '<?xml version="1.0"?><a/>', 'null', '[]').map((text) => Buffer.from(text)),
      ),
    ),
    contentType: fc.option(
      fc.constantFrom(
        'application/json',
        'application/octet-stream',
        'text/plain',
        'application/xml',
        'application/atom+xml',
        'image/png',
        ';;;',
        '',
        'x'.repeat(3000),
      ),
      { nil: undefined },
    ),
  })
  .map(({ bytes, contentType }) => ({ bytes, contentType, fileParts: [] }));

/** A form body past the 1 MiB form limit (413), rarely: it costs a megabyte per case. */
export const oversizedFormArb: fc.Arbitrary<BodyContent> = fc
  .integer({ min: 1024 * 1024 + 1, max: 1024 * 1024 + 64 * 1024 })
  .map((n) => ({ bytes: Buffer.alloc(n, 'a=b&'), contentType: 'application/x-www-form-urlencoded', fileParts: [] }));

export const noBody: BodyContent = { bytes: Buffer.alloc(0), contentType: undefined, fileParts: [] };

// --- framing ----------------------------------------------------------------------------------

/** How the body is framed on the wire. */
export type FramingChoice =
  | { kind: 'length' }
  | { kind: 'none' }
  | { kind: 'length-short'; by: number }
  | { kind: 'length-long'; by: number }
  | { kind: 'length-bad'; value: string }
  | { kind: 'length-twice'; delta: number }
  | { kind: 'chunked'; sizes: number[]; upper: boolean; extension: boolean; trailer: boolean }
  | { kind: 'chunked-bad'; how: 'size-token' | 'no-crlf' | 'size-overflow' | 'size-too-small' }
  | { kind: 'chunked-open' }
  | { kind: 'chunked-and-length' }
  | { kind: 'te-other'; value: string };

/** Framings a well-behaved client uses: exact Content-Length, chunked, or none when there is no body. */
export const goodFramingArb: fc.Arbitrary<FramingChoice> = fc.oneof(
  w(8, fc.constant<FramingChoice>({ kind: 'length' })),
  w(
    2,
    fc
      .record({ sizes: fc.array(fc.integer({ min: 1, max: 4096 }), { maxLength: 6 }), upper: fc.boolean(), extension: fc.boolean(), trailer: fc.boolean() })
      .map((c): FramingChoice => ({ kind: 'chunked', ...c })),
  ),
);

/** Every framing, the broken ones included. */
export const anyFramingArb: fc.Arbitrary<FramingChoice> = fc.oneof(
  w(6, goodFramingArb),
  w(1, fc.constant<FramingChoice>({ kind: 'none' })),
  w(
    1,
    fc.integer({ min: 1, max: 4096 }).map((by): FramingChoice => ({ kind: 'length-short', by })),
  ),
  w(
    2,
    fc.integer({ min: 1, max: 100_000 }).map((by): FramingChoice => ({ kind: 'length-long', by })),
  ),
  w(
    1,
    fc
      .constantFrom('abc', '-1', '1.5', '0x10', '', '1 2', '99999999999999999999999', '+5', '5,6')
      .map((value): FramingChoice => ({ kind: 'length-bad', value })),
  ),
  w(
    1,
    fc.integer({ min: -3, max: 3 }).map((delta): FramingChoice => ({ kind: 'length-twice', delta })),
  ),
  w(
    1,
    fc
      .constantFrom('size-token', 'no-crlf', 'size-overflow', 'size-too-small')
      .map((how): FramingChoice => ({ kind: 'chunked-bad', how: how as 'size-token' })),
  ),
  w(1, fc.constant<FramingChoice>({ kind: 'chunked-open' })),
  w(1, fc.constant<FramingChoice>({ kind: 'chunked-and-length' })),
  w(
    1,
    fc.constantFrom('gzip', 'chunked, gzip', 'identity', 'xchunked', 'chunked, chunked').map((value): FramingChoice => ({ kind: 'te-other', value })),
  ),
);

export interface Framed {
  headers: [string, string][];
  bytes: Buffer;
  framing: Framing;
  /** How many bytes of the unframed body belong to this request. */
  delivered: number;
  /** Whether the server may rightly wait for more bytes (so the client must not wait for it). */
  mayWait?: boolean;
}

function chunk(bytes: Buffer, upper: boolean, extension: boolean): Buffer {
  const size = bytes.length.toString(16);
  return Buffer.concat([Buffer.from(`${upper ? size.toUpperCase() : size}${extension ? ';ext=1' : ''}\r\n`), bytes, Buffer.from('\r\n')]);
}

function chunked(body: Buffer, sizes: number[], upper = false, extension = false): Buffer[] {
  const pieces: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    pieces.push(chunk(body.subarray(at, at + size), upper, extension));
    at += size;
  }
  if (at < body.length) pieces.push(chunk(body.subarray(at), upper, extension));
  return pieces;
}

/** Frames `body` as chosen; says whether the result is complete, incomplete or malformed HTTP. */
export function frame(body: Buffer, choice: FramingChoice): Framed {
  const length = body.length;
  switch (choice.kind) {
    case 'length':
      return { headers: [['Content-Length', String(length)]], bytes: body, framing: 'complete', delivered: length };
    case 'none':
      // The bytes after the head are the next request (garbage) as far as the server knows.
      return { headers: [], bytes: body, framing: 'complete', delivered: 0 };
    case 'length-short': {
      const declared = Math.max(0, length - choice.by);
      return { headers: [['Content-Length', String(declared)]], bytes: body, framing: 'complete', delivered: declared };
    }
    case 'length-long':
      return { headers: [['Content-Length', String(length + choice.by)]], bytes: body, framing: 'incomplete', delivered: length, mayWait: true };
    case 'length-bad':
      return { headers: [['Content-Length', choice.value]], bytes: body, framing: 'malformed', delivered: length, mayWait: true };
    case 'length-twice':
      return {
        headers: [
          ['Content-Length', String(length)],
          ['Content-Length', String(Math.max(0, length + choice.delta))],
        ],
        bytes: body,
        framing: 'malformed',
        delivered: length,
      };
    case 'chunked': {
      const trailer = choice.trailer ? 'X-Trailer: 1\r\n' : '';
      return {
        headers: [['Transfer-Encoding', 'chunked']],
        bytes: Buffer.concat([...chunked(body, choice.sizes, choice.upper, choice.extension), Buffer.from(`0\r\n${trailer}\r\n`)]),
        framing: 'complete',
        delivered: length,
      };
    }
    case 'chunked-bad': {
      const head =
        choice.how === 'size-token'
          ? 'zz\r\n'
          : choice.how === 'size-overflow'
            ? 'fffffffffffffffffff\r\n'
            : choice.how === 'size-too-small'
              ? '1\r\n'
              : `${length.toString(16)}\r\n`;
      const tail = choice.how === 'no-crlf' ? '0\r\n\r\n' : '\r\n0\r\n\r\n';
      // A size token that is no number, or too big, is refused at once; a wrong size may first wait for bytes.
      const mayWait = choice.how === 'no-crlf' || choice.how === 'size-too-small';
      return {
        headers: [['Transfer-Encoding', 'chunked']],
        bytes: Buffer.concat([Buffer.from(head), body, Buffer.from(tail)]),
        framing: 'malformed',
        delivered: length,
        mayWait,
      };
    }
    case 'chunked-open':
      return { headers: [['Transfer-Encoding', 'chunked']], bytes: Buffer.concat(chunked(body, [])), framing: 'incomplete', delivered: length, mayWait: true };
    case 'chunked-and-length':
      return {
        headers: [
          ['Transfer-Encoding', 'chunked'],
          ['Content-Length', String(length)],
        ],
        bytes: Buffer.concat([...chunked(body, []), Buffer.from('0\r\n\r\n')]),
        framing: 'malformed',
        delivered: length,
      };
    case 'te-other':
      return { headers: [['Transfer-Encoding', choice.value]], bytes: body, framing: 'malformed', delivered: length, mayWait: true };
  }
}

/** The digests of the file parts that arrived whole within `delivered` bytes. */
export function wholeFileDigests(content: BodyContent, delivered: number): string[] {
  const limit = Math.min(delivered, content.bytes.length);
  return content.fileParts.filter((part) => part.wholeAt <= limit).map((part) => part.digest);
}
