/**
 * The listing extensions `GET /files` and `GET /folders`: whole bodies line by line in the
 * golden format of API.md 3 (self link after the entries, then the next link), filters,
 * ownership, keyset pagination under concurrent uploads, and 400/401/403/404 in Atom.
 *
 * Expected entries are written from the store's records (read through the repositories,
 * never from the response) with formatting code of this file, so the serializer is checked
 * rather than echoed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FileRecord, Folder } from '../../src/domain/types.js';
import { assertAtomError, type ReadResponse, read } from '../helpers/api-checks.js';
import { assertGoldenLines, type Slot } from '../helpers/golden-lines.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';
import { type ParsedDocument, parseAtom } from '../helpers/xml.js';

const ATOM_TYPE = 'application/atom+xml; charset=utf-8';
/** A {web_url} different from {base_url}, so every line must pick the right one. */
const WEB_URL = 'https://www.filehaven.test';
const CURSOR_SLOT: Slot = { token: '{cursor}', name: 'cursor', pattern: '[A-Za-z0-9_-]+' };

let srv: TestServer;
let clock: TestClock;
let bob: TestAccount;

before(async () => {
  clock = new TestClock();
  srv = await startTestServer({ webUrl: WEB_URL }, clock);
  bob = await srv.account({ login: 'bob-listing' });
});
after(() => srv.close());

// ---------------------------------------------------------------------------------------
// Expected bodies, written independently of the server's serializer

