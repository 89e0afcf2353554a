import { METHODS } from 'node:http';
import fc from 'fast-check';
import { ENDPOINTS } from '../../src/http/api/api-catalogue.js';
import { browserScript } from '../../src/http/web/browser-scripts.js';
import { w } from './body-arbitraries.js';
import type { Fixtures } from './fixtures.js';
import { HOST } from './fuzz-case.js';

/**
 * Methods and request-targets: the API catalogue's paths with real and odd ids, `;` raw
 * or encoded, bad escapes and over-long segments; the pages, download, delete, direct and
 * folder links (some forged); unknown paths; and targets only a raw socket sends.
 */

// --- methods ----------------------------------------------------------------------------------

const STANDARD_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];
const EXOTIC_METHODS = METHODS.filter((method) => !STANDARD_METHODS.includes(method));

const garbageMethodArb: fc.Arbitrary<string> = fc.oneof(
  w(3, fc.constantFrom('get', 'post', 'Get', 'gEt', 'delete', 'propfind', 'FOO', 'G3T', 'GETT', 'HTTP/1.1', 'M-', 'X'.repeat(300), 'GET\u0000', 'ÉT', '')),
  w(2, fc.stringMatching(/^[A-Z_-]{1,12}$/)),
  w(
    1,
    fc.string({ minLength: 1, maxLength: 8 }).filter((text) => !/[\s]/.test(text)),
  ),
);

export function methodArb(weights: { standard: number; exotic: number; garbage: number }): fc.Arbitrary<string> {
  return fc.oneof(
    w(weights.standard, fc.constantFrom(...STANDARD_METHODS)),
    w(weights.exotic, fc.constantFrom(...EXOTIC_METHODS)),
    w(weights.garbage, garbageMethodArb),
  );
}

// --- ids, segments, queries -----------------------------------------------------------------

const ODD_IDS = [
  '',
  '0',
  'ABCDEFGHIJ',
  'abcdefghij',
  'ABCDEFGHIJK',
  'ABCDEFGHI',
  '..',
  '.',
  'root',
  'null',
  '-1',
  '%00',
  '%',
  '%G1',
  '%E0%A4%A',
  '%C0%AF',
  '%FF',
  '%2F',
  '%3B',
  ';',
  ';;',
  '%u0041',
  'é',
  '日本',
  '%E2%80%AE',
  '%2e%2e',
  '*',
  'copy',
  'delete',
];

