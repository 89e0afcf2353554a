import { METHODS } from 'node:http';
import fc from 'fast-check';
import {
  anyFramingArb,
  type BodyContent,
  type Field,
  type FramingChoice,
  fieldNameArb,
  fieldParts,
  fieldValueArb,
  filePartArb,
  frame,
  goodFramingArb,
  multipartArb,
  noBody,
  oversizedFormArb,
  type PartSpec,
  partArb,
  randomBodyArb,
  urlEncodedArb,
  w,
  wholeFileDigests,
} from './body-arbitraries.js';
import type { Fixtures } from './fixtures.js';
import { type Framing, type FuzzCase, HOST, printable, renderHead } from './fuzz-case.js';
import type { RawEnding } from './raw-http.js';
import { anyTargetArb, apiRequestArb, idArb, methodArb, webTargetArb } from './target-arbitraries.js';

/**
 * The fuzzer's generators: every endpoint of the API catalogue and every page, with
 * random methods, targets, headers, bodies and framings, built on the fixtures' real
 * ids, keys, links and sessions so that the success paths are reached as well.
 *
 * Families (each its own property in the test): `api` (the catalogue's paths), `web`
 * (pages, download, delete and direct links, sessions and forms), `upload` (multipart
 * bodies of every shape), `protocol` (what only a raw socket can send: garbage methods,
 * request lines, header syntax and size, broken framing, bodies cut short) and `mixed`
 * (all of it at once, unknown paths included).
 */

export type Family = 'api' | 'web' | 'upload' | 'protocol' | 'mixed';
export const FAMILIES: readonly Family[] = ['api', 'web', 'upload', 'protocol', 'mixed'];

// --- headers ----------------------------------------------------------------------------------

type Header = [string, string];

const acceptArb: fc.Arbitrary<string | undefined> = fc.oneof(
  w(4, fc.constant(undefined)),
  w(3, fc.constantFrom('text/html', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')),
  w(2, fc.constantFrom('application/atom+xml', '*/*', 'application/json', 'application/xml', 'text/plain', '', 'TEXT/HTML', 'text/html;q=0')),
  w(1, fc.string({ unit: 'grapheme-ascii', maxLength: 30 })),
);

/** The keys clients send: none, the fixtures' (premium weighted by `valid`), forged, odd. */
function authorizationArb(f: Fixtures, valid: number): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    w(3, fc.constant(undefined)),
    w(valid, fc.constant(f.premium.key)),
    w(1, fc.constant(f.freeKey)),
    w(1, fc.constantFrom(`Bearer ${f.premium.key}`, `bearer  ${f.premium.key} `, `${f.premium.key}x`, f.premium.key.slice(1))),
    w(1, fc.stringMatching(/^[A-Za-z0-9]{32}$/)),
    w(1, fc.constantFrom('', 'Bearer', 'Bearer ', 'Basic Zm9vOmJhcg==', 'null', 'x'.repeat(5000), 'Grüße')),
    w(1, fc.string({ unit: 'grapheme-ascii', maxLength: 64 })),
  );
}

function cookieArb(f: Fixtures): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    w(5, fc.constant(undefined)),
    w(3, fc.constant(f.session.cookie)),
    w(1, fc.constant(f.presession.cookie)),
    w(1, fc.constant(`${f.session.cookie}; ${f.presession.cookie}; other=1`)),
    w(
      1,
      fc.constantFrom(
        'fh_session=',
        'fh_session=abc',
        'fh_session=%zz',
        'a=b; ; =c;;',
        `fh_session=${'x'.repeat(5000)}`,
        'fh_session="quoted"',
        'fh_presession=x',
      ),
    ),
    w(
      1,
      fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((value) => `fh_session=${value}`),
    ),
  );
}

