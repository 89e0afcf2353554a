// The web side of sharing (issue 25), without JavaScript: the Share action of My files on
// files and folders, the Shares page (shares and upload requests listed with their counts,
// edited, revoked and closed), the new-request form with sizes in human units, refused
// input shown in its form (never a 500), the operator's rules in the forms, and another
// account's links refused. Runs on both setups (SQLite + data folder, PostgreSQL + S3).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser, csrfOf, type Page } from '../helpers/browser.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

const MY = '/my/files';
const SHARES = '/my/shares';
const DAY = 86_400_000;

function page(p: Page, status: number): string {
  assert.equal(p.status, status, p.body);
  assert.equal(p.response.headers.get('content-type'), 'text/html; charset=utf-8');
  return p.body;
}

/** The Location of a 303 (POST/redirect/GET). */
function redirected(p: Page): string {
  assert.equal(p.status, 303, p.body);
  return p.response.headers.get('location') ?? assert.fail('no Location');
}

/** The share ids listed on a Shares page, in order. */
const shareIds = (body: string) => [...body.matchAll(/<li class="share-item" data-share="([A-Za-z0-9]{22})">/g)].map((m) => m[1]!);
const requestIds = (body: string) => [...body.matchAll(/<li class="share-item" data-request="([A-Za-z0-9]{22})">/g)].map((m) => m[1]!);
/** One listed share's or request's <li>. */
function itemOf(body: string, kind: 'share' | 'request', id: string): string {
  const start = body.indexOf(`<li class="share-item" data-${kind}="${id}">`);
  assert.ok(start >= 0, `${kind} ${id} is not listed`);
  return body.slice(start, body.indexOf('</li>', start));
}
/** The text of an item's details line (tags dropped). */
const metaOf = (item: string) => (/<p class="file-meta">([\s\S]*?)<\/p>/.exec(item)?.[1] ?? '').replace(/<[^>]+>/g, '');

interface SignedIn extends TestAccount {
  b: Browser;
  csrf: string;
}

async function signIn(t: TestServer, options: { premiumDays?: number } = {}): Promise<SignedIn> {
  const user = await t.account(options);
  const b = new Browser(t.url);
  assert.equal((await b.signIn(user.login, user.password)).status, 303);
  const csrf = csrfOf(page(await b.get(MY), 200))!;
  return { ...user, b, csrf };
}

async function apiFolder(t: TestServer, key: string, name: string): Promise<string> {
  const response = await t.fetch('/folders', { method: 'POST', headers: { Authorization: key }, body: new URLSearchParams({ name }) });
  const body = await response.text();
  assert.equal(response.status, 201, body);
  return /<entry>\s*<id>([A-Z0-9]{10})<\/id>/.exec(body)?.[1] ?? assert.fail(body);
}

/** Shares a file or folder through My files' form; the new share's id (from the redirect). */
async function share(u: SignedIn, target: { file?: string; folder?: string }, fields: Record<string, string> = {}): Promise<string> {
  const location = redirected(await u.b.post(`${MY}/share`, { csrf: u.csrf, ...target, expires: '7d', ...fields }));
  return /^\/my\/shares\?created=([A-Za-z0-9]{22})$/.exec(location)?.[1] ?? assert.fail(location);
}