/** Text content as the golden format escapes it (the names used here hold no quotes). */
const xmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** An attribute value (`&` of a query string, `"`). */
const xmlAttr = (text: string) => xmlText(text).replace(/"/g, '&quot;');
/** A name as one URL path segment, RFC 3986 unreserved characters left alone. */
const pathSegment = (name: string) => encodeURIComponent(name).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
/** `YYYY-MM-DD HH:MM:SS`, UTC. */
function dateTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}
/** `Sat, 21 Nov 2026 10:04:05 +0000`. */
function rfc822(ms: number): string {
  const d = new Date(ms);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${two(d.getUTCDate())} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

function fileEntry(file: FileRecord): string[] {
  return [
    '  <entry>',
    `    <id>${file.id}</id>`,
    `    <title>${xmlText(file.name)}</title>`,
    `    <ed:size>${file.size}</ed:size>`,
    `    <ed:status>${file.status}</ed:status>`,
    `    <ed:folder>${file.folderId ?? ''}</ed:folder>`,
    `    <ed:created>${dateTime(file.createdAt)}</ed:created>`,
    `    <link title="download_link" href="${WEB_URL}/${file.id}/${pathSegment(file.name)}" rel="enclosure" length="${file.size}"/>`,
    '  </entry>',
  ];
}

function folderEntry(folder: Folder, activeFiles: number, activeBytes: number): string[] {
  return [
    '  <entry>',
    `    <id>${folder.id}</id>`,
    `    <title>${xmlText(folder.name)}</title>`,
    `    <ed:parent>${folder.parentId ?? ''}</ed:parent>`,
    `    <link title="folder_link" href="${WEB_URL}/folder/${folder.id}" rel="enclosure" length="${activeBytes}"/>`,
    `    <ed:files>${activeFiles}</ed:files>`,
    '  </entry>',
  ];
}

/** A whole feed; `next` is the expected next href with `{cursor}` for the cursor. */
function feedLines(title: string, selfPath: string, entries: string[][], next?: string): string[] {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ed="${WEB_URL}/developers">`,
    `  <title>${title}</title>`,
    `  <id>${srv.url}${selfPath}</id>`,
    `  <updated>${rfc822(clock.now)}</updated>`,
    '  <author>',
    `    <name>${WEB_URL}</name>`,
    '  </author>',
    ...entries.flat(),
    `  <link rel="self" href="${selfPath}"/>`,
    ...(next === undefined ? [] : [`  <link rel="next" href="${xmlAttr(next)}"/>`]),
    '</feed>',
  ];
}

/** Checks status, type, well-formedness and every line; returns the bound cursor, if any. */
function assertFeed(response: ReadResponse, expected: string[]): { cursor: string | undefined; atom: ParsedDocument } {
  assert.equal(response.status, 200, response.body);
  assert.equal(response.headers.get('content-type'), ATOM_TYPE);
  const atom = parseAtom(response.body);
  const bindings = assertGoldenLines(response.body, expected, [CURSOR_SLOT]);
  return { cursor: bindings.get('cursor'), atom };
}

/** Newest first: created_at, then id, both descending. */
const newestFirst = <T extends { createdAt: number; id: string }>(items: T[]): T[] =>
  [...items].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));

// ---------------------------------------------------------------------------------------
// Requests

const get = async (account: TestAccount | null, path: string) => read(await srv.fetch(path, account ? { headers: { Authorization: account.key } } : {}));

async function upload(account: TestAccount, name: string, content: string = name): Promise<string> {
  const { response, id, body } = await srv.upload(account.key, name, content);
  assert.equal(response.status, 201, body);
  return id;
}

async function newFolder(account: TestAccount, name: string, parent?: string): Promise<string> {
  const fields: Record<string, string> = { name };
  if (parent) fields.parent = parent;
  const response = await read(await srv.fetch('/folders', { method: 'POST', headers: { Authorization: account.key }, body: new URLSearchParams(fields) }));
  assert.equal(response.status, 201, response.body);
  return /<entry>\s*<id>([A-Z0-9]{10})<\/id>/.exec(response.body)![1]!;
}

async function move(account: TestAccount, folder: string, ids: string[]): Promise<void> {
  const body = new URLSearchParams();
  for (const [i, id] of ids.entries()) body.append(`files[${i}]`, id);
  const response = await read(await srv.fetch(`/folders/${folder};files`, { method: 'PUT', headers: { Authorization: account.key }, body }));
  assert.equal(response.status, 200, response.body);
}

const records = async (ids: string[]): Promise<FileRecord[]> => {
  const found = await srv.server.services.store.files.byIds(ids);
  assert.equal(found.length, ids.length);
  return found;
};
const folderRecord = async (id: string): Promise<Folder> => (await srv.server.services.store.folders.byId(id))!;

/** A fresh account with no files, so that listings are exactly what a test made. */
let accountCounter = 0;
const freshAccount = () => srv.account({ login: `lister${++accountCounter}` });

// ---------------------------------------------------------------------------------------
// GET /files

describe('GET /files', () => {
  let carol: TestAccount;
  let folderId: string;
  let ids: { plain: string; odd: string; utf8: string; inFolder: string; blocked: string; deleted: string; sameTimeA: string; sameTimeB: string };
  let bobFile: string;

  before(async () => {
    carol = await freshAccount();
    clock.set('2026-11-21T09:00:00Z');
    folderId = await newFolder(carol, 'Reports');
    const at = (iso: string) => clock.set(iso);
    at('2026-11-21T09:01:00Z');
    const plain = await upload(carol, 'report 2026.pdf', 'x'.repeat(48213));
    at('2026-11-21T09:02:00Z');
    const odd = await upload(carol, 'a & b <c>.txt', 'odd');
    at('2026-11-21T09:03:00Z');
    const utf8 = await upload(carol, 'résumé ünïcode.txt', 'ünïcode');
    at('2026-11-21T09:04:00Z');
    const inFolder = await upload(carol, 'in folder.txt', 'in folder');
    await move(carol, folderId, [inFolder]);
    at('2026-11-21T09:05:00Z');
    const blocked = await upload(carol, 'blocked.bin', 'blocked bytes');
    await srv.server.services.files.block(blocked);
    at('2026-11-21T09:06:00Z');
    const deleted = await upload(carol, 'deleted.txt', 'deleted');
    const del = await read(await srv.fetch(`/files/${deleted}`, { method: 'DELETE', headers: { Authorization: carol.key } }));
    assert.equal(del.status, 200, del.body);
    // Two uploads at the same instant: the id breaks the tie.
    at('2026-11-21T09:07:00Z');
    const sameTimeA = await upload(carol, 'same time 1.txt', 'same 1');
    const sameTimeB = await upload(carol, 'same time 2.txt', 'same 2');
    ids = { plain, odd, utf8, inFolder, blocked, deleted, sameTimeA, sameTimeB };
    bobFile = await upload(bob, 'bob.txt', 'bob');
    clock.set('2026-11-21T10:04:05Z');
  });

  const live = () => [ids.plain, ids.odd, ids.utf8, ids.inFolder, ids.blocked, ids.sameTimeA, ids.sameTimeB];

  test('lists the caller’s active and blocked files newest first, every line exact', async () => {
    const expected = newestFirst(await records(live()));
    // The clock set above, written independently: the newest is the 09:07 pair, the oldest 09:01.
    assert.deepEqual(
      expected.map((f) => dateTime(f.createdAt)),
      [
        '2026-11-21 09:07:00',
        '2026-11-21 09:07:00',
        '2026-11-21 09:05:00',
        '2026-11-21 09:04:00',
        '2026-11-21 09:03:00',
        '2026-11-21 09:02:00',
        '2026-11-21 09:01:00',
      ],
    );
    const response = await get(carol, '/files');
    const { atom } = assertFeed(response, feedLines('File list', '/files', expected.map(fileEntry)));
    assert.equal(atom.feed.entry.length, 7);
    // Spot checks of the lines the records feed, against literal text.
    assert.ok(response.body.includes(`    <title>a &amp; b &lt;c&gt;.txt</title>\n`));
    assert.ok(response.body.includes(`href="${WEB_URL}/${ids.odd}/a%20%26%20b%20%3Cc%3E.txt" rel="enclosure" length="3"/>`));
    assert.ok(response.body.includes(`    <ed:folder>${folderId}</ed:folder>\n`));
    assert.ok(response.body.includes(`    <ed:status>B</ed:status>\n`));
    assert.ok(response.body.includes('    <ed:folder></ed:folder>\n'), 'a file in the root has an empty ed:folder, not a self-closed one');
    assert.ok(!response.body.includes(ids.deleted), 'a deleted file is never listed');
    assert.ok(!response.body.includes(bobFile), 'another account’s file is never listed');
  });

  test('another account sees only its own files; an account without files gets an empty feed', async () => {
    const response = await get(bob, '/files');
    const bobs = newestFirst(await srv.server.services.store.files.list({ ownerId: bob.account.id, states: ['A', 'B'], limit: 1000 }));
    assert.ok(bobs.some((f) => f.id === bobFile));
    assertFeed(response, feedLines('File list', '/files', bobs.map(fileEntry)));
    for (const id of live()) assert.ok(!response.body.includes(id));

    const empty = await freshAccount();
    assertFeed(await get(empty, '/files'), feedLines('File list', '/files', []));
  });

  test('status filters: A, B, both (comma list, any order and case)', async () => {
    const all = newestFirst(await records(live()));
    const active = all.filter((f) => f.status === 'A');
    const blocked = all.filter((f) => f.status === 'B');
    assert.equal(blocked.length, 1);
    assertFeed(await get(carol, '/files?status=A'), feedLines('File list', '/files', active.map(fileEntry)));
    assertFeed(await get(carol, '/files?status=B'), feedLines('File list', '/files', blocked.map(fileEntry)));
    assertFeed(await get(carol, '/files?status=B,A'), feedLines('File list', '/files', all.map(fileEntry)));
    assertFeed(await get(carol, '/files?status=a%2Cb'), feedLines('File list', '/files', all.map(fileEntry)));
  });

  test('folder filters: one of the caller’s folders, or root', async () => {
    const all = newestFirst(await records(live()));
    assertFeed(await get(carol, `/files?folder=${folderId}`), feedLines('File list', '/files', all.filter((f) => f.folderId === folderId).map(fileEntry)));
    const root = all.filter((f) => f.folderId === null);
    assert.equal(root.length, 6);
    assertFeed(await get(carol, '/files?folder=root'), feedLines('File list', '/files', root.map(fileEntry)));
    assertFeed(await get(carol, '/files?folder=root&status=B'), feedLines('File list', '/files', root.filter((f) => f.status === 'B').map(fileEntry)));
  });

  test('another account’s folder is 403, an unknown or malformed one 404, an empty one 400', async () => {
    const bobsFolder = await newFolder(bob, 'private');
    await move(bob, bobsFolder, [bobFile]);
    const foreign = await get(carol, `/files?folder=${bobsFolder}`);
    assertAtomError(foreign, 403, 'errorPermissionDenied');
    assert.ok(!foreign.body.includes(bobFile));
    assertAtomError(await get(carol, '/files?folder=NOSUCHDIR0'), 404, 'errorFolderNotFound');
    assertAtomError(await get(carol, '/files?folder=not-an-id'), 404, 'errorFolderNotFound');
    assertAtomError(await get(carol, '/files?folder=ROOT'), 404, 'errorFolderNotFound');
    assertAtomError(await get(carol, '/files?folder='), 400, 'errorBadRequest');
  });

  test('bad status values are 400 errorBadRequest in Atom (deleted files are gone for the API)', async () => {
    for (const status of ['D', 'A,D', 'X', '', 'A,', 'active']) {
      const response = await get(carol, `/files?status=${encodeURIComponent(status)}`);
      assertAtomError(response, 400, 'errorBadRequest');
      assert.match(response.body, /<link rel="self" href="\/files"\/>\n<\/feed>\n$/);
    }
    assertAtomError(await get(carol, '/files?status=A&status=B'), 400, 'errorBadRequest');
  });

  test('bad limits are 400 errorBadRequest in Atom; 1 and 500 are fine', async () => {
    for (const limit of ['0', '501', '-1', 'abc', '1.5', '', '1e2', '99999', ' 5', '0x10']) {
      assertAtomError(await get(carol, `/files?limit=${encodeURIComponent(limit)}`), 400, 'errorBadRequest', /limit/);
    }
    assertAtomError(await get(carol, '/files?limit=5&limit=6'), 400, 'errorBadRequest');
    const all = newestFirst(await records(live()));
    assertFeed(await get(carol, '/files?limit=500'), feedLines('File list', '/files', all.map(fileEntry)));
    assertFeed(await get(carol, '/files?limit=1'), feedLines('File list', '/files', [fileEntry(all[0]!)], '/files?limit=1&cursor={cursor}'));
  });

  test('bad cursors are 400 errorBadRequest in Atom, never a 500', async () => {
    const page = assertFeed(
      await get(carol, '/files?limit=1'),
      feedLines('File list', '/files', [fileEntry(newestFirst(await records(live()))[0]!)], '/files?limit=1&cursor={cursor}'),
    );
    const good = page.cursor!;
    const b64 = (text: string) => Buffer.from(text).toString('base64url');
    const folderCursor = (await listFolderCursor(carol)) ?? b64(`d:1:${folderId}`);
    const cursors = [
      '',
      'garbage!',
      'AAAA',
      '%00',
      'x'.repeat(10_000),
      `${good}A`,
      good.slice(0, -1),
      b64('f:1:short'),
      b64('f:-1:AAAAAAAAAA'),
      b64('f:99999999999999999999:AAAAAAAAAA'),
      b64('f:1:AAAAAAAAAA:extra'),
      b64('x:1:AAAAAAAAAA'),
      b64("f:1:' OR 1=1 --"),
      folderCursor,
      '{"createdAt":1}',
    ];
    for (const cursor of cursors) {
      const response = await get(carol, `/files?cursor=${encodeURIComponent(cursor)}`);
      assertAtomError(response, 400, 'errorBadRequest', /cursor/);
    }
    assertAtomError(await get(carol, `/files?cursor=${good}&cursor=${good}`), 400, 'errorBadRequest');
    // A well-formed position that names no file is just a position.
    const all = newestFirst(await records(live()));
    const position = b64(`f:${all[2]!.createdAt}:ZZZZZZZZZZ`);
    assertFeed(
      await get(carol, `/files?cursor=${position}`),
      feedLines('File list', '/files', all.filter((f) => f.createdAt <= all[2]!.createdAt).map(fileEntry)),
    );
  });

  test('without an API key 401 Wrong apikey; GET is on /files only, /file stays the upload alias', async () => {
    assertAtomError(await get(null, '/files'), 401, 'errorPermissionDenied', 'Wrong apikey');
    assertAtomError(await read(await srv.fetch('/files', { headers: { Authorization: 'A'.repeat(32) } })), 401, 'errorPermissionDenied', 'Wrong apikey');
    const alias = await get(carol, '/file');
    assertAtomError(alias, 405, 'errorMethodNotAllowed');
    assert.equal(alias.headers.get('allow'), 'POST');
    const put = await read(await srv.fetch('/files', { method: 'PUT', headers: { Authorization: carol.key } }));
    assertAtomError(put, 405, 'errorMethodNotAllowed');
    assert.deepEqual((put.headers.get('allow') ?? '').split(', ').sort(), ['GET', 'HEAD', 'POST']);
    const head = await srv.fetch('/files', { method: 'HEAD', headers: { Authorization: carol.key } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), ATOM_TYPE);
  });
});

/** The cursor of a folders page, to show it is refused by /files (null when the account has < 2 folders). */
async function listFolderCursor(account: TestAccount): Promise<string | null> {
  await newFolder(account, 'cursor probe 1');
  await newFolder(account, 'cursor probe 2');
  const body = (await get(account, '/folders?limit=1')).body;
  return /<link rel="next" href="\/folders\?limit=1&amp;cursor=([A-Za-z0-9_-]+)"\/>/.exec(body)?.[1] ?? null;
}

// ---------------------------------------------------------------------------------------
// Pagination

describe('GET /files pagination', () => {
  test('23 files, limit 5: every file exactly once, in order, even with uploads between pages', async () => {
    const dave = await freshAccount();
    const made: string[] = [];
    clock.set('2026-11-22T08:00:00Z');
    for (let i = 0; i < 23; i++) {
      // Groups of three share an instant, so ties fall across page boundaries too.
      if (i % 3 === 0) clock.advance(60_000);
      made.push(await upload(dave, `page file ${String(i).padStart(2, '0')}.txt`, `content ${i}`));
    }
    const expected = newestFirst(await records(made));
    clock.set('2026-11-22T12:00:00Z');

    const seen: string[] = [];
    let path = '/files?limit=5';
    const sizes: number[] = [];
    for (let pageNo = 0; pageNo < 10; pageNo++) {
      const slice = expected.slice(pageNo * 5, pageNo * 5 + 5);
      const last = pageNo * 5 + 5 >= expected.length;
      const { cursor, atom } = assertFeed(
        await get(dave, path),
        feedLines('File list', '/files', slice.map(fileEntry), last ? undefined : '/files?limit=5&cursor={cursor}'),
      );
      const entries = atom.feed.entry === undefined ? [] : [atom.feed.entry].flat();
      sizes.push(entries.length);
      seen.push(...entries.map((e: { id: string }) => e.id));
      if (last) {
        assert.equal(cursor, undefined, 'no next link on the last page');
        break;
      }
      // Somebody uploads between pages (newer than everything listed so far), and
      // the walk goes on with the cursor it was given.
      clock.advance(1000);
      await upload(dave, `uploaded during page ${pageNo}.txt`, `late ${pageNo}`);
      await upload(dave, `same instant during page ${pageNo}.txt`, `late same ${pageNo}`);
      path = `/files?limit=5&cursor=${cursor}`;
    }
    assert.deepEqual(sizes, [5, 5, 5, 5, 3]);
    assert.deepEqual(
      seen,
      expected.map((f) => f.id),
      'every original file exactly once, newest first',
    );
    assert.equal(new Set(seen).size, 23);
  });

  test('a page size dividing the count exactly has no empty trailing page; filters ride along in the next link', async () => {
    const erin = await freshAccount();
    const folder = await newFolder(erin, 'ten');
    clock.set('2026-11-23T08:00:00Z');
    const made: string[] = [];
    for (let i = 0; i < 10; i++) {
      clock.advance(1000);
      made.push(await upload(erin, `ten ${i}.txt`, `ten ${i}`));
    }
    await move(erin, folder, made);
    const outside = await upload(erin, 'outside.txt');
    const expected = newestFirst(await records(made));
    const first = assertFeed(
      await get(erin, `/files?folder=${folder}&status=A&limit=5`),
      feedLines('File list', '/files', expected.slice(0, 5).map(fileEntry), `/files?status=A&folder=${folder}&limit=5&cursor={cursor}`),
    );
    const second = assertFeed(
      await get(erin, `/files?status=A&folder=${folder}&limit=5&cursor=${first.cursor}`),
      feedLines('File list', '/files', expected.slice(5).map(fileEntry)),
    );
    assert.equal(second.cursor, undefined);
    assert.ok(!JSON.stringify(second.atom).includes(outside));
  });

  test('a file deleted between pages is skipped, nothing repeats; the next link carries no default parameters', async () => {
    const fay = await freshAccount();
    clock.set('2026-11-24T08:00:00Z');
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      clock.advance(1000);
      made.push(await upload(fay, `seven ${i}.txt`, `seven ${i}`));
    }
    const expected = newestFirst(await records(made));
    await srv.server.services.store.files.setStatus(expected[0]!.id, ['A'], 'B', clock.now);
    const blockedFirst = newestFirst(await records(made));
    const first = assertFeed(
      await get(fay, '/files?limit=3'),
      feedLines('File list', '/files', blockedFirst.slice(0, 3).map(fileEntry), '/files?limit=3&cursor={cursor}'),
    );
    const gone = expected[4]!.id;
    assert.equal((await read(await srv.fetch(`/files/${gone}`, { method: 'DELETE', headers: { Authorization: fay.key } }))).status, 200);
    const rest = newestFirst(await records(made))
      .slice(3)
      .filter((f) => f.id !== gone);
    assertFeed(await get(fay, `/files?limit=3&cursor=${first.cursor}`), feedLines('File list', '/files', rest.map(fileEntry)));
  });
});

// ---------------------------------------------------------------------------------------
// GET /folders

describe('GET /folders', () => {
  let gil: TestAccount;
  let folders: { top: string; kid: string; empty: string; grandkid: string };
  let files: { a: string; b: string; blocked: string; deleted: string; root: string };

  before(async () => {
    gil = await freshAccount();
    clock.set('2026-11-25T08:00:00Z');
    const top = await newFolder(gil, 'Top & <stuff>');
    clock.advance(1000);
    const kid = await newFolder(gil, 'Kid', top);
    clock.advance(1000);
    const empty = await newFolder(gil, 'Empty');
    clock.advance(1000);
    const grandkid = await newFolder(gil, 'Grandkid', kid);
    folders = { top, kid, empty, grandkid };
    files = {
      a: await upload(gil, 'a.txt', 'a'.repeat(100)),
      b: await upload(gil, 'b.txt', 'b'.repeat(20)),
      blocked: await upload(gil, 'blocked.txt', 'c'.repeat(7)),
      deleted: await upload(gil, 'deleted.txt', 'd'.repeat(5)),
      root: await upload(gil, 'root.txt', 'e'.repeat(3)),
    };
    await move(gil, top, [files.a, files.b, files.blocked, files.deleted]);
    await srv.server.services.files.block(files.blocked);
    assert.equal((await read(await srv.fetch(`/files/${files.deleted}`, { method: 'DELETE', headers: { Authorization: gil.key } }))).status, 200);
    await move(bob, await newFolder(bob, 'bob folder'), [await upload(bob, 'bob in folder.txt')]);
    clock.set('2026-11-25T10:00:00Z');
  });

  /** Entries for folders, with totals computed from the file records of the test. */
  async function expectedFolders(ids: string[]): Promise<string[][]> {
    const all = await records(Object.values(files));
    const list = newestFirst(await Promise.all(ids.map(folderRecord)));
    return list.map((folder) => {
      const active = all.filter((f) => f.folderId === folder.id && f.status === 'A');
      return folderEntry(
        folder,
        active.length,
        active.reduce((sum, f) => sum + f.size, 0),
      );
    });
  }

  test('lists the caller’s folders newest first with active file counts and bytes, every line exact', async () => {
    const expected = await expectedFolders(Object.values(folders));
    const response = await get(gil, '/folders');
    const { atom } = assertFeed(response, feedLines('Folder list', '/folders', expected));
    assert.equal(atom.feed.entry.length, 4);
    // Literal checks of what the records imply: two active files of 100 and 20 bytes in Top.
    assert.ok(
      response.body.includes(
        `    <title>Top &amp; &lt;stuff&gt;</title>\n    <ed:parent></ed:parent>\n    <link title="folder_link" href="${WEB_URL}/folder/${folders.top}" rel="enclosure" length="120"/>\n    <ed:files>2</ed:files>\n`,
      ),
    );
    assert.ok(response.body.includes(`    <ed:parent>${folders.kid}</ed:parent>\n`));
    const bobs = await get(bob, '/folders');
    for (const id of Object.values(folders)) assert.ok(!bobs.body.includes(id), 'another account’s folders never appear');
    assert.ok(!response.body.includes('bob folder'));
  });

  test('an account without folders gets an empty feed', async () => {
    assertFeed(await get(await freshAccount(), '/folders'), feedLines('Folder list', '/folders', []));
  });

  test('parent filters: root, or one of the caller’s folders', async () => {
    assertFeed(await get(gil, '/folders?parent=root'), feedLines('Folder list', '/folders', await expectedFolders([folders.top, folders.empty])));
    assertFeed(await get(gil, `/folders?parent=${folders.top}`), feedLines('Folder list', '/folders', await expectedFolders([folders.kid])));
    assertFeed(await get(gil, `/folders?parent=${folders.kid}`), feedLines('Folder list', '/folders', await expectedFolders([folders.grandkid])));
    assertFeed(await get(gil, `/folders?parent=${folders.empty}`), feedLines('Folder list', '/folders', []));
  });

  test('another account’s parent is 403, unknown 404, empty 400; bad limit and cursor 400; no key 401', async () => {
    const bobsFolder = await newFolder(bob, 'bob parent');
    assertAtomError(await get(gil, `/folders?parent=${bobsFolder}`), 403, 'errorPermissionDenied');
    assertAtomError(await get(gil, '/folders?parent=NOSUCHDIR0'), 404, 'errorFolderNotFound');
    assertAtomError(await get(gil, '/folders?parent='), 400, 'errorBadRequest');
    for (const limit of ['0', '501', 'x', '']) assertAtomError(await get(gil, `/folders?limit=${limit}`), 400, 'errorBadRequest', /limit/);
    // A files cursor is not a folders cursor.
    const fileCursor = /cursor=([A-Za-z0-9_-]+)"/.exec((await get(gil, '/files?limit=1')).body)?.[1];
    assert.ok(fileCursor);
    for (const cursor of [fileCursor, 'garbage!', 'AAAA', Buffer.from('d:1:bad').toString('base64url')]) {
      assertAtomError(await get(gil, `/folders?cursor=${encodeURIComponent(cursor)}`), 400, 'errorBadRequest', /cursor/);
    }
    assertAtomError(await get(null, '/folders'), 401, 'errorPermissionDenied', 'Wrong apikey');
    const del = await read(await srv.fetch('/folders', { method: 'DELETE', headers: { Authorization: gil.key } }));
    assertAtomError(del, 405, 'errorMethodNotAllowed');
    assert.deepEqual((del.headers.get('allow') ?? '').split(', ').sort(), ['GET', 'HEAD', 'POST']);
  });

  test('12 folders, limit 5: every folder exactly once, even with folders created between pages', async () => {
    const hal = await freshAccount();
    clock.set('2026-11-26T08:00:00Z');
    const made: string[] = [];
    for (let i = 0; i < 12; i++) {
      if (i % 2 === 0) clock.advance(1000);
      made.push(await newFolder(hal, `folder ${i}`));
    }
    const expected = newestFirst(await Promise.all(made.map(folderRecord)));
    const seen: string[] = [];
    let path = '/folders?parent=root&limit=5';
    for (let pageNo = 0; pageNo < 5; pageNo++) {
      const slice = expected.slice(pageNo * 5, pageNo * 5 + 5);
      const last = pageNo === 2;
      const { cursor } = assertFeed(
        await get(hal, path),
        feedLines(
          'Folder list',
          '/folders',
          slice.map((f) => folderEntry(f, 0, 0)),
          last ? undefined : '/folders?parent=root&limit=5&cursor={cursor}',
        ),
      );
      seen.push(...slice.map((f) => f.id));
      if (last) {
        assert.equal(cursor, undefined);
        break;
      }
      clock.advance(1000);
      await newFolder(hal, `made during page ${pageNo}`);
      path = `/folders?parent=root&limit=5&cursor=${cursor}`;
    }
    assert.deepEqual(
      seen,
      expected.map((f) => f.id),
    );
  });
});
