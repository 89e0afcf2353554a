/**
 * Golden-format tests (API.md section 3): whole response bodies, line by line.
 *
 * The expected bodies come from the ```xml examples of API.md itself (the vendored copy in
 * test/fixtures/API.md, checked against ../shared/API.md); the responses API.md only
 * describes in words are written here from its rules (entry children in SPEC.md order,
 * link attributes title, href, rel, length). Only what legitimately varies is a slot:
 * {base_url}, {web_url}, {ed_namespace}, ids, keys, delete secrets, the account id and
 * the direct-link token. The clock, the file name and size and the account data are fixed
 * so that everything else (the `updated` line, premium dates, sizes) must match verbatim.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertGoldenLines, type Bindings, replaceLine, type Slot, substitute, xmlBlocks } from '../helpers/golden-lines.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';
import { type ParsedDocument, parseAtom } from '../helpers/xml.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'API.md');
/** ../shared/API.md seen from the repository root. */
const SHARED = path.resolve(REPO_ROOT, '..', 'shared', 'API.md');

const ATOM_TYPE = 'application/atom+xml; charset=utf-8';
/** The instant of API.md's example: `Sat, 21 Nov 2026 10:04:05 +0000`. */
const NOW = '2026-11-21T10:04:05Z';
/** A {web_url} different from {base_url}, so every line must pick the right one. */
const WEB_URL = 'https://www.filehaven.test';
/** The file of the upload example: `report 2026.pdf`, 48213 bytes. */
const REPORT_NAME = 'report 2026.pdf';
const REPORT = Buffer.alloc(48213, 'filehaven golden format\n');

// ---------------------------------------------------------------------------------------
// The examples of API.md section 3

const API_MD = readFileSync(FIXTURE, 'utf8');
const BLOCKS = xmlBlocks(API_MD);

function pick(what: string, predicate: (lines: string[]) => boolean): string[] {
  const found = BLOCKS.filter(predicate);
  assert.equal(found.length, 1, `API.md must hold exactly one \`\`\`xml block with ${what}; found ${found.length}`);
  return found[0]!;
}

const entryBlock = (what: string, marker: string) => {
  const lines = pick(what, (lines) => lines.includes(marker));
  assert.equal(lines[0], '  <entry>', `the ${what} example starts with the entry`);
  assert.equal(lines.at(-1), '  </entry>', `the ${what} example ends with the entry`);
  return lines;
};

const GOLDEN = {
  /** The full upload feed. */
  upload: pick('the upload feed', (lines) => lines[0] === '<?xml version="1.0" encoding="UTF-8"?>'),
  apikeyEntry: entryBlock('the API key entry', '    <title>apikey</title>'),
  accountEntry: entryBlock('the account entry', '    <ed:name>Ada Lovelace</ed:name>'),
  errorEntry: entryBlock('the error entry', '    <title>errorFileNotFound</title>'),
};

/** The entry of the upload example (`  <entry>` to `  </entry>`). */
const UPLOAD_ENTRY = GOLDEN.upload.slice(GOLDEN.upload.indexOf('  <entry>'), GOLDEN.upload.indexOf('  </entry>') + 1);

/**
 * A whole expected feed: the upload example's frame (declaration, feed line, title, id,
 * updated, author, ..., self link, </feed>) around `entry`, with its title and request path.
 */
function feed(title: string, selfPath: string, entry: readonly string[]): string[] {
  const start = GOLDEN.upload.indexOf('  <entry>');
  const end = GOLDEN.upload.indexOf('  </entry>');
  assert.ok(start > 0 && end > start, 'the upload example has one entry');
  let head = GOLDEN.upload.slice(0, start);
  head = replaceLine(head, '  <title>File upload result</title>', `  <title>${title}</title>`);
  head = replaceLine(head, '  <id>{base_url}/files</id>', `  <id>{base_url}${selfPath}</id>`);
  const tail = replaceLine(GOLDEN.upload.slice(end + 1), '  <link rel="self" href="/files"/>', `  <link rel="self" href="${selfPath}"/>`);
  return [...head, ...entry, ...tail];
}