describe('web: the Share action and the Shares page', () => {
  let t: TestServer;
  let clock: TestClock;
  before(async () => {
    clock = new TestClock(Date.parse('2026-11-21T10:00:00Z'));
    t = await startTestServer({ loginAttemptsPerMinute: 1000 }, clock);
  });
  after(() => t.close());

  test('My files offers Share on every active file and folder; the form makes a share and the Shares page shows its link', async () => {
    const u = await signIn(t);
    const { id: fileId } = await t.upload(u.key, 'report <2026>.pdf', 'report body');
    const folderId = await apiFolder(t, u.key, 'Holiday & more');
    const body = page(await u.b.get(MY), 200);
    // A file's and a folder's form: expiry in words, password, limit; no "fast" for a free account.
    assert.match(body, new RegExp(`<input type="hidden" name="file" value="${fileId}">\\s*<input type="hidden" name="back" value="/my/files">`));
    assert.match(body, new RegExp(`<input type="hidden" name="folder" value="${folderId}">`));
    assert.match(body, /<summary class="button small secondary" data-share-summary>Share<\/summary>/);
    assert.match(body, /Share “<bdi>report &lt;2026&gt;\.pdf<\/bdi>”/);
    for (const label of ['1 hour', '1 day', '7 days', '30 days', 'Never']) assert.match(body, new RegExp(`>${label}</option>`));
    assert.doesNotMatch(body, /name="fast"/);
    // The folder's own page carries it too.
    assert.match(page(await u.b.get(`${MY}?folder=${folderId}`), 200), new RegExp(`<input type="hidden" name="folder" value="${folderId}">`));

    const id = await share(u, { file: fileId }, { expires: '1d', max_downloads: '3' });
    const shown = page(await u.b.get(`${SHARES}?created=${id}`), 200);
    assert.match(shown, /<div class="notice ok created-share" role="status">\s*<p>Your link to “<bdi>report &lt;2026&gt;\.pdf<\/bdi>” is ready\.<\/p>/);
    assert.match(
      shown,
      new RegExp(
        `<a class="share-link" href="${t.url}/s/${id}">${t.url}/s/${id}</a><button class="button small secondary" type="button" data-copy-text="${t.url}/s/${id}" hidden`,
      ),
    );
    assert.equal(metaOf(itemOf(shown, 'share', id)), 'expires 2026-11-22 10:00 UTC · 0 of 3 downloads · no password · created 2026-11-21 10:00 UTC');
    // The session navigation leads here.
    assert.match(shown, /<a href="\/my\/files">My files<\/a><a href="\/my\/shares">Shares<\/a>/);

    // The link works for anyone, and its downloads count on the page.
    const visitor = await fetch(`${t.url}/s/${id}/download`);
    assert.equal(visitor.status, 200);
    assert.equal(await visitor.text(), 'report body');
    assert.match(metaOf(itemOf(page(await u.b.get(SHARES), 200), 'share', id)), / · 1 of 3 downloads · /);

    // A folder share, protected, never expiring (a second later: the list is newest first).
    clock.advance(1000);
    const folderShare = await share(u, { folder: folderId }, { expires: 'longest', password: 'open sesame' });
    const listed = page(await u.b.get(SHARES), 200);
    assert.deepEqual(shareIds(listed), [folderShare, id]);
    const item = itemOf(listed, 'share', folderShare);
    assert.match(item, /<bdi>Holiday &amp; more<\/bdi> <span class="badge">folder<\/span> <span class="badge">password<\/span>/);
    assert.match(metaOf(item), /^never expires · 0 downloads · protected · /);
    assert.equal((await fetch(`${t.url}/s/${folderShare}/download`)).status, 401);
    // The created notice is the viewer's own share only.
    const other = await signIn(t);
    assert.doesNotMatch(page(await other.b.get(`${SHARES}?created=${id}`), 200), /created-share/);
  });

  test('refused share input comes back in the form with the reason (400), never a 500', async () => {
    const u = await signIn(t);
    const { id: fileId } = await t.upload(u.key, 'a.txt', 'a');
    for (const [fields, message] of [
      [{ max_downloads: 'lots' }, 'Max downloads must be a whole number from 1 to 1000000000.'],
      [{ max_downloads: '0' }, 'Max downloads must be a whole number from 1 to 1000000000.'],
      [{ expires: 'forever' }, 'Choose an expiry from the list.'],
      [{ password: 'x'.repeat(1025) }, 'Password must be at most 1024 characters.'],
    ] as const) {
      const body = page(await u.b.post(`${MY}/share`, { csrf: u.csrf, file: fileId, expires: '7d', ...fields }), 400);
      assert.match(body, new RegExp(`<p class="notice error" role="alert">${message.replace(/[.()]/g, '\\$&')}</p>`));
      assert.match(body, /<details class="share" open>/);
      assert.match(body, new RegExp(`<input type="hidden" name="file" value="${fileId}">`));
    }
    // The typed limit is kept; nothing was created.
    assert.match(page(await u.b.post(`${MY}/share`, { csrf: u.csrf, file: fileId, expires: '7d', max_downloads: 'lots' }), 400), /value="lots"/);
    assert.deepEqual(shareIds(page(await u.b.get(SHARES), 200)), []);
    // Someone else's file, a blocked id, no CSRF token.
    const other = await signIn(t);
    assert.equal((await other.b.post(`${MY}/share`, { csrf: other.csrf, file: fileId, expires: '7d' })).status, 403);
    assert.equal((await u.b.post(`${MY}/share`, { csrf: u.csrf, file: 'AAAAAAAAAA', expires: '7d' })).status, 404);
    assert.equal((await u.b.post(`${MY}/share`, { file: fileId, expires: '7d' })).status, 403);
    assert.deepEqual(shareIds(page(await u.b.get(SHARES), 200)), []);
  });

  test('fast is offered to premium accounts only, at creation and in the edit form', async () => {
    const premium = await signIn(t, { premiumDays: 30 });
    const { id: fileId } = await t.upload(premium.key, 'big.bin', 'bytes');
    assert.match(page(await premium.b.get(MY), 200), /<input type="checkbox" name="fast" value="1"> Fast: downloads use your premium traffic/);
    const id = await share(premium, { file: fileId }, { fast: '1' });
    const item = itemOf(page(await premium.b.get(SHARES), 200), 'share', id);
    assert.match(item, /<span class="badge ok">fast<\/span>/);
    assert.match(item, /<input type="hidden" name="fast_shown" value="1"><label class="check"><input type="checkbox" name="fast" value="1" checked>/);
    // Unticked in the edit form: no longer fast.
    redirected(await premium.b.post(`${SHARES}/share/${id}`, { csrf: premium.csrf, expires: 'keep', max_downloads: '', fast_shown: '1' }));
    assert.doesNotMatch(itemOf(page(await premium.b.get(SHARES), 200), 'share', id), /badge ok">fast/);
    // A free account's "fast" field is ignored.
    const free = await signIn(t);
    const { id: freeFile } = await t.upload(free.key, 'small.bin', 'bytes');
    const freeShare = await share(free, { file: freeFile }, { fast: '1' });
    assert.doesNotMatch(itemOf(page(await free.b.get(SHARES), 200), 'share', freeShare), /fast/);
  });

  test('a share is edited (expiry, password, limit: the count stays) and revoked from the Shares page', async () => {
    const u = await signIn(t);
    const { id: fileId } = await t.upload(u.key, 'notes.txt', 'notes');
    const id = await share(u, { file: fileId }, { max_downloads: '2' });
    assert.equal((await fetch(`${t.url}/s/${id}/download`)).status, 200);

    // Never expires, a password, 5 downloads.
    assert.equal(
      redirected(await u.b.post(`${SHARES}/share/${id}`, { csrf: u.csrf, expires: 'longest', password: 'pw-1', max_downloads: '5' })),
      `${SHARES}?note=share-changed#shares`,
    );
    let body = page(await u.b.get(`${SHARES}?note=share-changed`), 200);
    assert.match(body, /<p class="notice ok" role="status">The share was changed\.<\/p>/);
    assert.equal(metaOf(itemOf(body, 'share', id)).split(' · created')[0], 'never expires · 1 of 5 downloads · protected');
    assert.equal((await fetch(`${t.url}/s/${id}/download`)).status, 401);
    assert.equal((await fetch(`${t.url}/s/${id}/download`, { headers: { 'Filehaven-Share-Password': 'pw-1' } })).status, 200);

    // An empty password field keeps it; "remove" drops it; an emptied limit is none; 1 hour.
    redirected(await u.b.post(`${SHARES}/share/${id}`, { csrf: u.csrf, expires: 'keep', password: '', max_downloads: '5' }));
    assert.match(metaOf(itemOf(page(await u.b.get(SHARES), 200), 'share', id)), / · protected · /);
    redirected(await u.b.post(`${SHARES}/share/${id}`, { csrf: u.csrf, expires: '1h', remove_password: '1', max_downloads: '' }));
    body = page(await u.b.get(SHARES), 200);
    assert.equal(metaOf(itemOf(body, 'share', id)).split(' · created')[0], 'expires 2026-11-21 11:00 UTC · 2 downloads · no password');
    assert.equal((await fetch(`${t.url}/s/${id}/download`)).status, 200);

    // Refused input: the page again (400) with the reason in that share's form, open.
    body = page(await u.b.post(`${SHARES}/share/${id}`, { csrf: u.csrf, expires: 'keep', max_downloads: '-3' }), 400);
    const item = itemOf(body, 'share', id);
    assert.match(item, /<details class="edit" open>/);
    assert.match(item, /<p class="notice error" role="alert">Max downloads must be a whole number from 1 to 1000000000, or 0 for unlimited\.<\/p>/);
    assert.match(item, /value="-3"/);

    // Expired shares say so.
    clock.advance(2 * 3_600_000);
    assert.match(metaOf(itemOf(page(await u.b.get(SHARES), 200), 'share', id)), /^expired 2026-11-21 11:00 UTC · /);
    clock.advance(-2 * 3_600_000);

    // Revoked: gone from the list, the link answers not found.
    assert.equal(redirected(await u.b.post(`${SHARES}/share/${id}/revoke`, { csrf: u.csrf })), `${SHARES}?note=revoked#shares`);
    assert.deepEqual(shareIds(page(await u.b.get(SHARES), 200)), []);
    assert.equal((await fetch(`${t.url}/s/${id}/download`)).status, 404);
    // Revoking again: not found.
    assert.equal((await u.b.post(`${SHARES}/share/${id}/revoke`, { csrf: u.csrf })).status, 404);
  });

  test('upload requests: created with sizes in human units, listed with counts, edited and closed', async () => {
    const u = await signIn(t);
    const inbox = await apiFolder(t, u.key, 'Inbox');
    const body0 = page(await u.b.get(SHARES), 200);
    assert.match(body0, new RegExp(`<option value="${inbox}">Inbox</option>`));
    assert.match(body0, /No open upload requests\./);

    const location = redirected(
      await u.b.post(`${SHARES}/requests`, {
        csrf: u.csrf,
        folder: inbox,
        title: 'Wedding <photos>',
        message: 'Send yours here',
        expires: '30d',
        password: '',
        max_files: '3',
        max_bytes: '1 GiB',
        max_file_size: '10 MiB',
      }),
    );
    assert.equal(location, `${SHARES}?note=request-created#requests`);
    let body = page(await u.b.get(SHARES), 200);
    const [id] = requestIds(body);
    assert.ok(id);
    let item = itemOf(body, 'request', id);
    assert.match(item, /<bdi>Wedding &lt;photos&gt;<\/bdi>/);
    assert.match(item, new RegExp(`<a class="share-link" href="${t.url}/r/${id}">`));
    assert.equal(metaOf(item), 'into Inbox · expires 2026-12-21 10:00 UTC · 0 of 3 files · 0 B of 1.0 GiB · up to 10.0 MiB per file · no password');
    // The edit form is filled with exact sizes, so saving it untouched changes nothing.
    assert.match(item, /name="max_bytes" maxlength="32" value="1 GiB"/);
    assert.match(item, /name="max_file_size" maxlength="32" value="10 MiB"/);

    // Someone uploads through the link; the counts follow.
    const upload = new FormData();
    upload.append('upload', new Blob(['hello there']), 'hello.txt');
    assert.equal((await fetch(`${t.url}/r/${id}`, { method: 'POST', body: upload })).status, 201);
    item = itemOf(page(await u.b.get(SHARES), 200), 'request', id);
    assert.match(metaOf(item), / · 1 of 3 files · 11 B of 1\.0 GiB · /);

    // Edited: no file limit, 2 GiB in all, a password, a new title; the counts stay.
    redirected(
      await u.b.post(`${SHARES}/request/${id}`, {
        csrf: u.csrf,
        title: 'Wedding',
        message: 'Thanks!',
        expires: 'keep',
        password: 'pw',
        max_files: '',
        max_bytes: '2GiB',
        max_file_size: '10 MiB',
      }),
    );
    item = itemOf(page(await u.b.get(SHARES), 200), 'request', id);
    assert.match(item, /<bdi>Wedding<\/bdi> <span class="badge">password<\/span>/);
    assert.equal(metaOf(item), 'into Inbox · expires 2026-12-21 10:00 UTC · 1 file · 11 B of 2.0 GiB · up to 10.0 MiB per file · protected');
    assert.equal((await fetch(`${t.url}/r/${id}`, { method: 'POST', body: upload })).status, 401);

    // Refused input in the edit form and in the new-request form: the reason, the typed values.
    body = page(await u.b.post(`${SHARES}/request/${id}`, { csrf: u.csrf, expires: 'keep', max_bytes: 'lots' }), 400);
    assert.match(itemOf(body, 'request', id), /<p class="notice error" role="alert">Most in all: write a size such as 500 MB or 2 GiB\.<\/p>/);
    body = page(await u.b.post(`${SHARES}/requests`, { csrf: u.csrf, folder: inbox, title: 'Kept title', expires: '1d', max_files: '0' }), 400);
    assert.match(
      body,
      /<form class="card-form new-request" id="new-request"[^>]*>\s*<h3>New upload request<\/h3>[\s\S]*?<p class="notice error" role="alert">Max files must be at least 1 \(leave it out for no limit\)\.<\/p>/,
    );
    assert.match(body, /name="title" maxlength="255" value="Kept title"/);
    assert.match(body, new RegExp(`<option value="${inbox}" selected>Inbox</option>`));
    body = page(await u.b.post(`${SHARES}/requests`, { csrf: u.csrf, title: 'x'.repeat(300), expires: '1d' }), 400);
    assert.match(body, /Title must be at most 255 characters\./);
    assert.deepEqual(requestIds(page(await u.b.get(SHARES), 200)), [id]);

    // Closed: gone from the list, the link takes nothing; the file stays the owner's.
    assert.equal(redirected(await u.b.post(`${SHARES}/request/${id}/close`, { csrf: u.csrf })), `${SHARES}?note=closed#requests`);
    assert.deepEqual(requestIds(page(await u.b.get(SHARES), 200)), []);
    assert.equal((await fetch(`${t.url}/r/${id}`)).status, 404);
    assert.match(page(await u.b.get(`${MY}?folder=${inbox}`), 200), /<bdi>hello\.txt<\/bdi>/);
  });

  test("another account's share or request can be neither edited, revoked nor closed", async () => {
    const owner = await signIn(t);
    const intruder = await signIn(t);
    const { id: fileId } = await t.upload(owner.key, 'mine.txt', 'mine');
    const id = await share(owner, { file: fileId });
    redirected(await owner.b.post(`${SHARES}/requests`, { csrf: owner.csrf, expires: '1d', title: 'Mine' }));
    const [requestId] = requestIds(page(await owner.b.get(SHARES), 200));
    assert.ok(requestId);

    assert.equal((await intruder.b.post(`${SHARES}/share/${id}`, { csrf: intruder.csrf, expires: 'longest', max_downloads: '1' })).status, 404);
    assert.equal((await intruder.b.post(`${SHARES}/share/${id}/revoke`, { csrf: intruder.csrf })).status, 404);
    assert.equal((await intruder.b.post(`${SHARES}/request/${requestId}`, { csrf: intruder.csrf, expires: 'keep', title: 'Theirs' })).status, 404);
    assert.equal((await intruder.b.post(`${SHARES}/request/${requestId}/close`, { csrf: intruder.csrf })).status, 404);
    // Nor without the form's token, or signed out.
    assert.equal((await owner.b.post(`${SHARES}/share/${id}/revoke`, {})).status, 403);
    assert.equal((await new Browser(t.url).post(`${SHARES}/share/${id}/revoke`, { csrf: owner.csrf })).status, 403);
    assert.deepEqual(shareIds(page(await intruder.b.get(SHARES), 200)), []);

    const body = page(await owner.b.get(SHARES), 200);
    assert.deepEqual(shareIds(body), [id]);
    assert.match(metaOf(itemOf(body, 'share', id)), /^expires 2026-11-28 10:00 UTC · 0 downloads · /);
    assert.match(itemOf(body, 'request', requestId), /<bdi>Mine<\/bdi>/);
    assert.equal((await fetch(`${t.url}/s/${id}/download`)).status, 200);

    // Signed out, the page sends to sign-in and back.
    const out = await new Browser(t.url).get(SHARES);
    assert.equal(out.status, 303);
    assert.match(out.response.headers.get('location') ?? '', /^\/signin\?/);
  });
});

describe("web: the operator's sharing rules in the forms", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ loginAttemptsPerMinute: 1000, sharePasswordRequired: true, shareMaxExpiryMs: 2 * DAY, uploadRequests: true });
  });
  after(() => t.close());

  test('a capped expiry offers only what fits and "the longest allowed"; a required password is asked for', async () => {
    const u = await signIn(t);
    const { id: fileId } = await t.upload(u.key, 'capped.txt', 'c');
    const body = page(await u.b.get(MY), 200);
    assert.match(body, /<option value="1d">1 day<\/option><option value="longest" selected>2 days \(the longest allowed\)<\/option><\/select>/);
    assert.doesNotMatch(body, />7 days<|>Never</);
    // No password: the server's rule, in the form.
    const refused = page(await u.b.post(`${MY}/share`, { csrf: u.csrf, file: fileId, expires: 'longest' }), 400);
    assert.match(refused, /<p class="notice error" role="alert">This server requires a password on every share\.<\/p>/);
    // A value past the cap (sent by hand): refused with the cap named.
    const tooLong = page(await u.b.post(`${MY}/share`, { csrf: u.csrf, file: fileId, expires: '30d', password: 'pw' }), 400);
    assert.match(tooLong, /A share may expire at most 172800 seconds from now on this server\./);
    const location = redirected(await u.b.post(`${MY}/share`, { csrf: u.csrf, file: fileId, expires: 'longest', password: 'pw' }));
    const shares = page(await u.b.get(location), 200);
    assert.match(shares, / · protected · /);
    // Removing the password is not offered; the new-request form says it is required.
    assert.doesNotMatch(shares, /name="remove_password"/);
    assert.match(shares, /Password <span class="hint">\(required on this server\)<\/span>/);
    assert.match(page(await u.b.post(`${SHARES}/requests`, { csrf: u.csrf, expires: '1d' }), 400), /Password is required on this server\./);
  });

  test('with upload requests turned off the page says so and offers no form', async () => {
    const off = await startTestServer({ loginAttemptsPerMinute: 1000, uploadRequests: false });
    try {
      const u = await signIn(off);
      const body = page(await u.b.get(SHARES), 200);
      assert.match(body, /Upload requests are turned off on this server\./);
      assert.doesNotMatch(body, /id="new-request"/);
      assert.equal((await u.b.post(`${SHARES}/requests`, { csrf: u.csrf, expires: '1d' })).status, 403);
    } finally {
      await off.close();
    }
  });
});