const extraHeaderArb: fc.Arbitrary<Header> = fc.oneof(
  w(
    4,
    fc.constantFrom<Header>(
      ['Expect', '100-continue'],
      ['Connection', 'close'],
      ['Connection', 'keep-alive'],
      ['Connection', 'Upgrade'],
      ['Upgrade', 'websocket'],
      ['Upgrade', 'h2c'],
      ['Range', 'bytes=0-10'],
      ['Range', 'bytes=5-'],
      ['Range', 'bytes=-3'],
      ['Range', 'bytes=10-5'],
      ['Range', 'bytes=0-0,2-3'],
      ['Range', 'bytes=99999999-'],
      ['Range', 'garbage'],
      ['If-None-Match', '"x"'],
      ['If-None-Match', '*'],
      ['If-Range', '"x"'],
      ['If-Modified-Since', 'yesterday'],
      ['X-Forwarded-For', '1.2.3.4'],
      ['X-Forwarded-For', 'garbage, ::1'],
      ['X-Forwarded-Proto', 'https'],
      ['X-Forwarded-Host', 'evil.example'],
      ['Origin', 'http://evil.example'],
      ['Referer', 'javascript:alert(1)'],
      ['Accept-Encoding', 'gzip, br'],
      ['Accept-Language', '*'],
      ['Content-Encoding', 'gzip'],
      ['User-Agent', 'curl/8.0'],
      ['X-HTTP-Method-Override', 'DELETE'],
      ['Expect', 'something-else'],
    ),
  ),
  w(1, fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), fc.string({ unit: 'grapheme-ascii', maxLength: 40 }))),
);

/** Header lines a raw socket can send and no client library would. */
const badHeaderArb: fc.Arbitrary<Header> = fc.constantFrom<Header>(
  ['Bad Name', 'x'],
  ['X-Nul', 'a\u0000b'],
  ['X-Ctl', 'a\u0001b'],
  ['X-Del', 'a\u007fb'],
  ['X-CR', 'a\rb'],
  ['X-Fold', 'a\r\n folded'],
  ['', 'no name'],
  ['X-Ütf', 'x'],
  ['X-Latin', 'Grüße'],
  ['Host', 'second.example'],
  ['Content-Type', 'a\u0000b'],
  ['X-Colon:', 'x'],
);

/** Oversized head: one huge header, or very many (past Node's 16 KiB limit: 431). */
const hugeHeadersArb: fc.Arbitrary<Header[]> = fc.oneof(
  fc.integer({ min: 8_000, max: 80_000 }).map((n): Header[] => [['X-Pad', 'a'.repeat(n)]]),
  fc.integer({ min: 100, max: 3_000 }).map((n): Header[] => Array.from({ length: n }, (_, i): Header => [`X-H${i}`, 'v'.repeat(20)])),
  fc.integer({ min: 8_000, max: 40_000 }).map((n): Header[] => [['Cookie', `fh_session=${'c'.repeat(n)}`]]),
);

interface HeaderChoices {
  host: 'normal' | 'missing' | 'twice' | 'odd';
  accept: string | undefined;
  authorization: string | undefined;
  cookie: string | undefined;
  extra: Header[];
  bad: Header[];
  huge: Header[];
  contentTypeOverride: string | null | undefined;
}

function headerChoicesArb(
  f: Fixtures,
  odds: { bad: number; huge: number; oddHost: number; typeOverride: number; validKey: number },
): fc.Arbitrary<HeaderChoices> {
  return fc.record({
    host: fc.oneof(w(20, fc.constant('normal' as const)), w(odds.oddHost, fc.constantFrom('missing' as const, 'twice' as const, 'odd' as const))),
    accept: acceptArb,
    authorization: authorizationArb(f, odds.validKey),
    cookie: cookieArb(f),
    extra: fc.oneof(w(3, fc.constant<Header[]>([])), w(2, fc.array(extraHeaderArb, { minLength: 1, maxLength: 3 }))),
    bad: fc.oneof(w(100 - odds.bad, fc.constant<Header[]>([])), w(odds.bad, fc.array(badHeaderArb, { minLength: 1, maxLength: 2 }))),
    huge: fc.oneof(w(100 - odds.huge, fc.constant<Header[]>([])), w(odds.huge, hugeHeadersArb)),
    // undefined: the body's own type; null: none at all; a string: that one.
    contentTypeOverride: fc.oneof(
      w(100 - odds.typeOverride, fc.constant(undefined)),
      w(
        odds.typeOverride,
        fc.constantFrom(
          null,
          'multipart/form-data',
          'multipart/form-data; boundary=',
          'multipart/form-data; boundary=other',
          'application/x-www-form-urlencoded',
          'text/plain',
          'application/json',
          'application/octet-stream',
          '',
          ';;;',
          'x'.repeat(3000),
          'multipart/mixed; boundary=XB',
        ),
      ),
    ),
  });
}