/** Printable ASCII as a client might leave it unescaped (no space: that would end the target). */
const rawPrintableArb = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength }).map((text) => text.replace(/[ #]/g, ''));

/** A path segment of random characters: percent-encoded, or raw printable ASCII, or raw UTF-8. */
const segmentArb: fc.Arbitrary<string> = fc.oneof(
  w(6, fc.string({ maxLength: 16 }).map(encodeURIComponent)),
  w(1, rawPrintableArb(8)),
  w(1, fc.string({ unit: 'grapheme', maxLength: 4 })),
);

/** Segments past the router's 2048-character parameter limit, and past the 16 KiB header limit. */
const longSegmentArb: fc.Arbitrary<string> = fc.oneof(fc.integer({ min: 200, max: 5_000 }), fc.integer({ min: 15_000, max: 40_000 })).map((n) => 'A'.repeat(n));

export function idArb(f: Fixtures): fc.Arbitrary<string> {
  return fc.oneof(
    w(6, fc.constantFrom(...f.fileIds, ...f.otherFileIds, ...f.folderIds)),
    w(2, fc.stringMatching(/^[A-Z0-9]{10}$/)),
    w(2, fc.constantFrom(...ODD_IDS)),
    w(1, segmentArb),
    w(1, longSegmentArb),
  );
}

function queryArb(f: Fixtures): fc.Arbitrary<string> {
  const key = fc.constantFrom(
    '_method',
    '_method',
    'limit',
    'cursor',
    'status',
    'folder',
    'parent',
    'download',
    'preview',
    'login',
    'password',
    'note',
    'copied',
    'key',
    '',
    '%zz',
    'a[b]',
  );
  const value = fc.oneof(
    w(
      3,
      fc.constantFrom(
        'PUT',
        'DELETE',
        'GET',
        'POST',
        'put',
        'FOO',
        '',
        '1',
        '0',
        '-1',
        '500',
        '501',
        '1e3',
        'A',
        'B',
        'A,B',
        'D',
        'Z',
        'root',
        'moved',
        '%zz',
        '%',
        '%00',
        'abc%E0',
      ),
    ),
    w(2, idArb(f)),
    w(1, fc.string({ maxLength: 10 }).map(encodeURIComponent)),
    w(1, rawPrintableArb(6)),
  );
  return fc.oneof(
    w(3, fc.constant('')),
    w(
      3,
      fc.array(fc.tuple(key, value), { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
    ),
    w(1, fc.constantFrom('?', '??', '?&&', '?=', '#frag', '?a=1#b')),
  );
}

// --- targets ----------------------------------------------------------------------------------

/** The catalogue's paths and aliases (`<id>` to fill), plus near misses of them. */
const API_TEMPLATES = [...new Set(ENDPOINTS.flatMap((endpoint) => [endpoint.path, ...endpoint.aliases]))];
const API_NEAR_MISSES = [
  '/files/<id>;<suffix>',
  '/folders/<id>;<suffix>',
  '/folders/<id>%3b<suffix>',
  '/files/<id>%3B<suffix>',
  '/files/<id>;DirectLink;files',
  '/files/<id>/<id>',
  '/files/',
  '/folders/',
  '/account/',
  '/apikeys/<id>',
  '/file/<id>',
  '/files/copy/',
  '/files/copy:',
  '/files/copy/<id>/x',
  '//files',
  '/files//<id>',
  '/%61ccount',
  '/%66iles/<id>',
  '/account;DirectLink',
  '/files/<id>%3',
  '/files/<id>%',
  '/files/./<id>',
  '/files/../account',
  '/files/copy:<id>;DirectLink',
  '/folders/<id>/files',
  '/account/<id>',
];
const SUFFIXES = ['DirectLink', 'expiry', 'directlink', 'DIRECTLINK', 'files', 'Files', '', 'foo', 'DirectLink%00', ';', 'DirectLink?x=1'];

function fill(template: string, ids: string[], suffix: string): string {
  let n = 0;
  return template.replaceAll('<id>', () => ids[n++ % ids.length]!).replaceAll('<suffix>', suffix);
}

export function apiTargetArb(f: Fixtures): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.oneof(w(5, fc.constantFrom(...API_TEMPLATES)), w(2, fc.constantFrom(...API_NEAR_MISSES))),
      fc.array(idArb(f), { minLength: 2, maxLength: 2 }),
      fc.constantFrom(...SUFFIXES),
      queryArb(f),
    )
    .map(([template, ids, suffix, query]) => fill(template, ids, suffix) + query);
}

/**
 * A method and target for the API: an endpoint of the catalogue with its documented
 * method most of the time (so the handlers run, not only the 405), any other method, or
 * a near miss of the paths.
 */
export function apiRequestArb(f: Fixtures, methods: fc.Arbitrary<string>): fc.Arbitrary<[string, string]> {
  const ids = fc.array(idArb(f), { minLength: 2, maxLength: 2 });
  const endpoint = fc
    .tuple(fc.constantFrom(...ENDPOINTS), fc.nat(), ids, queryArb(f), fc.oneof(w(3, fc.constant<string | null>(null)), w(2, methods)))
    .map(([e, pick, [a = '', b = ''], query, other]): [string, string] => {
      const paths = [e.path, ...e.aliases];
      return [other ?? e.method, fill(paths[pick % paths.length]!, [a, b], '') + query];
    });
  const nearMiss = fc
    .tuple(methods, fc.constantFrom(...API_NEAR_MISSES), ids, fc.constantFrom(...SUFFIXES), queryArb(f))
    .map(([method, template, list, suffix, query]): [string, string] => [method, fill(template, list, suffix) + query]);
  return fc.oneof(w(4, endpoint), w(1, nearMiss));
}

const WEB_PAGES = [
  '/',
  '/healthz',
  '/developers',
  '/signin',
  '/signup',
  '/signout',
  '/static/site.css',
  browserScript('my-files').path,
  browserScript('profile').path,
  '/accounts/profile/misc',
  '/accounts/profile/misc/regenerate-key',
  '/my/files',
  '/my/files/upload',
  '/my/files/move',
  '/my/files/delete',
  '/my/files/folders',
  browserScript('request-upload').path,
  // Upload requests (issue 25): an unknown request's page, upload and password form.
  '/r/Aaaaaaaaaaaaaaaaaaaaaa',
  '/r/Aaaaaaaaaaaaaaaaaaaaaa/password',
  '/r/short',
];

/** A link with one character changed, cut, or extended: a forged token or secret. */
function mutatedArb(link: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(link, fc.nat(), fc.constantFrom('replace', 'cut', 'extend', 'keep', 'keep')).map(([path, at, how]) => {
    const i = 1 + (at % Math.max(1, path.length - 1));
    if (how === 'replace') return `${path.slice(0, i)}${path[i] === 'A' ? 'B' : 'A'}${path.slice(i + 1)}`;
    if (how === 'cut') return path.slice(0, i);
    if (how === 'extend') return `${path}x`;
    return path;
  });
}

export function webTargetArb(f: Fixtures): fc.Arbitrary<string> {
  const id = idArb(f);
  const downloadQuery = fc.constantFrom('', '', '?download=1', '?preview=1', '?download=1&preview=1', '?download', '?copied=1', '?download=%zz');
  return fc.oneof(
    w(
      5,
      fc.tuple(fc.constantFrom(...WEB_PAGES), queryArb(f)).map(([page, query]) => page + query),
    ),
    w(
      3,
      fc.tuple(mutatedArb(fc.constantFrom(...f.downloadPaths)), downloadQuery).map(([path, query]) => path + query),
    ),
    w(2, mutatedArb(fc.constantFrom(...f.deletePaths))),
    w(2, mutatedArb(fc.constantFrom(...f.directPaths))),
    w(
      2,
      fc.tuple(id, queryArb(f)).map(([folder, query]) => `/folder/${folder}${query}`),
    ),
    w(
      1,
      id.map((file) => `/${file}/copy`),
    ),
    // Shares (issue 25): the page, the download, one file of a folder share; ids made up.
    w(
      1,
      fc
        .tuple(
          fc.constantFrom('AAAAAAAAAAAAAAAAAAAAAA', 'aB3dE5gH7jK9mN1pQ3sT5v', 'short'),
          fc.constantFrom('', '/download', '/download/ABCDEFGHIJ', '?password=x'),
          id,
        )
        .map(([share, rest, file]) => `/s/${share}${rest.replace('ABCDEFGHIJ', file)}`),
    ),
    w(
      1,
      fc.tuple(id, segmentArb).map(([file, name]) => `/${file}/${name}`),
    ),
    w(
      1,
      fc.tuple(id, segmentArb).map(([file, secret]) => `/${file}/delete/${secret}`),
    ),
    w(
      1,
      fc.tuple(id, segmentArb, segmentArb).map(([file, token, name]) => `/direct/${file}/${token}/${name}`),
    ),
    w(
      1,
      fc.tuple(id, fc.constantFrom('moved', 'deleted', 'folder', 'x')).map(([folder, note]) => `/my/files?folder=${folder}&note=${note}`),
    ),
  );
}

const UNKNOWN_PATHS = [
  '/nonexistent',
  '/wp-login.php',
  '/.env',
  '/.git/config',
  '/admin',
  '/api',
  '/api/v1/files',
  '/robots.txt',
  '/favicon.ico',
  '/static',
  '/static/',
  '/static/../../etc/passwd',
  '/my',
  '/my/',
  '/my/files/x/y',
  '/accounts',
  '/accounts/profile',
  '/cgi-bin/test.cgi',
  '/server-status',
  '/%2e%2e/%2e%2e/etc/passwd',
  '/a/b/c/d',
  '/healthz/x',
  '/healthz/',
  '/FILES',
  '/Account',
  '/folder',
  '/direct',
  '/direct/x',
];

export function unknownTargetArb(): fc.Arbitrary<string> {
  return fc.oneof(
    w(3, fc.constantFrom(...UNKNOWN_PATHS)),
    w(
      2,
      fc.stringMatching(/^[a-z0-9._-]{1,16}$/).map((word) => `/${word}`),
    ),
    w(
      1,
      fc.array(segmentArb, { minLength: 3, maxLength: 6 }).map((segments) => `/${segments.join('/')}`),
    ),
  );
}

/** Request-targets only a raw socket sends: asterisk and absolute forms, no slash, raw bytes. */
const oddTargetArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '*',
    `http://${HOST}/account`,
    `http://${HOST}/files?x=1`,
    'https://example.com/files',
    `http://${HOST}`,
    'account',
    'files/x',
    '',
    '/\u0000',
    '/a b',
    '/\u007f',
    '/%',
    '/%%%%',
    '/files\\x',
    '/files/\u00ff',
  ),
  longSegmentArb.map((segment) => `/files/${segment}`),
  // Control characters and spaces: the request line no longer parses.
  fc
    .tuple(fc.constantFrom('/files/', '/account?x=', '/', '/signin?'), fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 8 }))
    .map(([prefix, raw]) => prefix + raw),
);

export function anyTargetArb(f: Fixtures): fc.Arbitrary<string> {
  return fc.oneof(w(4, apiTargetArb(f)), w(3, webTargetArb(f)), w(2, unknownTargetArb()), w(1, oddTargetArb));
}