/** Error feed for a code and message, from the error example. */
function errorFeed(selfPath: string, code: string, message: string): string[] {
  let entry = replaceLine(GOLDEN.errorEntry, '    <title>errorFileNotFound</title>', `    <title>${code}</title>`);
  entry = replaceLine(entry, '    <content type="text">File does not exist or is deleted</content>', `    <content type="text">${message}</content>`);
  return feed('Error', selfPath, entry);
}

/** The account example with the id made a slot and some lines replaced. */
function accountEntry(replacements: Record<string, string> = {}): string[] {
  let entry = replaceLine(GOLDEN.accountEntry, '    <id>17</id>', '    <id>{account_id}</id>');
  for (const [from, to] of Object.entries(replacements)) entry = replaceLine(entry, from, to);
  return entry;
}

// ---------------------------------------------------------------------------------------
// What varies

const FILE_ID = '[A-Z0-9]{10}';
const HEX32 = '[0-9a-f]{32}';
const SLOTS: Slot[] = [
  // The placeholders of API.md's examples.
  { token: 'K7Q2M9X4PA', name: 'fileId', pattern: FILE_ID },
  { token: '3f9c...e1', name: 'secret', pattern: HEX32 },
  { token: '{API_KEY}', name: 'apiKey', pattern: '[A-Za-z0-9_-]{22,}' },
  // The placeholders of the templates written here.
  { token: '{file_id}', name: 'fileId', pattern: FILE_ID },
  { token: '{account_id}', name: 'accountId', pattern: '[1-9][0-9]*' },
  { token: '{copy_id}', name: 'copyId', pattern: FILE_ID },
  { token: '{copy_secret}', name: 'copySecret', pattern: HEX32 },
  { token: '{folder_id}', name: 'folderId', pattern: FILE_ID },
  { token: '{upload_id}', name: 'uploadId', pattern: HEX32 },
  // A URL path segment of unreserved characters only (no escaping needed anywhere).
  { token: '{token}', name: 'token', pattern: '[A-Za-z0-9._~-]+' },
];

let srv: TestServer;
let clock: TestClock;
let ada: TestAccount;

/** {base_url}, {web_url} and {ed_namespace} as this server must write them (API.md 1). */
const fixed = () => ({ '{ed_namespace}': `${WEB_URL}/developers`, '{base_url}': srv.url, '{web_url}': WEB_URL });

interface Checked {
  body: string;
  bindings: Bindings;
  atom: ParsedDocument;
}

/**
 * The golden checks of one response: status, Content-Type, the whole body line by line
 * (one trailing newline, same number of lines) and well-formed XML.
 */
async function golden(response: Response, status: number, expected: readonly string[], preset: Record<string, string> = {}): Promise<Checked> {
  const body = await response.text();
  assert.equal(response.status, status, `HTTP status\n${body}`);
  assert.equal(response.headers.get('content-type'), ATOM_TYPE);
  const bindings = assertGoldenLines(body, substitute(expected, fixed()), SLOTS, new Map(Object.entries(preset)));
  const atom = parseAtom(body);
  return { body, bindings, atom };
}

/** GET /files/<id> of a 48213-byte file is File Full info with this title (XML-escaped) and link name (URL-encoded). */
async function expectFullInfo(fileId: string, title: string, linkName: string): Promise<void> {
  await golden(
    await srv.fetch(`/files/${fileId}`, auth(ada)),
    200,
    feed('File Full info', '/files/{file_id}', [
      '  <entry>',
      '    <id>{file_id}</id>',
      `    <title>${title}</title>`,
      '    <ed:status>A</ed:status>',
      `    <link href="{web_url}/{file_id}/${linkName}" rel="enclosure" length="48213"/>`,
      '  </entry>',
    ]),
    { fileId },
  );
}

