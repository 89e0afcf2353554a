import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MY_FILES_SCRIPT } from '../../src/http/web/upload-form.js';
import { Browser, csrfOf, type Page } from '../helpers/browser.js';
import {
  connect,
  eventually,
  fieldPart,
  filePart,
  multipartBody,
  type RawPart,
  type RawResponse,
  rawRequest,
  requestHead,
  writeAll,
} from '../helpers/raw-upload.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// "My files" (/my/files) without JavaScript, at the HTTP level: the page, the streamed
// multi-file upload form, folders, moving, deleting, pages of files, and the limits the
// API upload has (CSRF first, size, upload volume). The browser tests (test/e2e/) drive
// the same pages with the script.

const MY = '/my/files';
const HOSTILE = `<script>alert("x")</script> 'single' "double" & more`;
const KiB = 1024;

/** Asserts an HTML page with the page headers and no inline code; returns the body. */
function page(p: Page | RawResponse, status: number): string {
  const headers = 'response' in p ? Object.fromEntries(p.response.headers) : (p.headers as Record<string, string>);
  assert.equal(p.status, status, p.body);
  assert.equal(headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(headers['cache-control'], 'no-store');
  assert.match(headers['content-security-policy'] ?? '', /script-src 'self'/);
  assert.doesNotMatch(p.body, /<script(?![^>]*\ssrc=)/);
  for (const tag of p.body.match(/<[a-zA-Z][^>]*>/g) ?? []) {
    assert.doesNotMatch(tag.replace(/"[^"]*"/g, '""'), /\s(style|on[a-z]+)=/i, tag);
  }
  return p.body;
}

/** Asserts a 303 to `location`; returns it. */
function redirect(p: Page, location: string | RegExp): string {
  assert.equal(p.status, 303, p.body);
  const at = p.response.headers.get('location') ?? '';
  if (typeof location === 'string') assert.equal(at, location);
  else assert.match(at, location);
  return at;
}

/** Nothing of a hostile value reaches the page as markup. */
function assertEscaped(body: string): void {
  assert.ok(!body.includes('<script>alert'), body);
  assert.ok(!body.includes('"double"'), body);
  assert.ok(!body.includes("'single'"), body);
}

/** Posts an upload form, parts in the given order, as a browser with `b`'s cookies. */
async function postUpload(t: TestServer, b: Browser, parts: RawPart[], accept = 'text/html'): Promise<RawResponse> {
  const boundary = `----filehaven${randomBytes(8).toString('hex')}`;
  const body = multipartBody(boundary, parts);
  const cookie = b.cookieHeader();
  const outcome = await rawRequest(t.url, {
    path: `${MY}/upload`,
    headers: {
      'Content-Type': `multipart/form-data; boundary=${boundary}`,
      'Content-Length': body.length,
      Accept: accept,
      ...(cookie ? { Cookie: cookie } : {}),
    },
    body,
  });
  assert.ok(outcome.response, `no response: ${outcome.error?.message}`);
  return outcome.response;
}

/** The caller's files through the API listing: name → [id, size, folder]. */
async function apiFiles(t: TestServer, key: string, query = ''): Promise<Map<string, { id: string; size: number; folder: string }>> {
  const body = await (await t.fetch(`/files${query}`, { headers: { Authorization: key } })).text();
  const files = new Map<string, { id: string; size: number; folder: string }>();
  for (const entry of body.match(/<entry>[\s\S]*?<\/entry>/g) ?? []) {
    const text = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(entry)?.[1] ?? '';
    files.set(text('title'), { id: text('id'), size: Number(text('ed:size')), folder: text('ed:folder') });
  }
  return files;
}

/** The delete links of an upload results page. */
const deleteLinks = (body: string) => [...body.matchAll(/<a class="delete-link" href="([^"]+)">/g)].map((m) => m[1]!);

describe('my files (no JavaScript)', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000 });
  });
  after(() => t.close());

  /** A new account signed in through the form; its key and a browser holding the session. */
  async function signedIn() {
    const user = await t.account();
    const b = new Browser(t.url);
    redirect(await b.signIn(user.login, user.password), '/accounts/profile/misc');
    const csrf = csrfOf(page(await b.get(MY), 200))!;
    return { ...user, b, csrf };
  }

  test('signed out: the page sends to sign-in; the upload and forms change nothing', async () => {
    const b = new Browser(t.url);
    // Through sign-in, which returns to the page asked for (issue 23, defect 4).
    redirect(await b.get(MY), `/signin?next=${encodeURIComponent(MY)}`);
    redirect(await b.get(`${MY}?folder=AAAAAAAAAA`), `/signin?next=${encodeURIComponent(`${MY}?folder=AAAAAAAAAA`)}`);
    const refused = await postUpload(t, b, [fieldPart('csrf', 'x'), filePart('upload', 'a.txt', 'hello')]);
    assert.match(page(refused, 403), /You are signed out/);
    const json = await postUpload(t, b, [filePart('upload', 'a.txt', 'hello')], 'application/json');
    assert.equal(json.status, 403);
    assert.match(JSON.parse(json.body).error, /signed out/);
    for (const path of [`${MY}/folders`, `${MY}/move`, `${MY}/delete`]) assert.equal((await b.post(path, { csrf: 'x' })).status, 403);
  });

  test('the page: upload form with the token before the file input, links in the header and on the profile', async () => {
    const { b, csrf } = await signedIn();
    const body = page(await b.get(MY), 200);
    assert.ok(body.includes(`<a href="${MY}">My files</a>`), 'header link');
    assert.match(
      body,
      /<form class="upload-form" id="upload-form" method="post" action="\/my\/files\/upload" enctype="multipart\/form-data" data-tus-endpoint="\/uploads" data-account="\d+" data-max-chunk-size="67108864">/,
    );
    assert.ok(body.indexOf(`name="csrf" value="${csrf}"`) < body.indexOf('<input id="upload-files" type="file" name="upload" multiple required>'), body);
    // tus-js-client first (the script uses it for files over 4 MiB), both from the site itself.
    const tusScript =
      /<script src="(\/static\/tus-js-client-[^"]+\.min\.js)" defer><\/script>\n<script src="\/static\/my-files\.[0-9a-f]{16}\.js" defer><\/script>/.exec(
        body,
      )?.[1];
    assert.ok(tusScript, body);
    assert.match(body, /No files yet/);
    assert.match(page(await b.get('/accounts/profile/misc'), 200), /<a href="\/my\/files">My files<\/a>/);
    const script = await t.fetch(MY_FILES_SCRIPT.path);
    assert.equal(script.status, 200);
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
    const tus = await t.fetch(tusScript);
    assert.equal(tus.status, 200);
    assert.match(await tus.text(), /tus/);
  });

  test('a second, different csrf field later in the form changes nothing: the first value counts for every file', async () => {
    const { b, csrf, key } = await signedIn();
    const response = await postUpload(t, b, [
      fieldPart('csrf', csrf),
      filePart('upload', 'first.txt', 'one'),
      fieldPart('csrf', 'forged'),
      filePart('upload', 'second.txt', 'two'),
    ]);
    assert.match(page(response, 200), /<h1>Uploaded 2 files<\/h1>/);
    assert.deepEqual([...(await apiFiles(t, key)).keys()].sort(), ['first.txt', 'second.txt']);
  });

  test('one form uploads several files, each streamed and stored with its links', async () => {
    const { b, csrf, key } = await signedIn();
    const big = randomBytes(300 * KiB);
    const response = await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'photo.bin', big), filePart('upload', 'notes.txt', 'hello notes')]);
    const body = page(response, 200);
    assert.match(body, /<h1>Uploaded 2 files<\/h1>/);
    const files = await apiFiles(t, key);
    assert.deepEqual([...files.keys()].sort(), ['notes.txt', 'photo.bin']);
    assert.equal(files.get('photo.bin')!.size, big.length);
    const downloaded = Buffer.from(await (await fetch(`${t.url}/${files.get('photo.bin')!.id}/photo.bin?download=1`)).arrayBuffer());
    assert.ok(downloaded.equals(big));
    // The delete links are the API's delete_link, shown this once.
    const links = deleteLinks(body);
    assert.equal(links.length, 2);
    assert.match(links[0]!, new RegExp(`^${t.url}/${files.get('photo.bin')!.id}/delete/[0-9a-f]{32}$`));
    assert.equal((await fetch(links[0]!)).status, 200);
    // An empty file input (a part with an empty filename) is no file.
    const none = await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', '', '')]);
    assert.match(page(none, 400), /Choose at least one file/);
  });

  test('one file per request with Accept: application/json (the script)', async () => {
    const { b, csrf } = await signedIn();
    const response = await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'one.txt', 'one')], 'application/json');
    assert.equal(response.status, 201, response.body);
    const answer = JSON.parse(response.body) as { files: Array<Record<string, unknown>> };
    assert.equal(answer.files.length, 1);
    assert.equal(answer.files[0]!.name, 'one.txt');
    assert.equal(answer.files[0]!.size, 3);
    assert.match(String(answer.files[0]!.download), /\/[A-Z0-9]{10}\/one\.txt$/);
    assert.match(String(answer.files[0]!.delete), /\/[A-Z0-9]{10}\/delete\/[0-9a-f]{32}$/);
    const empty = await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'empty.txt', '')], 'application/json');
    assert.equal(empty.status, 400);
    assert.equal(JSON.parse(empty.body).files[0].error, 'The uploaded file is empty');
    // The code lets the script decide about Retry; the reason is said for people.
    assert.equal(JSON.parse(empty.body).files[0].code, 'errorEmptyFile');
    assert.equal(JSON.parse(empty.body).files[0].reason, 'The file is empty (0 B): there is nothing to upload.');
  });

  test('the CSRF token must come first: missing, wrong or after the file, nothing is kept', async () => {
    const { b, csrf, key } = await signedIn();
    for (const parts of [
      [filePart('upload', 'a.txt', 'aaa')],
      [fieldPart('csrf', 'forged'), filePart('upload', 'a.txt', 'aaa')],
      [filePart('upload', 'a.txt', 'aaa'), fieldPart('csrf', csrf)],
    ]) {
      assert.match(page(await postUpload(t, b, parts), 403), /did not come from this site/);
    }
    const json = await postUpload(t, b, [filePart('upload', 'a.txt', 'aaa')], 'application/json');
    assert.equal(json.status, 403);
    assert.equal((await apiFiles(t, key)).size, 0);
  });

  test('a refused file is reported and the others are kept', async () => {
    const { b, csrf, key } = await signedIn();
    const body = page(await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'empty.txt', ''), filePart('upload', 'kept.txt', 'kept')]), 200);
    assert.match(body, /<h1>Uploaded 1 file<\/h1>/);
    assert.match(body, /empty\.txt[\s\S]*The file is empty \(0 B\): there is nothing to upload\./);
    assert.deepEqual([...(await apiFiles(t, key)).keys()], ['kept.txt']);
  });

  test('the results page shows links as people read them; the hrefs stay encoded', async () => {
    const { b, csrf } = await signedIn();
    const body = page(await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'holiday photo «été».txt', 'x')]), 200);
    const link = /<dt>Download link<\/dt><dd><a href="([^"]+)">([^<]+)<\/a>/.exec(body);
    assert.ok(link, body);
    assert.match(link[1]!, /\/[A-Z0-9]{10}\/holiday%20photo%20%C2%AB%C3%A9t%C3%A9%C2%BB\.txt$/);
    assert.equal(link[2], decodeURI(link[1]!));
    assert.match(link[2]!, /\/holiday photo «été»\.txt$/);
  });

  test('hostile file and folder names are escaped everywhere', async () => {
    const { b, csrf, key } = await signedIn();
    redirect(await b.post(`${MY}/folders`, { csrf, name: HOSTILE }), `${MY}?note=folder`);
    assertEscaped(page(await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', `${HOSTILE}.txt`, 'x')]), 200));
    const listing = page(await b.get(MY), 200);
    assertEscaped(listing);
    assert.ok(listing.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &#39;single&#39;'), listing);
    const [name] = [...(await apiFiles(t, key)).keys()];
    const refused = page(await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'empty.txt', '')]), 400);
    assertEscaped(refused);
    assert.ok(name);
  });

  test('folders: create, nest, upload into one, breadcrumb, public link', async () => {
    const { b, csrf, key } = await signedIn();
    redirect(await b.post(`${MY}/folders`, { csrf, name: 'Photos' }), `${MY}?note=folder`);
    const root = page(await b.get(`${MY}?note=folder`), 200);
    assert.match(root, /The folder was created\./);
    const photos =
      /<a class="folder-name" href="\/my\/files\?folder=([A-Z0-9]{10})"><bdi>Photos<\/bdi><\/a> <span class="file-meta">0 files · 0 B<\/span>/.exec(root)?.[1];
    assert.ok(photos, root);
    redirect(await b.post(`${MY}/folders`, { csrf, name: '2026', parent: photos }), `${MY}?folder=${photos}&note=folder`);
    const inPhotos = page(await b.get(`${MY}?folder=${photos}`), 200);
    assert.match(inPhotos, /<nav class="crumbs" aria-label="Folders"><a href="\/my\/files">My files<\/a>/);
    assert.ok(inPhotos.includes(`${t.url}/folder/${photos}`), 'public folder link');
    assert.ok(inPhotos.includes(`<input type="hidden" name="folder" value="${photos}">`), 'the upload form targets the folder');
    const sub = /<a class="folder-name" href="\/my\/files\?folder=([A-Z0-9]{10})"><bdi>2026<\/bdi><\/a>/.exec(inPhotos)?.[1];
    assert.ok(sub, inPhotos);
    const inSub = page(await b.get(`${MY}?folder=${sub}`), 200);
    assert.ok(
      inSub.includes(
        `<a href="/my/files?folder=${photos}"><bdi>Photos</bdi></a> <span aria-hidden="true">›</span> <span aria-current="page"><bdi>2026</bdi></span>`,
      ),
      inSub,
    );

    page(await postUpload(t, b, [fieldPart('csrf', csrf), fieldPart('folder', sub), filePart('upload', 'beach.jpg', 'jpeg bytes')]), 200);
    assert.equal((await apiFiles(t, key)).get('beach.jpg')!.folder, sub);
    assert.match(page(await b.get(`${MY}?folder=${sub}`), 200), /beach\.jpg/);
    // The move menu names folders with their parents.
    page(await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'loose.txt', 'loose')]), 200);
    assert.match(page(await b.get(MY), 200), /<option value="[A-Z0-9]{10}">Photos \/ 2026<\/option>/);

    // Another account's folder is neither a view nor an upload target.
    const other = await signedIn();
    assert.equal(page(await other.b.get(`${MY}?folder=${photos}`), 403).includes('Photos'), false);
    page(await postUpload(t, other.b, [fieldPart('csrf', other.csrf), fieldPart('folder', photos), filePart('upload', 'x.txt', 'x')]), 403);
    assert.equal((await apiFiles(t, other.key)).size, 0);
    page(await other.b.get(`${MY}?folder=NOSUCHFOLD`), 404);
    page(await b.post(`${MY}/folders`, { csrf, name: '   ' }), 400);
  });

  test('move a file into a folder', async () => {
    const { b, csrf, key } = await signedIn();
    page(await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'report.pdf', 'pdf')]), 200);
    redirect(await b.post(`${MY}/folders`, { csrf, name: 'Reports' }), `${MY}?note=folder`);
    const root = page(await b.get(MY), 200);
    const folder = /<option value="([A-Z0-9]{10})">Reports<\/option>/.exec(root)?.[1];
    const file = (await apiFiles(t, key)).get('report.pdf')!.id;
    assert.ok(folder && root.includes(`<input type="hidden" name="file" value="${file}">`), root);

    assert.equal((await b.post(`${MY}/move`, { file, folder })).status, 403, 'no CSRF token');
    page(await b.post(`${MY}/move`, { csrf, file, folder: '' }), 400);
    redirect(await b.post(`${MY}/move`, { csrf, file, folder }), `${MY}?note=moved`);
    assert.equal((await apiFiles(t, key)).get('report.pdf')!.folder, folder);
    const after = page(await b.get(`${MY}?note=moved`), 200);
    assert.match(after, /The file was moved\./);
    assert.ok(after.includes(`· in <a href="/my/files?folder=${folder}"><bdi>Reports</bdi></a>`), after);
    assert.match(page(await b.get(`${MY}?folder=${folder}`), 200), /report\.pdf/);
    assert.match(await (await t.fetch(`/folder/${folder}`)).text(), /report\.pdf/);

    // Another account can move neither into this folder nor this file.
    const other = await signedIn();
    redirect(await other.b.post(`${MY}/folders`, { csrf: other.csrf, name: 'Mine' }), `${MY}?note=folder`);
    const mine = /<a class="folder-name" href="\/my\/files\?folder=([A-Z0-9]{10})"><bdi>Mine<\/bdi><\/a>/.exec(page(await other.b.get(MY), 200))?.[1] ?? '';
    page(await other.b.post(`${MY}/move`, { csrf: other.csrf, file, folder }), 403);
    page(await other.b.post(`${MY}/move`, { csrf: other.csrf, file, folder: mine }), 422);
    assert.equal((await apiFiles(t, key)).get('report.pdf')!.folder, folder);
  });

  test('delete a file: a confirm page, then the file is gone', async () => {
    const { b, csrf, key } = await signedIn();
    page(await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'old.txt', 'old')]), 200);
    const file = (await apiFiles(t, key)).get('old.txt')!.id;

    const other = await signedIn();
    page(await other.b.post(`${MY}/delete`, { csrf: other.csrf, file, confirm: 'yes' }), 403);
    assert.equal((await b.post(`${MY}/delete`, { file, confirm: 'yes' })).status, 403, 'no CSRF token');

    const confirm = page(await b.post(`${MY}/delete`, { csrf, file }), 200);
    assert.match(confirm, /<h1>Delete “<bdi>old\.txt<\/bdi>”\?<\/h1>/);
    assert.ok(confirm.includes('<input type="hidden" name="confirm" value="yes">'));
    assert.equal((await apiFiles(t, key)).size, 1, 'nothing deleted before the confirmation');
    redirect(await b.post(`${MY}/delete`, { csrf, file, confirm: 'yes' }), `${MY}?note=deleted`);
    assert.equal((await apiFiles(t, key)).size, 0);
    assert.match(page(await b.get(`${MY}?note=deleted`), 200), /The file was deleted\.[\s\S]*No files yet/);
    page(await b.post(`${MY}/delete`, { csrf, file, confirm: 'yes' }), 404);
  });

  test('a blocked file is listed as blocked', async () => {
    const { b, csrf, key } = await signedIn();
    page(await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'bad.bin', 'bad')]), 200);
    await t.server.services.files.block((await apiFiles(t, key)).get('bad.bin')!.id);
    assert.match(page(await b.get(MY), 200), /bad\.bin[\s\S]*<span class="status blocked">Blocked<\/span>/);
  });

  test('many files come in pages of 50, newest first', async () => {
    const { b, key } = await signedIn();
    for (let i = 1; i <= 51; i++) assert.equal((await t.upload(key, `file-${String(i).padStart(2, '0')}.txt`, `content ${i}`)).response.status, 201);
    const first = page(await b.get(MY), 200);
    assert.equal(first.match(/<li class="file"/g)?.length, 50);
    assert.ok(first.indexOf('file-51.txt') < first.indexOf('file-50.txt'));
    assert.ok(!first.includes('file-01.txt'));
    const next = /<a href="(\/my\/files\?cursor=[A-Za-z0-9_-]+)">Older files<\/a>/.exec(first)?.[1];
    assert.ok(next, first);
    const second = page(await b.get(next), 200);
    assert.equal(second.match(/<li class="file"/g)?.length, 1);
    assert.match(second, /file-01\.txt/);
    assert.ok(second.includes('<a href="/my/files">Newest files</a>'));
    assert.ok(!second.includes('Older files'));
    page(await b.get(`${MY}?cursor=bogus`), 400);
    page(await b.get(`${MY}?folder=A&folder=B`), 400);
  });
});