// --- bodies for each family -------------------------------------------------------------------

function usefulValueArb(f: Fixtures): fc.Arbitrary<string> {
  return fc.oneof(w(3, fc.constantFrom(f.premium.login, f.premium.password, 'fz-web', f.session.csrf, f.presession.csrf)), w(3, idArb(f)));
}

/** Forms the routes understand, then perturbed: fields dropped, added, values replaced. */
function plausibleFieldsArb(f: Fixtures): fc.Arbitrary<Field[]> {
  const [file = '', file2 = ''] = f.fileIds;
  const [folder = ''] = f.folderIds;
  const base: Field[][] = [
    [
      ['login', f.premium.login],
      ['password', f.premium.password],
    ],
    [
      ['login', f.premium.login],
      ['pass', f.premium.password],
      ['create', '1'],
    ],
    [
      ['login', f.premium.login],
      ['password', 'wrong password'],
    ],
    [
      ['csrf', f.presession.csrf],
      ['login', 'fz-web'],
      ['password', f.premium.password],
    ],
    [
      ['csrf', f.presession.csrf],
      ['login', 'fz-new'],
      ['name', 'New'],
      ['email', 'new@example.org'],
      ['password', 'long enough 1'],
      ['password_again', 'long enough 1'],
    ],
    [
      ['csrf', f.session.csrf],
      ['file', file],
      ['folder', folder],
    ],
    [
      ['csrf', f.session.csrf],
      ['name', 'Web folder'],
      ['parent', folder],
    ],
    [
      ['csrf', f.session.csrf],
      ['file', file2],
      ['confirm', 'yes'],
    ],
    [
      ['csrf', f.session.csrf],
      ['confirm', 'yes'],
    ],
    [
      ['_method', 'PUT'],
      ['files[0]', file],
      ['files[1]', file2],
    ],
    [['_method', 'DELETE']],
    [
      ['name', 'Fuzz folder'],
      ['parent', folder],
    ],
    [['name', 'Top']],
  ];
  const field = fc.tuple(fieldNameArb, fieldValueArb(usefulValueArb(f)));
  return fc.oneof(
    w(
      3,
      fc
        .tuple(fc.constantFrom(...base), fc.array(fc.nat(), { maxLength: 2 }), fc.array(field, { maxLength: 2 }))
        .map(([fields, drop, add]) => [...fields.filter((_, i) => !drop.includes(i)), ...add]),
    ),
    w(1, fc.array(field, { maxLength: 6 })),
  );
}

function formBodyArb(f: Fixtures): fc.Arbitrary<BodyContent> {
  const fields = plausibleFieldsArb(f);
  const field = fc.tuple(fieldNameArb, fieldValueArb(usefulValueArb(f)));
  // Some clients send every form as multipart: the same fields, sometimes a stray part.
  const multipartForm = fc.tuple(fields, fc.array(partArb(field), { maxLength: 1 })).map(([form, extra]): PartSpec[] => [...fieldParts(form), ...extra]);
  return fc.oneof(w(5, urlEncodedArb(fields)), w(2, multipartArb(multipartForm)), w(2, fc.constant(noBody)), w(1, randomBodyArb));
}

function uploadBodyArb(f: Fixtures): fc.Arbitrary<BodyContent> {
  const field = fc.tuple(fieldNameArb, fieldValueArb(usefulValueArb(f)));
  // A web upload's CSRF token (and folder) must come before its files.
  const leading = fc.oneof(
    w(2, fc.constant<Field[]>([])),
    w(2, fc.constant<Field[]>([['csrf', f.session.csrf]])),
    w(
      1,
      fc.constantFrom(...f.folderIds).map((folder): Field[] => [
        ['csrf', f.session.csrf],
        ['folder', folder],
      ]),
    ),
  );
  // As clients send it: the leading fields, one file, perhaps a field after it.
  const plausible = fc
    .tuple(leading, filePartArb, fc.option(field, { nil: undefined, freq: 3 }))
    .map(([lead, file, after]): PartSpec[] => [...fieldParts(lead), file, ...(after ? fieldParts([after]) : [])]);
  // Anything: several files, no file, odd parts.
  const chaotic = fc.tuple(leading, fc.array(partArb(field), { maxLength: 5 })).map(([lead, parts]): PartSpec[] => [...fieldParts(lead), ...parts]);
  return fc.oneof(
    w(5, multipartArb(plausible)),
    w(4, multipartArb(chaotic)),
    w(1, urlEncodedArb(plausibleFieldsArb(f))),
    w(1, randomBodyArb),
    w(1, fc.constant(noBody)),
  );
}