const auth = (account: TestAccount, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string> | undefined), Authorization: account.key },
});

/** POST /files with the file in the `upload` part (as the helper does, but the response unread). */
function uploadRequest(account: TestAccount, name: string, content: Buffer): Promise<Response> {
  const form = new FormData();
  form.append('upload', new Blob([new Uint8Array(content)]), name);
  return srv.fetch('/files', auth(account, { method: 'POST', body: form }));
}

/** Uploads `report 2026.pdf` and checks the result against the API.md example. */
async function uploadReport(account: TestAccount = ada): Promise<{ fileId: string; secret: string }> {
  const { bindings } = await golden(await uploadRequest(account, REPORT_NAME, REPORT), 201, GOLDEN.upload);
  return { fileId: bindings.get('fileId')!, secret: bindings.get('secret')! };
}

before(async () => {
  clock = new TestClock();
  clock.set('2026-11-01T00:00:00Z');
  srv = await startTestServer({ webUrl: WEB_URL }, clock);
  ada = await srv.account({ login: 'ada', name: 'Ada Lovelace', email: 'ada@example.org', premiumDays: 30, trafficBytes: 10737418240 });
  clock.set(NOW);
});
after(() => srv.close());

// ---------------------------------------------------------------------------------------
// The source of the expected bodies

test('test/fixtures/API.md is byte-identical to ../shared/API.md', (t) => {
  if (!existsSync(SHARED)) {
    t.skip(`${SHARED} does not exist; the vendored copy cannot be compared`);
    return;
  }
  const vendored = readFileSync(FIXTURE);
  const shared = readFileSync(SHARED);
  assert.ok(vendored.equals(shared), `test/fixtures/API.md differs from ${SHARED}: copy the shared file over the fixture`);
});

test('API.md section 3 holds the four golden examples and the frame rebuilds the upload feed', () => {
  assert.equal(BLOCKS.length, 4, 'API.md has four ```xml blocks: upload feed, apikey, account and error entries');
  // The frame the entries-only examples are put into gives back the upload example itself.
  assert.deepEqual(feed('File upload result', '/files', UPLOAD_ENTRY), GOLDEN.upload);
  assert.equal(GOLDEN.upload.at(-1), '</feed>');
  assert.ok(GOLDEN.upload.includes('  <updated>Sat, 21 Nov 2026 10:04:05 +0000</updated>'));
});

test('the server runs with the {base_url} and {web_url} the templates are filled with', () => {
  assert.equal(srv.server.webUrl, WEB_URL);
  assert.equal(srv.server.baseUrl, srv.url);
  assert.notEqual(srv.url, WEB_URL);
});

// ---------------------------------------------------------------------------------------
// The four examples of API.md

test('upload (201) is the API.md upload feed, line for line', async () => {
  const { fileId, secret } = await uploadReport();
  assert.match(fileId, /^[A-Z0-9]{10}$/);
  assert.match(secret, /^[0-9a-f]{32}$/);
  // A second upload gets a new id and a new delete secret.
  const again = await uploadReport();
  assert.notEqual(again.fileId, fileId);
  assert.notEqual(again.secret, secret);
});

