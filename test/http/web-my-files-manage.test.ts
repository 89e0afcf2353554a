import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { Browser, csrfOf, type Page, setCookieFor } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Managing "My files" without JavaScript: search, sort and their pages, list and grid with
// thumbnails, renaming files, folders renamed, left and deleted, names kept apart among
// siblings (races included), and another account's files and folders refused. Runs on
// both setups (SQLite + data folder, PostgreSQL + S3).

const MY = '/my/files';

function html(p: Page, status: number): string {
  assert.equal(p.status, status, p.body);
  assert.equal(p.response.headers.get('content-type'), 'text/html; charset=utf-8');
  return p.body;
}

function redirect(p: Page, location: string): void {
  assert.equal(p.status, 303, p.body);
  assert.equal(p.response.headers.get('location'), location);
}

/** File names of a list page, in the order shown. */
const namesOf = (body: string) => [...body.matchAll(/<a class="file-name" href="[^"]+"><bdi>([^<]*)<\/bdi><\/a>/g)].map((m) => m[1]!);
/** The next-page link of a list page, or undefined. */
const nextOf = (body: string) => /<a href="([^"]+)">(?:Older files|Next page)<\/a>/.exec(body)?.[1]?.replaceAll('&amp;', '&');
/** A folder's id from its entry in a folder list. */
const folderIdOf = (body: string, name: string) =>
  new RegExp(`<a class="folder-name" href="/my/files\\?folder=([A-Z0-9]{10})"><bdi>${name}</bdi></a>`).exec(body)?.[1];