function anyBodyArb(f: Fixtures): fc.Arbitrary<BodyContent> {
  return fc.oneof(w(4, formBodyArb(f)), w(4, uploadBodyArb(f)), w(1, randomBodyArb), w(1, oversizedFormArb));
}

// --- assembling a case ------------------------------------------------------------------------

const UPLOAD_TARGETS = ['/files', '/files', '/files', '/file', '/my/files/upload', '/my/files/upload', '/files?_method=POST', '/my/files/upload?folder=x'];

interface CaseChoices {
  method: string;
  target: string;
  version: string;
  headers: HeaderChoices;
  body: BodyContent;
  framing: FramingChoice;
  pauses: [number, number][];
  ending: { complete: RawEnding; other: RawEnding };
  abortAfterMs: number;
}

const versionArb = (oddWeight: number) =>
  fc.oneof(
    w(20, fc.constant('HTTP/1.1')),
    w(oddWeight, fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'http/1.1', 'HTTP/11', '', 'HTTP/1.1 extra', 'HTTP/')),
  );

/** Mostly in one write; sometimes split with short pauses (a head or a boundary cut across packets). */
const pausesArb = fc.oneof(
  w(4, fc.constant<[number, number][]>([])),
  w(1, fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 15 })), { minLength: 1, maxLength: 2 })),
);

const endingArb = fc.record({
  complete: fc.oneof(w(8, fc.constant<RawEnding>('wait')), w(1, fc.constant<RawEnding>('half-close')), w(1, fc.constant<RawEnding>('abort'))),
  other: fc.constantFrom<RawEnding>('half-close', 'abort', 'wait'),
});

/** Whether a head that Node's parser accepts could be read from these bytes (see Framing). */
function headIsMalformed(c: Pick<FuzzCase, 'method' | 'target' | 'version' | 'headers'>): boolean {
  if (!METHODS.includes(c.method)) return true;
  if (/[\u0000-\u0020\u007f]/.test(c.target) || c.target === '') return true;
  if (c.version !== 'HTTP/1.1' && c.version !== 'HTTP/1.0') return true;
  const host = c.headers.filter(([name]) => name.toLowerCase() === 'host');
  if (c.version === 'HTTP/1.1' && host.length !== 1) return true;
  for (const [name, value] of c.headers) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return true;
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) return true;
  }
  // Node's limit on the whole head (request line and headers) is 16 KiB.
  return renderHead(c as FuzzCase, '127.0.0.1:65535').length > 16 * 1024 - 64;
}

function assemble(family: Family, c: CaseChoices, sessionCookie: string): FuzzCase {
  const h = c.headers;
  const headers: Header[] = [];
  if (h.host === 'normal' || h.host === 'twice') headers.push(['Host', HOST]);
  if (h.host === 'twice') headers.push(['Host', 'other.example']);
  if (h.host === 'odd') headers.push(['Host', 'évil.example:99999']);
  if (h.accept !== undefined) headers.push(['Accept', h.accept]);
  if (h.authorization !== undefined) headers.push(['Authorization', h.authorization]);
  // A real sign-out would end the fixtures' session for every case after it: forged ones only.
  const cookie = c.target.startsWith('/signout') && h.cookie?.includes(sessionCookie) ? 'fh_session=forged' : h.cookie;
  if (cookie !== undefined) headers.push(['Cookie', cookie]);
  const contentType = h.contentTypeOverride === undefined ? c.body.contentType : (h.contentTypeOverride ?? undefined);
  if (contentType !== undefined) headers.push(['Content-Type', contentType]);
  headers.push(...h.extra, ...h.bad, ...h.huge);
  // No body and nothing odd about the framing: like a client, send no framing headers.
  const choice: FramingChoice =
    c.body.bytes.length === 0 && c.framing.kind === 'length' && c.method !== 'POST' && c.method !== 'PUT' ? { kind: 'none' } : c.framing;
  const framed = frame(c.body.bytes, choice);
  headers.push(...framed.headers);
  const base = { method: c.method, target: c.target, version: c.version, headers };
  const framing: Framing = headIsMalformed(base) ? 'malformed' : framed.framing;
  const whole = renderHead(base as FuzzCase, HOST).length + framed.bytes.length;
  return printable({
    family,
    ...base,
    body: framed.bytes,
    wholeFileDigests: wholeFileDigests(c.body, framed.delivered),
    framing,
    pauses: c.pauses.map(([fraction, ms]) => [Math.floor(fraction * whole), ms]),
    // A client that waits on a request the server may rightly wait on would only measure patience.
    ending:
      framing === 'complete' ? c.ending.complete : c.ending.other === 'wait' && (framed.mayWait || framing === 'incomplete') ? 'half-close' : c.ending.other,
    abortAfterMs: c.abortAfterMs,
  });
}