test('the upload body ends with one newline after </feed> and is well-formed', async () => {
  const response = await uploadRequest(ada, REPORT_NAME, REPORT);
  const body = await response.text();
  assert.equal(response.status, 201, body);
  assert.ok(body.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<feed '), 'the XML declaration is the first line');
  assert.ok(body.endsWith('\n  <link rel="self" href="/files"/>\n</feed>\n'), `the self link comes after the entry, then </feed> and one newline:\n${body}`);
  const atom = parseAtom(body);
  assert.equal(atom.feed.entry.title, REPORT_NAME);
  assert.equal(atom.feed.entry['ed:size'], '48213');
});

test('POST /apikeys (201) is the API.md apikey entry in the frame, with the same key again', async () => {
  assert.match(ada.key, /^[A-Za-z0-9_-]{22,}$/);
  const expected = feed('ApiKey', '/apikeys', GOLDEN.apikeyEntry);
  const body = new URLSearchParams({ login: ada.login, password: ada.password });
  // The key is returned unchanged after the first call (API.md 5).
  await golden(await srv.fetch('/apikeys', { method: 'POST', body }), 201, expected, { apiKey: ada.key });
});

test('GET /account (200) is the API.md account entry in the frame, whatever Accept says', async () => {
  const expected = feed('Account Info', '/account', accountEntry());
  const preset = { accountId: String(ada.account.id) };
  await golden(await srv.fetch('/account', auth(ada)), 200, expected, preset);
  await golden(await srv.fetch('/account', auth(ada, { headers: { Accept: 'text/html' } })), 200, expected, preset);
  await golden(await srv.fetch('/account', auth(ada, { headers: { Accept: 'application/atom+xml' } })), 200, expected, preset);
});

test('errorFileNotFound (404) is the API.md error entry in the frame', async () => {
  const missing = 'ZZZZZZZZZ0';
  const entry = GOLDEN.errorEntry;
  await golden(await srv.fetch(`/files/${missing}`, auth(ada)), 404, feed('Error', `/files/${missing}`, entry));
  await golden(await srv.fetch(`/files/${missing};DirectLink`, auth(ada)), 404, feed('Error', `/files/${missing};DirectLink`, entry));
  await golden(await srv.fetch(`/files/copy/${missing}`, auth(ada, { method: 'POST' })), 404, feed('Error', `/files/copy/${missing}`, entry));
});

test('the two errors with exact texts (API.md 3) use the same error shape', async () => {
  const wrongPassword = new URLSearchParams({ login: ada.login, password: 'not the password' });
  await golden(
    await srv.fetch('/apikeys', { method: 'POST', body: wrongPassword }),
    401,
    errorFeed('/apikeys', 'errorWrongCredentials', 'Invalid login or password'),
  );
  const wrongKey = errorFeed('/account', 'errorPermissionDenied', 'Wrong apikey');
  await golden(await srv.fetch('/account', { headers: { Authorization: 'A'.repeat(32) } }), 401, wrongKey);
  await golden(await srv.fetch('/account'), 401, wrongKey);
});

// ---------------------------------------------------------------------------------------
// The responses API.md describes in words

test('GET /files/<id> (200) is File Full info: id, title, ed:status, enclosure link', async () => {
  const { fileId } = await uploadReport();
  const expected = (status: string) =>
    feed('File Full info', '/files/{file_id}', [
      '  <entry>',
      '    <id>{file_id}</id>',
      '    <title>report 2026.pdf</title>',
      `    <ed:status>${status}</ed:status>`,
      '    <link href="{web_url}/{file_id}/report%202026.pdf" rel="enclosure" length="48213"/>',
      '  </entry>',
    ]);
  await golden(await srv.fetch(`/files/${fileId}`, auth(ada)), 200, expected('A'), { fileId });
  // A blocked file still has details, with B (API.md 4).
  await srv.server.services.files.block(fileId);
  await golden(await srv.fetch(`/files/${fileId}`, auth(ada)), 200, expected('B'), { fileId });
});

test('GET /files/<id>;DirectLink (200) is File info: id, title, direct enclosure link', async () => {
  const { fileId } = await uploadReport();
  const expected = (selfPath: string) =>
    feed('File info', selfPath, [
      '  <entry>',
      '    <id>{file_id}</id>',
      '    <title>report 2026.pdf</title>',
      '    <link href="{web_url}/direct/{file_id}/{token}/report%202026.pdf" rel="enclosure" length="48213"/>',
      '  </entry>',
    ]);
  await golden(await srv.fetch(`/files/${fileId};DirectLink`, auth(ada)), 200, expected('/files/{file_id};DirectLink'), { fileId });
  // `%3B` routes the same; id and self link are the request as sent.
  await golden(await srv.fetch(`/files/${fileId}%3BDirectLink`, auth(ada)), 200, expected('/files/{file_id}%3BDirectLink'), { fileId });
});

test('PUT /folders/<id>;files (200) is Add files to folder: id, folder_link, ed:updated', async () => {
  const first = await uploadReport();
  const second = await uploadReport();
  const created = await srv.fetch('/folders', auth(ada, { method: 'POST', body: new URLSearchParams({ name: 'Reports' }) }));
  const createdBody = await created.text();
  assert.equal(created.status, 201, createdBody);
  const folderId = String(parseAtom(createdBody).feed.entry.id);
  assert.match(folderId, /^[A-Z0-9]{10}$/);

  const expected = (length: number, updated: number) =>
    feed('Add files to folder', '/folders/{folder_id};files', [
      '  <entry>',
      '    <id>{folder_id}</id>',
      `    <link title="folder_link" href="{web_url}/folder/{folder_id}" rel="enclosure" length="${length}"/>`,
      `    <ed:updated>${updated}</ed:updated>`,
      '  </entry>',
    ]);
  const move = new URLSearchParams({ 'files[0]': first.fileId });
  await golden(await srv.fetch(`/folders/${folderId};files`, auth(ada, { method: 'PUT', body: move })), 200, expected(48213, 1), { folderId });
  // As POST with _method=PUT; length is the folder's total active bytes, ed:updated the files listed.
  const moveBoth = new URLSearchParams({ _method: 'PUT', 'files[0]': first.fileId, 'files[1]': second.fileId });
  await golden(await srv.fetch(`/folders/${folderId};files`, auth(ada, { method: 'POST', body: moveBoth })), 200, expected(2 * 48213, 2), { folderId });
});

test('POST /files/copy/<id> (201) is File copy: the upload entry with a new id and rel="related"', async () => {
  const source = await uploadReport();
  const copier = await srv.account({ name: 'Copier' });
  // API.md 3: "Copy: id, title, ed:size, then the two links (delete link with rel="related")":
  // the upload example's entry, with the copy's id and delete secret.
  const entry = replaceLine(
    UPLOAD_ENTRY,
    '    <link title="delete_link" href="{web_url}/K7Q2M9X4PA/delete/3f9c...e1" rel="self"/>',
    '    <link title="delete_link" href="{web_url}/K7Q2M9X4PA/delete/3f9c...e1" rel="related"/>',
  ).map((line) => line.split('K7Q2M9X4PA').join('{copy_id}').split('3f9c...e1').join('{copy_secret}'));
  const preset = { fileId: source.fileId };

  const copy = await golden(
    await srv.fetch(`/files/copy/${source.fileId}`, auth(copier, { method: 'POST' })),
    201,
    feed('File copy', '/files/copy/{file_id}', entry),
    preset,
  );
  assert.notEqual(copy.bindings.get('copyId'), source.fileId, 'a copy gets a new id');
  assert.notEqual(copy.bindings.get('copySecret'), source.secret, 'a copy gets a new delete secret');

  // The alias of SPEC.md's list: /files/copy:<id>.
  const alias = await golden(
    await srv.fetch(`/files/copy:${source.fileId}`, auth(copier, { method: 'POST' })),
    201,
    feed('File copy', '/files/copy:{file_id}', entry),
    preset,
  );
  assert.notEqual(alias.bindings.get('copyId'), copy.bindings.get('copyId'));
});

// ---------------------------------------------------------------------------------------
// Empty values, escaping

test('unset account values are <x></x>: a fresh account without premium, name or e-mail', async () => {
  const fresh = await srv.account();
  const expected = feed(
    'Account Info',
    '/account',
    accountEntry({
      '    <ed:name>Ada Lovelace</ed:name>': '    <ed:name></ed:name>',
      '    <ed:email>ada@example.org</ed:email>': '    <ed:email></ed:email>',
      '    <ed:premium>Active</ed:premium>': '    <ed:premium>None</ed:premium>',
      '    <ed:premium_start>2026-11-01 00:00:00</ed:premium_start>': '    <ed:premium_start></ed:premium_start>',
      '    <ed:premium_end>2026-12-01 00:00:00</ed:premium_end>': '    <ed:premium_end></ed:premium_end>',
      '    <ed:premium_trafficLeft>10737418240</ed:premium_trafficLeft>': '    <ed:premium_trafficLeft>0</ed:premium_trafficLeft>',
    }),
  );
  const { body, atom } = await golden(await srv.fetch('/account', auth(fresh)), 200, expected, { accountId: String(fresh.account.id) });
  for (const line of body.split('\n').filter((l) => l.endsWith('/>'))) assert.match(line, /^\s*<link /, 'only links are self-closed');
  assert.equal(atom.feed.entry['ed:premium_start'], '');
  // A regex client's `<x>(.*?)</x>` finds the empty value.
  assert.equal(/<ed:premium_end>(.*?)<\/ed:premium_end>/.exec(body)?.[1], '');
});

test('an expired premium shows Expired with its dates', async () => {
  clock.set('2026-10-01T00:00:00Z');
  const lapsed = await srv.account({ name: 'Charles Babbage', email: 'charles@example.org', premiumDays: 30, trafficBytes: 1024 });
  clock.set(NOW);
  const expected = feed(
    'Account Info',
    '/account',
    accountEntry({
      '    <ed:name>Ada Lovelace</ed:name>': '    <ed:name>Charles Babbage</ed:name>',
      '    <ed:email>ada@example.org</ed:email>': '    <ed:email>charles@example.org</ed:email>',
      '    <ed:premium>Active</ed:premium>': '    <ed:premium>Expired</ed:premium>',
      '    <ed:premium_start>2026-11-01 00:00:00</ed:premium_start>': '    <ed:premium_start>2026-10-01 00:00:00</ed:premium_start>',
      '    <ed:premium_end>2026-12-01 00:00:00</ed:premium_end>': '    <ed:premium_end>2026-10-31 00:00:00</ed:premium_end>',
      '    <ed:premium_trafficLeft>10737418240</ed:premium_trafficLeft>': '    <ed:premium_trafficLeft>1024</ed:premium_trafficLeft>',
    }),
  );
  await golden(await srv.fetch('/account', auth(lapsed)), 200, expected, { accountId: String(lapsed.account.id) });
});

/** A multipart upload written by hand, so the filename goes out exactly as given (a quoted string). */
function rawUpload(account: TestAccount, quotedFilename: string, content: Buffer): Promise<Response> {
  const boundary = '----filehaven-golden-7MA4YWxkTrZu0gW';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${quotedFilename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return srv.fetch('/files', auth(account, { method: 'POST', headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body }));
}

test('a name with <&">\' is XML-escaped (quotes stay literal in text) in the title and URL-encoded in the download link', async () => {
  const name = `q<&">'.txt`;
  // The upload example with only the name changed (same 48213 bytes).
  let entry = replaceLine(UPLOAD_ENTRY, '    <title>report 2026.pdf</title>', `    <title>q&lt;&amp;"&gt;'.txt</title>`);
  entry = replaceLine(
    entry,
    '    <link title="download_link" href="{web_url}/K7Q2M9X4PA/report%202026.pdf" rel="enclosure" length="48213"/>',
    // Every character of the name that is not unreserved (RFC 3986) is percent-encoded,
    // so the href needs no XML escaping: a regex client reads it as a usable URL.
    '    <link title="download_link" href="{web_url}/K7Q2M9X4PA/q%3C%26%22%3E%27.txt" rel="enclosure" length="48213"/>',
  );
  const expected = feed('File upload result', '/files', entry);
  const { atom, bindings } = await golden(await rawUpload(ada, name.replace(/["\\]/g, '\\$&'), REPORT), 201, expected);
  assert.equal(atom.feed.entry.title, name, 'an XML parser reads the name back');
  const href = atom.feed.entry.link.find((link: Record<string, string>) => link['@title'] === 'download_link')['@href'] as string;
  assert.equal(decodeURIComponent(href.split('/').at(-1)!), name, 'the link decodes to the name');

  // The same name in the File Full info title and link.
  const fileId = bindings.get('fileId')!;
  await expectFullInfo(fileId, `q&lt;&amp;"&gt;'.txt`, 'q%3C%26%22%3E%27.txt');
});

// ---------------------------------------------------------------------------------------
// Resumable uploads (tus, docs/resumable-uploads.md): the request that stores the last
// byte answers the upload feed of POST /files, with the upload's own URL as id and self.

const TUS = { 'Tus-Resumable': '1.0.0' };
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** Creates a resumable upload of `report 2026.pdf`; its id. */
async function createReportUpload(): Promise<string> {
  const created = await srv.fetch(
    '/uploads',
    auth(ada, { method: 'POST', headers: { ...TUS, 'Upload-Length': String(REPORT.length), 'Upload-Metadata': `filename ${b64(REPORT_NAME)}` } }),
  );
  assert.equal(created.status, 201, await created.text());
  const location = created.headers.get('location') ?? '';
  assert.ok(location.startsWith(`${srv.url}/uploads/`), location);
  return location.slice(`${srv.url}/uploads/`.length);
}

// The feed comes to a client that asks for it (tus 1.0 answers a PATCH 204 otherwise).
const patch = (id: string, offset: number, body: Buffer) =>
  srv.fetch(
    `/uploads/${id}`,
    auth(ada, {
      method: 'PATCH',
      headers: { ...TUS, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', Accept: 'application/atom+xml' },
      body: new Uint8Array(body),
    }),
  );

test('resumable upload: the finishing PATCH asking for Atom (200) is the API.md upload feed with the upload URL as id and self link', async () => {
  const uploadId = await createReportUpload();
  const first = await patch(uploadId, 0, REPORT.subarray(0, 20000));
  assert.equal(first.status, 204, await first.text());
  assert.equal(first.headers.get('upload-offset'), '20000');
  const expected = feed('File upload result', '/uploads/{upload_id}', UPLOAD_ENTRY);
  const { bindings } = await golden(await patch(uploadId, 20000, REPORT.subarray(20000)), 200, expected, { uploadId });
  // The same file as a POST /files upload of these bytes: same name, size and links.
  const fileId = bindings.get('fileId')!;
  await expectFullInfo(fileId, 'report 2026.pdf', 'report%202026.pdf');
});

test('resumable upload: errors are the API.md error feed with a SPEC code', async () => {
  const uploadId = await createReportUpload();
  // A PATCH at the wrong offset: 409, tus's reason as the message.
  await golden(
    await patch(uploadId, 5, REPORT.subarray(5, 10)),
    409,
    errorFeed('/uploads/{upload_id}', 'errorUploadFaild', 'Upload failed: Upload-Offset conflict'),
    { uploadId },
  );
  // No key: the API's 401.
  const anonymous = await srv.fetch(`/uploads/${uploadId}`, { method: 'HEAD', headers: TUS });
  assert.equal(anonymous.status, 401);
  await golden(
    await srv.fetch(`/uploads/${uploadId}`, {
      method: 'PATCH',
      headers: { ...TUS, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      body: 'x',
    }),
    401,
    errorFeed('/uploads/{upload_id}', 'errorPermissionDenied', 'Wrong apikey'),
    { uploadId },
  );
  // An upload that does not exist.
  const missing = 'f'.repeat(32);
  await golden(
    await patch(missing, 0, REPORT.subarray(0, 1)),
    404,
    errorFeed(`/uploads/${missing}`, 'errorFileNotFound', 'Upload does not exist or has expired'),
  );
});