describe('my files: search, sort, rename, folders', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 });
  });
  after(() => t.close());

  async function signedIn() {
    const user = await t.account();
    const b = new Browser(t.url);
    redirect(await b.signIn(user.login, user.password), '/accounts/profile/misc');
    const csrf = csrfOf(html(await b.get(MY), 200))!;
    /** Uploads through the API; the file's id. */
    const upload = async (name: string, content: string | Buffer) => {
      const { response, id } = await t.upload(user.key, name, content);
      assert.equal(response.status, 201);
      return id;
    };
    /** Creates a folder through the web form (in `parent`); its id. */
    const folder = async (name: string, parent?: string) => {
      const p = await b.post(`${MY}/folders`, { csrf, name, ...(parent ? { parent } : {}) });
      assert.equal(p.status, 303, p.body);
      return folderIdOf(html(await b.get(parent ? `${MY}?folder=${parent}` : MY), 200), name)!;
    };
    return { ...user, b, csrf, upload, folder };
  }

  /** The names of the account's files through the API listing (GET /files). */
  async function apiNames(key: string, query = ''): Promise<string[]> {
    const body = await (await t.fetch(`/files${query}${query ? '&' : '?'}limit=500`, { headers: { Authorization: key } })).text();
    return [...body.matchAll(/<entry>[\s\S]*?<title>([^<]*)<\/title>/g)].map((m) => m[1]!);
  }

  /** Every page of a list, following the next links; the names in order. */
  async function walk(b: Browser, first: string): Promise<string[]> {
    const names: string[] = [];
    for (let url: string | undefined = first, pages = 0; url; pages++) {
      assert.ok(pages < 20, 'the pages never end');
      const body = html(await b.get(url), 200);
      names.push(...namesOf(body));
      url = nextOf(body);
    }
    return names;
  }

  test('search by name: case-insensitive, % and _ literal, within a folder, escaped, paged', async () => {
    const { b, upload, folder, csrf } = await signedIn();
    for (const name of ['Report 2026.pdf', 'report-draft.txt', 'holiday.jpg', '100%_done.txt', '100 done.txt']) await upload(name, name);
    const found = html(await b.get(`${MY}?q=REPORT`), 200);
    assert.deepEqual(namesOf(found).sort(), ['Report 2026.pdf', 'report-draft.txt']);
    assert.match(found, /Files named like “<bdi>REPORT<\/bdi>”/);
    assert.match(found, /<input type="search" name="q" value="REPORT"/);
    assert.deepEqual(namesOf(html(await b.get(`${MY}?q=${encodeURIComponent('%_')}`), 200)), ['100%_done.txt']);
    assert.match(html(await b.get(`${MY}?q=nothing-like-this`), 200), /No file names match\./);
    const hostile = '<b>"x"</b>';
    const body = html(await b.get(`${MY}?q=${encodeURIComponent(hostile)}`), 200);
    assert.ok(!body.includes('<b>"x"</b>') && body.includes('&lt;b&gt;&quot;x&quot;&lt;/b&gt;'), 'the search text is escaped');

    // In a folder: only its files.
    const reports = await folder('Reports');
    const [draft] = [...html(await b.get(`${MY}?q=draft`), 200).matchAll(/<li class="file" data-file="([A-Z0-9]{10})"/g)].map((m) => m[1]!);
    redirect(await b.post(`${MY}/move`, { csrf, file: draft!, folder: reports }), `${MY}?note=moved`);
    assert.deepEqual(namesOf(html(await b.get(`${MY}?folder=${reports}&q=report`), 200)), ['report-draft.txt']);

    // 55 matches come in pages; the search stays in the next link.
    for (let i = 0; i < 55; i++) await upload(`match-${String(i).padStart(2, '0')}.txt`, 'm');
    const first = html(await b.get(`${MY}?q=match-`), 200);
    assert.match(nextOf(first) ?? '', /^\/my\/files\?q=match-&cursor=/);
    assert.equal((await walk(b, `${MY}?q=match-`)).length, 55);
    html(await b.get(`${MY}?q=${'x'.repeat(256)}`), 400);
  });

  test('sort by name, size and date, both ways; pages keep the order through equal keys and never repeat', async () => {
    const { b, upload } = await signedIn();
    // 56 files: sizes repeat (ties broken by id), names mix case.
    const files: Array<{ name: string; size: number; order: number }> = [];
    for (let i = 0; i < 56; i++) {
      const name = `${i % 2 === 0 ? 'File' : 'file'}-${String((i * 37) % 56).padStart(2, '0')}.bin`;
      const size = 1 + (i % 5);
      await upload(name, 'x'.repeat(size));
      files.push({ name, size, order: i });
    }
    const byName = [...files].sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1)).map((f) => f.name);
    assert.deepEqual(await walk(b, `${MY}?sort=name-asc`), byName);
    assert.deepEqual(await walk(b, `${MY}?sort=name-desc`), [...byName].reverse());
    assert.deepEqual(
      await walk(b, `${MY}?sort=date-asc`),
      files.map((f) => f.name),
    );
    assert.deepEqual(await walk(b, MY), files.map((f) => f.name).reverse());
    for (const sort of ['size-asc', 'size-desc']) {
      const seen = await walk(b, `${MY}?sort=${sort}`);
      assert.equal(new Set(seen).size, 56, `${sort}: every file once`);
      const sizes = seen.map((name) => files.find((f) => f.name === name)!.size);
      const sorted = [...sizes].sort((x, y) => (sort === 'size-asc' ? x - y : y - x));
      assert.deepEqual(sizes, sorted, sort);
    }
    const page = html(await b.get(`${MY}?sort=size-asc`), 200);
    assert.match(page, /<option value="size-asc" selected>Smallest first<\/option>/);
    assert.match(nextOf(page) ?? '', /^\/my\/files\?sort=size-asc&cursor=[A-Za-z0-9_-]+$/);
    // A cursor of one order is refused by another; unknown orders too.
    const cursor = /cursor=([A-Za-z0-9_-]+)/.exec(nextOf(page)!)![1];
    html(await b.get(`${MY}?sort=name-asc&cursor=${cursor}`), 400);
    html(await b.get(`${MY}?sort=bogus`), 400);
  });

  test('list and grid: the choice is remembered; thumbnails are lazy and sized; a ZIP link per folder', async () => {
    const { b, upload, folder } = await signedIn();
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    const image = await upload('photo.png', png);
    const text = await upload('notes.txt', 'notes');
    const photos = await folder('Photos');

    const list = html(await b.get(MY), 200);
    assert.match(
      list,
      new RegExp(
        `<li class="file with-thumb" data-file="${image}">\\n<img class="thumb" src="(/thumb/${image}/[^"]+)" alt="" width="48" height="48" loading="lazy" decoding="async">`,
      ),
    );
    assert.match(list, new RegExp(`<li class="file" data-file="${text}">`), 'no thumbnail for a text file in the list');
    assert.ok(list.includes(`<a class="zip-link" href="/folder/${photos}/zip" download title="Download Photos as ZIP">ZIP</a>`), list);
    assert.match(list, /<a class="button small" href="\/my\/files\?view=list" aria-current="true">List<\/a>/);

    const grid = await b.get(`${MY}?view=grid`);
    const cookie = setCookieFor(grid, 'fh_files_view');
    assert.equal(cookie?.value, 'grid');
    assert.equal(cookie?.attributes.get('path'), MY);
    // Remembered: the next plain visit is the grid; every active file has its image (an icon for non-images).
    const remembered = html(await b.get(MY), 200);
    assert.match(remembered, /<ul class="file-grid">/);
    const thumbs = [...remembered.matchAll(/<img src="(\/thumb\/[^"]+)" alt="" width="256" height="256" loading="lazy" decoding="async">/g)].map((m) => m[1]!);
    assert.equal(thumbs.length, 2);
    const thumb = await b.get(thumbs.find((src) => src.includes(image))!);
    assert.equal(thumb.status, 200);
    assert.equal(thumb.response.headers.get('content-type'), 'image/webp');
    html(await b.get(`${MY}?view=table`), 400);
    html(await b.get(`${MY}?view=list`), 200);
    assert.match(html(await b.get(MY), 200), /<ul class="file-list">/);
  });

  test('rename a file: cleaned like an upload name, blacklisted names refused, back to the list it came from', async () => {
    const { b, csrf, key, upload } = await signedIn();
    const id = await upload('draft.txt', 'draft');
    const body = html(await b.get(`${MY}?sort=name-asc`), 200);
    assert.ok(body.includes(`<input name="name" value="draft.txt" required maxlength="255" autocomplete="off" aria-label="New name for draft.txt">`), body);
    assert.ok(body.includes('<input type="hidden" name="back" value="/my/files?sort=name-asc">'), body);

    redirect(
      await b.post(`${MY}/rename`, { csrf, file: id, name: '  dir/final\u202e.txt ', back: '/my/files?sort=name-asc' }),
      '/my/files?sort=name-asc&note=renamed',
    );
    assert.deepEqual(await apiNames(key), ['final.txt']);
    assert.match(html(await b.get(`${MY}?note=renamed`), 200), /The file was renamed\./);
    // A back field that leaves My files is ignored.
    redirect(await b.post(`${MY}/rename`, { csrf, file: id, name: 'final.txt', back: '//evil.example/my/files' }), `${MY}?note=renamed`);

    await t.server.services.moderation.addNamePattern('*.exe');
    assert.match(html(await b.post(`${MY}/rename`, { csrf, file: id, name: 'setup.exe' }), 403), /does not accept that file name/);
    html(await b.post(`${MY}/rename`, { csrf, file: id, name: '   ' }), 400);
    assert.equal((await b.post(`${MY}/rename`, { file: id, name: 'x.txt' })).status, 403, 'no CSRF token');
    assert.deepEqual(await apiNames(key), ['final.txt']);
  });

  test('file names among siblings: a taken name offers "name (2)", which one press takes; other folders may repeat it', async () => {
    const { b, csrf, upload, folder, key } = await signedIn();
    const first = await upload('photo.jpg', 'one');
    const second = await upload('beach.jpg', 'two');
    await upload('photo (2).jpg', 'three');
    const taken = html(await b.post(`${MY}/rename`, { csrf, file: second, name: 'photo.jpg' }), 409);
    assert.match(taken, /<h1>“<bdi>photo\.jpg<\/bdi>” is taken<\/h1>/);
    assert.ok(taken.includes('<input id="free-name" name="name" value="photo (3).jpg"'), taken);
    assert.ok(taken.includes(`<input type="hidden" name="file" value="${second}">`));
    redirect(await b.post(`${MY}/rename`, { csrf, file: second, name: 'photo (3).jpg' }), `${MY}?note=renamed`);
    // Renaming to its own name is no clash; a file in a folder may share a name with one at the top.
    redirect(await b.post(`${MY}/rename`, { csrf, file: first, name: 'photo.jpg' }), `${MY}?note=renamed`);
    const album = await folder('Album');
    redirect(await b.post(`${MY}/move`, { csrf, file: second, folder: album }), `${MY}?note=moved`);
    redirect(await b.post(`${MY}/rename`, { csrf, file: second, name: 'photo.jpg' }), `${MY}?note=renamed`);
    // The API still allows repeated names (SPEC.md): an upload of the same name is kept.
    assert.equal((await t.upload(key, 'photo.jpg', 'four')).response.status, 201);
  });

  test('two renames racing for one name: exactly one wins, every time', async () => {
    const { b, csrf, upload, key } = await signedIn();
    for (let round = 0; round < 6; round++) {
      const a = await upload(`a-${round}.txt`, 'a');
      const c = await upload(`c-${round}.txt`, 'c');
      const name = `same-${round}.txt`;
      const [one, two] = await Promise.all([b.post(`${MY}/rename`, { csrf, file: a, name }), b.post(`${MY}/rename`, { csrf, file: c, name })]);
      assert.deepEqual([one.status, two.status].sort(), [303, 409], `round ${round}`);
      assert.equal((await apiNames(key)).filter((n) => n === name).length, 1, `round ${round}: one file named ${name}`);
    }
  });

  test('two folder creations or renames racing for one name: exactly one wins', async () => {
    const { b, csrf, folder } = await signedIn();
    for (let round = 0; round < 4; round++) {
      const name = `New ${round}`;
      const created = await Promise.all([b.post(`${MY}/folders`, { csrf, name }), b.post(`${MY}/folders`, { csrf, name })]);
      assert.deepEqual(created.map((p) => p.status).sort(), [303, 409], `create, round ${round}`);
      const x = await folder(`x${round}`);
      const y = await folder(`y${round}`);
      const target = `Renamed ${round}`;
      const renamed = await Promise.all([
        b.post(`${MY}/folders/rename`, { csrf, folder: x, name: target }),
        b.post(`${MY}/folders/rename`, { csrf, folder: y, name: target }),
      ]);
      assert.deepEqual(renamed.map((p) => p.status).sort(), [303, 409], `rename, round ${round}`);
    }
    const top = html(await b.get(MY), 200);
    for (let round = 0; round < 4; round++) {
      assert.equal(top.split(`<bdi>New ${round}</bdi></a>`).length - 1, 1);
      assert.equal(top.split(`<bdi>Renamed ${round}</bdi></a>`).length - 1, 1);
    }
  });

  test('folders: rename, a taken name offered as "name (2)", delete only when empty, leave moves the content up', async () => {
    const { b, csrf, key, upload, folder } = await signedIn();
    const trips = await folder('Trips');
    const rome = await folder('Rome', trips);
    const oslo = await folder('Oslo', trips);
    const ticket = await upload('ticket.pdf', 'ticket');
    redirect(await b.post(`${MY}/move`, { csrf, file: ticket, folder: trips }), `${MY}?note=moved`);

    const page = html(await b.get(`${MY}?folder=${trips}`), 200);
    assert.ok(page.includes(`<a class="button small secondary" href="/folder/${trips}/zip" download>Download as ZIP</a>`), page);
    assert.match(page, /Move contents up to <bdi>My files<\/bdi>/);

    // Rename; a sibling's name is offered a free variant; the same name next to other parents is fine.
    redirect(await b.post(`${MY}/folders/rename`, { csrf, folder: oslo, name: 'Bergen' }), `${MY}?folder=${oslo}&note=folder-renamed`);
    const taken = html(await b.post(`${MY}/folders/rename`, { csrf, folder: oslo, name: 'Rome' }), 409);
    assert.ok(taken.includes('value="Rome (2)"'), taken);
    const dup = html(await b.post(`${MY}/folders`, { csrf, name: 'Rome', parent: trips }), 409);
    assert.ok(dup.includes(`<input type="hidden" name="parent" value="${trips}">`) && dup.includes('value="Rome (2)"'), dup);
    await folder('Rome');
    html(await b.post(`${MY}/folders/rename`, { csrf, folder: oslo, name: '  ' }), 400);

    // Not empty: a clear refusal, nothing removed.
    const refused = html(await b.post(`${MY}/folders/delete`, { csrf, folder: trips }), 409);
    assert.match(refused, /“Trips” still holds 1 file and 2 folders\. Only an empty folder can be deleted/);

    // Leaving: Rome clashes with the top's Rome, so nothing moves.
    assert.match(html(await b.post(`${MY}/folders/leave`, { csrf, folder: trips }), 409), /The folder “Rome” cannot move up/);
    redirect(await b.post(`${MY}/folders/rename`, { csrf, folder: rome, name: 'Rome 2025' }), `${MY}?folder=${rome}&note=folder-renamed`);
    redirect(await b.post(`${MY}/folders/leave`, { csrf, folder: trips }), `${MY}?folder=${trips}&note=left`);
    const top = html(await b.get(MY), 200);
    assert.ok(folderIdOf(top, 'Rome 2025') === rome && folderIdOf(top, 'Bergen') === oslo, top);
    assert.deepEqual(await apiNames(key, '?folder=root'), ['ticket.pdf']);
    assert.match(html(await b.get(`${MY}?folder=${trips}`), 200), /No files in this folder yet/);

    // Now empty: deleted, back to the parent.
    redirect(await b.post(`${MY}/folders/delete`, { csrf, folder: trips }), `${MY}?note=folder-deleted`);
    html(await b.get(`${MY}?folder=${trips}`), 404);
    // A nested folder's deletion goes back to its parent.
    const inner = await folder('Inner', rome);
    redirect(await b.post(`${MY}/folders/delete`, { csrf, folder: inner }), `${MY}?folder=${rome}&note=folder-deleted`);
  });

  test('a file back to the top', async () => {
    const { b, csrf, key, upload, folder } = await signedIn();
    const id = await upload('loose.txt', 'x');
    const box = await folder('Box');
    redirect(await b.post(`${MY}/move`, { csrf, file: id, folder: box }), `${MY}?note=moved`);
    const inBox = html(await b.get(`${MY}?folder=${box}`), 200);
    assert.ok(inBox.includes('<option value="top">My files (top level)</option>'), inBox);
    redirect(await b.post(`${MY}/move`, { csrf, file: id, folder: 'top', from: box, back: `/my/files?folder=${box}` }), `${MY}?folder=${box}&note=to-top`);
    assert.deepEqual(await apiNames(key, '?folder=root'), ['loose.txt']);
  });

  test("another account's files and folders: every action refused, nothing changed", async () => {
    const owner = await signedIn();
    const id = await owner.upload('mine.txt', 'mine');
    const box = await owner.folder('Box');
    const inner = await owner.folder('Inner', box);
    const intruder = await signedIn();
    const { b, csrf } = intruder;
    html(await b.post(`${MY}/rename`, { csrf, file: id, name: 'yours.txt' }), 403);
    html(await b.post(`${MY}/move`, { csrf, file: id, folder: 'top' }), 403);
    html(await b.post(`${MY}/folders/rename`, { csrf, folder: box, name: 'Yours' }), 403);
    html(await b.post(`${MY}/folders/leave`, { csrf, folder: box }), 403);
    html(await b.post(`${MY}/folders/delete`, { csrf, folder: inner }), 403);
    html(await b.post(`${MY}/folders/delete`, { csrf, folder: 'NOSUCHFOLD' }), 404);
    html(await b.get(`${MY}?folder=${box}&q=x`), 403);
    assert.deepEqual(namesOf(html(await b.get(`${MY}?q=mine`), 200)), [], 'search sees only the own files');
    const page = html(await owner.b.get(`${MY}?folder=${box}`), 200);
    assert.ok(folderIdOf(page, 'Inner') === inner, page);
    assert.deepEqual(await apiNames(owner.key), ['mine.txt']);
  });
});