/** The generator of one family's cases. */
export function caseArb(family: Family, f: Fixtures): fc.Arbitrary<FuzzCase> {
  const common = { pauses: pausesArb, ending: endingArb, abortAfterMs: fc.integer({ min: 0, max: 20 }) };
  let choices: fc.Arbitrary<CaseChoices>;
  switch (family) {
    case 'api':
      choices = fc
        .record({
          request: apiRequestArb(f, methodArb({ standard: 10, exotic: 3, garbage: 0 })),
          version: versionArb(0),
          headers: headerChoicesArb(f, { bad: 0, huge: 0, oddHost: 0, typeOverride: 5, validKey: 6 }),
          body: formBodyArb(f),
          framing: goodFramingArb,
          ...common,
        })
        .map(({ request: [method, target], ...rest }) => ({ method, target, ...rest }));
      break;
    case 'web':
      choices = fc.record({
        // Pages take GET and forms POST: mostly those, so the handlers run.
        method: fc.oneof(
          w(6, fc.constant('GET')),
          w(5, fc.constant('POST')),
          w(1, fc.constant('HEAD')),
          w(2, methodArb({ standard: 10, exotic: 2, garbage: 0 })),
        ),
        target: webTargetArb(f),
        version: versionArb(0),
        headers: headerChoicesArb(f, { bad: 0, huge: 0, oddHost: 0, typeOverride: 5, validKey: 3 }),
        body: formBodyArb(f),
        framing: goodFramingArb,
        ...common,
      });
      break;
    case 'upload':
      choices = fc.record({
        method: fc.oneof(w(8, fc.constant('POST')), w(1, fc.constantFrom('PUT', 'PATCH', 'GET', 'DELETE', 'PROPFIND'))),
        target: fc.oneof(w(6, fc.constantFrom(...UPLOAD_TARGETS)), w(1, anyTargetArb(f))),
        version: versionArb(0),
        headers: headerChoicesArb(f, { bad: 0, huge: 0, oddHost: 0, typeOverride: 3, validKey: 12 }),
        body: uploadBodyArb(f),
        framing: fc.oneof(w(3, goodFramingArb), w(1, anyFramingArb)),
        ...common,
      });
      break;
    case 'protocol':
      choices = fc.record({
        method: methodArb({ standard: 4, exotic: 2, garbage: 4 }),
        target: anyTargetArb(f),
        version: versionArb(6),
        headers: headerChoicesArb(f, { bad: 30, huge: 30, oddHost: 4, typeOverride: 10, validKey: 4 }),
        body: anyBodyArb(f),
        framing: anyFramingArb,
        ...common,
      });
      break;
    case 'mixed':
      choices = fc.record({
        method: methodArb({ standard: 10, exotic: 3, garbage: 1 }),
        target: anyTargetArb(f),
        version: versionArb(1),
        headers: headerChoicesArb(f, { bad: 5, huge: 5, oddHost: 1, typeOverride: 10, validKey: 4 }),
        body: anyBodyArb(f),
        framing: fc.oneof(w(3, goodFramingArb), w(1, anyFramingArb)),
        ...common,
      });
      break;
  }
  return choices.map((c) => assemble(family, c, f.session.cookie));
}