describe('my files upload limits', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ maxFileSize: 64 * KiB, uploadVolumeFree: 100 * KiB });
  });
  after(() => t.close());

  test('the page states the limits in human sizes (and as numbers for the script); the volume left goes down', async () => {
    const user = await t.account();
    const b = new Browser(t.url);
    await b.signIn(user.login, user.password);
    const limitsLine = (body: string) => /<p class="hint upload-limits" id="upload-limits"([^>]*)>([^<]*)<\/p>/.exec(body);
    const before = limitsLine(page(await b.get(MY), 200));
    assert.ok(before, 'the limits line');
    assert.equal(before[1], ` data-max-file-size="${64 * KiB}" data-volume-left="${100 * KiB}" data-volume-limit="${100 * KiB}"`);
    assert.equal(before[2], 'Up to 64.0 KiB per file · 100.0 KiB of 100.0 KiB upload volume left (rolling 24 hours)');
    const csrf = csrfOf((await b.get(MY)).body)!;
    assert.equal((await postUpload(t, b, [fieldPart('csrf', csrf), filePart('upload', 'forty.bin', randomBytes(40 * KiB))], 'application/json')).status, 201);
    const after = limitsLine(page(await b.get(MY), 200));
    assert.match(after?.[1] ?? '', new RegExp(` data-volume-left="${60 * KiB}"`));
    assert.equal(after?.[2], 'Up to 64.0 KiB per file · 60.0 KiB of 100.0 KiB upload volume left (rolling 24 hours)');
  });

  test('a file over the size limit ends the form: earlier files are kept, nothing of it', async () => {
    const user = await t.account();
    const b = new Browser(t.url);
    await b.signIn(user.login, user.password);
    const csrf = csrfOf((await b.get(MY)).body)!;
    const response = await postUpload(t, b, [
      fieldPart('csrf', csrf),
      filePart('upload', 'small.txt', 'small'),
      filePart('upload', 'huge.bin', randomBytes(80 * KiB)),
      filePart('upload', 'after.txt', 'after'),
    ]);
    const body = page(response, 413);
    // In words and human sizes, not the API's "limit of 65536 bytes".
    assert.match(body, /The file is larger than the limit of 64\.0 KiB per file\./);
    assert.doesNotMatch(body, /65536/);
    assert.match(body, /small\.txt/);
    assert.deepEqual([...(await apiFiles(t, user.key)).keys()], ['small.txt']);
    assert.ok(await eventually(async () => (await t.storage.leftovers()).length === 0), `left behind: ${(await t.storage.leftovers()).join(', ')}`);
  });

  test('a browser that goes away mid-file leaves nothing of that file', async () => {
    const user = await t.account();
    const b = new Browser(t.url);
    await b.signIn(user.login, user.password);
    const csrf = csrfOf((await b.get(MY)).body)!;
    const boundary = 'cut-short-boundary';
    const body = multipartBody(
      boundary,
      [fieldPart('csrf', csrf), filePart('upload', 'whole.txt', 'whole'), filePart('upload', 'cut.bin', randomBytes(40 * KiB))],
      { closing: false },
    );
    const socket = await connect(t.url);
    const head = requestHead('POST', `${MY}/upload`, new URL(t.url).host, {
      'Content-Type': `multipart/form-data; boundary=${boundary}`,
      'Content-Length': body.length + 1000,
      Cookie: b.cookieHeader()!,
    });
    await writeAll(socket, Buffer.concat([head, body.subarray(0, body.length - 10 * KiB)]));
    // The first file is stored once its part is over, while the second still streams.
    assert.ok(await eventually(async () => (await apiFiles(t, user.key)).has('whole.txt')), 'the first file is stored');
    assert.ok(await eventually(async () => t.storage.stagings().filter((staging) => staging.state === 'running').length === 1), 'the second is being staged');
    socket.destroy();
    assert.ok(await eventually(async () => (await t.storage.leftovers()).length === 0), `left behind: ${(await t.storage.leftovers()).join(', ')}`);
    assert.deepEqual([...(await apiFiles(t, user.key)).keys()], ['whole.txt']);
  });

  test('the upload volume counts web uploads like API ones (errorUploadLimit, Retry-After)', async () => {
    const user = await t.account();
    const b = new Browser(t.url);
    await b.signIn(user.login, user.password);
    const csrf = csrfOf((await b.get(MY)).body)!;
    const parts = [fieldPart('csrf', csrf), filePart('upload', 'a.bin', randomBytes(60 * KiB)), filePart('upload', 'b.bin', randomBytes(60 * KiB))];
    const response = await postUpload(t, b, parts, 'application/json');
    assert.equal(response.status, 429, response.body);
    assert.match(String(response.headers['retry-after']), /^\d+$/);
    const answer = JSON.parse(response.body) as { files: Array<{ name: string }>; error: string; code: string; reason: string; retryAfter: number };
    assert.equal(answer.error, 'Upload limit exceeded');
    assert.equal(answer.code, 'errorUploadLimit');
    assert.equal(answer.retryAfter, Number(response.headers['retry-after']));
    assert.match(answer.reason, /^Your upload volume for the last 24 hours is used up: you can upload again in about \d+ h( \d+ min)?\./);
    assert.deepEqual(
      answer.files.map((f) => f.name),
      ['a.bin'],
    );
    assert.deepEqual([...(await apiFiles(t, user.key)).keys()], ['a.bin']);
    // The API sees the same volume used up.
    assert.equal((await t.upload(user.key, 'c.bin', randomBytes(60 * KiB))).response.status, 429);
    assert.ok(await eventually(async () => (await t.storage.leftovers()).length === 0), `left behind: ${(await t.storage.leftovers()).join(', ')}`);
  });
});
