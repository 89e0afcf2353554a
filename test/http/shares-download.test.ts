// Using a share (issue 25, docs/api.md "Shares"): downloads through /s/<id>/download,
// the exact count (also raced across two servers), expiry and revocation per request,
// targets that go away, passwords (header, cookie, never the query string) and their
// throttle, and fast shares paid by the owner's premium traffic.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { redactUrl } from '../../src/http/log-redaction.js';
import { assertAtomError, form, type ReadResponse, read } from '../helpers/api-checks.js';
import { bodyBytes, eventually, randomPayload, rawRequest, sha256 } from '../helpers/downloads.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

const T0 = Date.parse('2026-11-21T10:04:05Z');

let t: TestServer;
let clock: TestClock;
let owner: TestAccount;

before(async () => {
  clock = new TestClock(T0);
  // Unlimited slots per address: these tests send many downloads from one address at once.
  t = await startTestServer({ freeDownloadsPerIp: 0 }, clock);
  owner = await t.account();
});
after(() => t.close());

const share = async (fields: Record<string, string>, on: TestServer = t, key = owner.key): Promise<string> => {
  const response = await read(await on.fetch('/shares', { method: 'POST', headers: { Authorization: key }, body: form(fields) }));
  assert.equal(response.status, 201, response.body);
  return /<entry>\s*<id>([A-Za-z0-9]{22})<\/id>/.exec(response.body)![1]!;
};
const downloadsOf = async (id: string) => (await t.server.services.store.shares.byId(id))!.downloads;
const get = async (path: string, headers: Record<string, string> = {}, on: TestServer = t): Promise<ReadResponse> => read(await on.fetch(path, { headers }));
const upload = async (name: string, content: string | Buffer, key = owner.key) => {
  const up = await t.upload(key, name, content);
  assert.equal(up.response.status, 201, up.body);
  return up.id;
};

describe('share downloads', () => {
  test('a file share serves the bytes like other downloads; only responses from byte 0 count', async () => {
    const content = 'shared bytes, 0123456789';
    const fileId = await upload('notes 1.txt', content);
    const id = await share({ file: fileId });
    const first = await t.fetch(`/s/${id}/download`);
    assert.equal(first.status, 200);
    assert.equal(await first.text(), content);
    assert.equal(first.headers.get('content-disposition'), `attachment; filename="notes 1.txt"`);
    const etag = first.headers.get('etag')!;
    assert.equal(etag, `"${sha256(Buffer.from(content))}"`);
    assert.equal(await downloadsOf(id), 1);

    // Not counted: HEAD, 304, 416, and a ranged resume further on.
    assert.equal((await t.fetch(`/s/${id}/download`, { method: 'HEAD' })).status, 200);
    assert.equal((await rawRequest(`${t.url}/s/${id}/download`, { headers: { 'If-None-Match': etag } })).status, 304);
    assert.equal((await get(`/s/${id}/download`, { Range: 'bytes=999-' })).status, 416);
    const resumed = await get(`/s/${id}/download`, { Range: 'bytes=7-' });
    assert.equal(resumed.status, 206);
    assert.equal(resumed.body, content.slice(7));
    assert.equal(await downloadsOf(id), 1, 'none of those counted');
    // A range from byte 0 is a download from the start: it counts.
    const head = await get(`/s/${id}/download`, { Range: 'bytes=0-5' });
    assert.equal(head.status, 206);
    assert.equal(await downloadsOf(id), 2);
    // The file's own download count went up too (expiry reads it).
    // The file's own count (not the share's) is written in batches: the ones taken so far first.
    await t.server.services.downloads.countsWritten();
    assert.equal((await t.server.services.store.files.byId(fileId))!.downloads, 2);
  });

  test('max_downloads: refused from the next download on, a resume further on is still served', async () => {
    const fileId = await upload('limited.txt', 'limited content');
    const id = await share({ file: fileId, max_downloads: '2' });
    for (let i = 0; i < 2; i++) assert.equal((await get(`/s/${id}/download`)).status, 200);
    assertAtomError(await get(`/s/${id}/download`), 410, 'errorShareDownloadLimit', 'Share has reached its download limit');
    assertAtomError(await get(`/s/${id}/download`, { Range: 'bytes=0-' }), 410, 'errorShareDownloadLimit');
    assert.equal((await get(`/s/${id}/download`, { Range: 'bytes=3-' })).status, 206);
    assert.equal(await downloadsOf(id), 2);
    // The owner raises the limit: one more, the count kept.
    await t.fetch(`/shares/${id}`, { method: 'PUT', headers: { Authorization: owner.key }, body: form({ max_downloads: '3' }) });
    assert.equal((await get(`/s/${id}/download`)).status, 200);
    assertAtomError(await get(`/s/${id}/download`), 410, 'errorShareDownloadLimit');
  });

  test('a Range header that still gets the whole file counts: malformed, another unit, several ranges, a stale If-Range, a suffix of the whole', async () => {
    const content = 'counted whatever the header says';
    const fileId = await upload('whole.txt', content);
    for (const headers of [
      { Range: 'bytes=abc' },
      { Range: 'items=0-' },
      { Range: 'bytes=1-2,0-' },
      { Range: 'bytes=5-', 'If-Range': '"not-the-etag"' },
      { Range: `bytes=-${content.length}` },
    ] as Record<string, string>[]) {
      const id = await share({ file: fileId, max_downloads: '1' });
      const first = await get(`/s/${id}/download`, headers);
      assert.ok(first.status === 200 || first.status === 206, `${JSON.stringify(headers)}: ${first.status}`);
      assert.equal(first.body, content, JSON.stringify(headers));
      assert.equal(await downloadsOf(id), 1, `${JSON.stringify(headers)} counted`);
      assertAtomError(await get(`/s/${id}/download`, headers), 410, 'errorShareDownloadLimit');
    }
  });

  test("a disabled owner's shares answer errorShareNotFound until the account is enabled again", async () => {
    const other = await t.account();
    const fileId = await upload('theirs.txt', 'their bytes', other.key);
    const id = await share({ file: fileId }, t, other.key);
    assert.equal((await get(`/s/${id}/download`)).status, 200);
    await t.server.services.store.accounts.setDisabled(other.account.id, true);
    assertAtomError(await get(`/s/${id}/download`), 404, 'errorShareNotFound');
    assert.equal((await t.fetch(`/s/${id}`)).status, 404);
    await t.server.services.store.accounts.setDisabled(other.account.id, false);
    assert.equal((await get(`/s/${id}/download`)).status, 200);
  });

  test('expired from its very second (per request), revoked for good, unknown ids: each its code, page or Atom', async () => {
    const fileId = await upload('soon gone.txt', 'expiring');
    const id = await share({ file: fileId, expires_in: '60' });
    clock.advance(59_999);
    assert.equal((await get(`/s/${id}/download`)).status, 200);
    assert.equal((await get(`/s/${id}`)).status, 200);
    clock.advance(1);
    assertAtomError(await get(`/s/${id}/download`), 410, 'errorShareExpired', 'Share has expired');
    const page = await get(`/s/${id}`, { Accept: 'text/html' });
    assert.equal(page.status, 410);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.body, /Share has expired/);
    assert.doesNotMatch(page.body, /soon gone/, 'the page of an expired share does not name the file');
    // The owner extends it: live again.
    await t.fetch(`/shares/${id}`, { method: 'PUT', headers: { Authorization: owner.key }, body: form({ expires_in: '0' }) });
    assert.equal((await get(`/s/${id}/download`)).status, 200);
    clock.set('2026-11-21T10:04:05Z');

    await t.fetch(`/shares/${id}`, { method: 'DELETE', headers: { Authorization: owner.key } });
    assertAtomError(await get(`/s/${id}/download`), 404, 'errorShareNotFound', 'Share does not exist or was revoked');
    assert.equal((await get(`/s/${id}`)).status, 404);
    for (const bogus of ['AAAAAAAAAAAAAAAAAAAAAA', 'short', 'x'.repeat(200)]) {
      assertAtomError(await get(`/s/${bogus}/download`), 404, 'errorShareNotFound');
      assertAtomError(await get(`/s/${bogus}/download/ABCDEFGHIJ`), 404, 'errorShareNotFound');
    }
  });

  test('a download already running finishes when the share expires meanwhile', async () => {
    const payload = randomPayload(8 * 1024 * 1024);
    const fileId = await upload('big.bin', payload);
    const id = await share({ file: fileId, expires_in: '10' });
    const response = await t.fetch(`/s/${id}/download`);
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const firstChunk = await reader.read();
    clock.advance(11_000);
    assertAtomError(await get(`/s/${id}/download`), 410, 'errorShareExpired');
    const chunks: Uint8Array[] = [firstChunk.value!];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    assert.equal(sha256(Buffer.concat(chunks)), sha256(payload), 'the running download got every byte');
    clock.set('2026-11-21T10:04:05Z');
  });

  test('a shared file deleted or blocked is never served; a folder share serves only what is inside it now', async () => {
    const deleted = await upload('to delete.txt', 'delete me');
    const deletedShare = await share({ file: deleted });
    await t.fetch(`/files/${deleted}`, { method: 'DELETE', headers: { Authorization: owner.key } });
    assertAtomError(await get(`/s/${deletedShare}/download`), 404, 'errorShareNotFound');
    assert.equal((await get(`/s/${deletedShare}`)).status, 404);

    const blocked = await upload('to block.txt', 'block me');
    const blockedShare = await share({ file: blocked });
    await t.server.services.files.block(blocked);
    assertAtomError(await get(`/s/${blockedShare}/download`), 404, 'errorShareNotFound');
    await t.server.services.files.unblock(blocked);
    assert.equal((await get(`/s/${blockedShare}/download`)).status, 200, 'unblocked: served again');

    // A folder with a file, a sub-folder with a file, and a file outside.
    const { folders } = t.server.services;
    const top = await folders.create(owner.account, 'Shared top');
    const sub = await folders.create(owner.account, 'Below', top.id);
    const inTop = await upload('in top.txt', 'top file');
    const inSub = await upload('in sub.txt', 'sub file');
    const outside = await upload('outside.txt', 'not shared');
    await folders.move(owner.account, top.id, [inTop]);
    await folders.move(owner.account, sub.id, [inSub]);
    const id = await share({ folder: top.id });
    // Files are named by their reference on the share (share-refs.ts), never their id.
    const ref = (file: string, on = id) => t.server.services.shares.ref({ id: on }, 'file', file);
    assert.equal((await get(`/s/${id}/download/${ref(inTop)}`)).body, 'top file');
    assert.equal((await get(`/s/${id}/download/${ref(inSub)}`)).body, 'sub file');
    assertAtomError(await get(`/s/${id}/download/${ref(outside)}`), 404, 'errorFileNotFound');
    assertAtomError(await get(`/s/${id}/download/${inTop}`), 404, 'errorFileNotFound');
    assertAtomError(await get(`/s/${id}/download/not-an-id`), 404, 'errorFileNotFound');
    // Moved out: no longer part of the share.
    await folders.moveToTop(owner.account, inSub);
    assertAtomError(await get(`/s/${id}/download/${ref(inSub)}`), 404, 'errorFileNotFound');
    // A file share has no files below it.
    assertAtomError(await get(`/s/${blockedShare}/download/${ref(inTop, blockedShare)}`), 404, 'errorFileNotFound');

    // The folder as one ZIP: counted once per ZIP response, HEAD not at all.
    assert.equal((await t.fetch(`/s/${id}/download`, { method: 'HEAD' })).status, 200);
    const before = await downloadsOf(id);
    const zip = await t.fetch(`/s/${id}/download`);
    assert.equal(zip.status, 200);
    assert.equal(zip.headers.get('content-type'), 'application/zip');
    assert.equal(zip.headers.get('content-disposition'), 'attachment; filename="Shared top.zip"');
    const bytes = await bodyBytes(zip);
    assert.equal(bytes.subarray(0, 4).toString('hex'), '504b0304', 'a ZIP');
    assert.equal(await downloadsOf(id), before + 1);

    // A ZIP past the limit is a clean Atom error, no ZIP headers.
    await t.fetch(`/shares/${id}`, { method: 'PUT', headers: { Authorization: owner.key }, body: form({ max_downloads: String(before + 1) }) });
    const refused = await get(`/s/${id}/download`);
    assertAtomError(refused, 410, 'errorShareDownloadLimit');
    assert.equal(refused.headers.get('content-disposition'), null);

    // The folder removed (emptied first): the share leads nowhere.
    await folders.moveToTop(owner.account, inTop);
    await folders.remove(owner.account, sub.id);
    await folders.remove(owner.account, top.id);
    assertAtomError(await get(`/s/${id}/download`), 404, 'errorShareNotFound');
  });

  test('passwords: the header or the cookie, never the query string; a changed password ends old cookies', async () => {
    const fileId = await upload('secret plans.txt', 'the plans');
    const id = await share({ file: fileId, password: 'open sesame' });
    assertAtomError(await get(`/s/${id}/download`), 401, 'errorSharePassword', 'This share needs its password');
    assertAtomError(await get(`/s/${id}/download`, { 'Filehaven-Share-Password': 'wrong' }), 401, 'errorSharePassword');
    assertAtomError(await get(`/s/${id}/download?password=open%20sesame`), 401, 'errorSharePassword');
    assert.equal(redactUrl(`/s/${id}/download?password=open%20sesame`), '/s/[redacted]/download?password=[redacted]', 'never logged');
    const right = await get(`/s/${id}/download`, { 'Filehaven-Share-Password': 'open sesame' });
    assert.equal(right.status, 200);
    assert.equal(right.body, 'the plans');
    assert.equal(await downloadsOf(id), 1, 'refusals are not downloads');

    // The page: only the password form, nothing of the file, no meta tags.
    const locked = await get(`/s/${id}`);
    assert.equal(locked.status, 200);
    assert.match(locked.body, /<input type="password" name="password"/);
    for (const leak of [/secret plans/, /og:/, /name="description"/, /9 B/, /download/i]) assert.doesNotMatch(locked.body, leak);
    assert.doesNotMatch((await get(`/s/${id}?password=open%20sesame`)).body, /secret plans/, 'the query string opens nothing');

    const wrong = await t.fetch(`/s/${id}`, { method: 'POST', body: form({ password: 'nope' }), redirect: 'manual' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('set-cookie'), null);
    const wrongBody = await wrong.text();
    assert.match(wrongBody, /That password is not right/);
    assert.doesNotMatch(wrongBody, /secret plans/);

    const opened = await t.fetch(`/s/${id}`, { method: 'POST', body: form({ password: 'open sesame' }), redirect: 'manual' });
    assert.equal(opened.status, 303);
    assert.equal(opened.headers.get('location'), `/s/${id}`);
    const setCookie = opened.headers.get('set-cookie') ?? '';
    assert.match(setCookie, new RegExp(`^fh_link_${id}=[^;]+; Path=/s/${id}; HttpOnly; SameSite=Lax$`));
    const cookie = setCookie.split(';')[0]!;
    const page = await get(`/s/${id}`, { Cookie: cookie });
    assert.match(page.body, /secret plans\.txt/);
    assert.match(page.body, new RegExp(`href="/s/${id}/download"`));
    assert.equal((await get(`/s/${id}/download`, { Cookie: cookie })).body, 'the plans');

    // The cookie opens this share only.
    const otherId = await share({ file: fileId, password: 'open sesame' });
    assertAtomError(await get(`/s/${otherId}/download`, { Cookie: cookie.replace(id, otherId) }), 401, 'errorSharePassword');
    // A new password: the old cookie no longer opens it.
    await t.fetch(`/shares/${id}`, { method: 'PUT', headers: { Authorization: owner.key }, body: form({ password: 'new words' }) });
    assertAtomError(await get(`/s/${id}/download`, { Cookie: cookie }), 401, 'errorSharePassword');
    // No password any more: open to anyone.
    await t.fetch(`/shares/${id}`, { method: 'PUT', headers: { Authorization: owner.key }, body: form({ password: '' }) });
    assert.equal((await get(`/s/${id}/download`)).status, 200);
  });

  test('30 simultaneous downloads of a max_downloads=5 share sent to two servers: exactly 5 are served', async () => {
    const sibling = await t.sibling();
    try {
      const fileId = await upload('popular.bin', randomPayload(64 * 1024));
      const id = await share({ file: fileId, max_downloads: '5' });
      const servers = [t, sibling];
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => get(`/s/${id}/download`, {}, servers[i % 2])));
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [...Array(5).fill(200), ...Array(25).fill(410)]);
      for (const answer of answers.filter((a) => a.status === 410)) assertAtomError(answer, 410, 'errorShareDownloadLimit');
      assert.equal(await downloadsOf(id), 5);
    } finally {
      await sibling.server.close();
    }
  });

  test("fast shares: the owner's premium traffic pays, uncapped; when it runs out, the free rules serve it", async () => {
    const premium = await t.account({ premiumDays: 30, trafficBytes: 10_000 });
    const trafficOf = async () => (await t.server.services.store.accounts.byId(premium.account.id))!.trafficLeft;
    const fileId = await upload('fast.bin', randomPayload(4000), premium.key);
    const fast = await share({ file: fileId, fast: '1' }, t, premium.key);
    const slow = await share({ file: fileId }, t, premium.key);

    assert.equal((await bodyBytes(await t.fetch(`/s/${slow}/download`))).length, 4000);
    assert.equal(await trafficOf(), 10_000, 'a share that is not fast is free');

    assert.equal((await bodyBytes(await t.fetch(`/s/${fast}/download`))).length, 4000);
    await eventually(async () => (await trafficOf()) === 6000 && (await t.server.services.store.reservations.list(10)).length === 0, 'charged and settled');
    assert.equal((await get(`/s/${fast}/download`, { Range: 'bytes=1000-' })).status, 206);
    await eventually(async () => (await trafficOf()) === 3000, 'a resume is charged what it sends');
    // 3000 left cannot pay 4000: served under the free rules, nothing taken.
    assert.equal((await bodyBytes(await t.fetch(`/s/${fast}/download`))).length, 4000);
    assert.equal(await trafficOf(), 3000);
    assert.equal(await downloadsOf(fast), 2, 'both full downloads counted, whoever paid');

    // At its limit, a fast share's refusal takes nothing: the charge comes back whole.
    const once = await share({ file: fileId, fast: '1', max_downloads: '1' }, t, premium.key);
    await t.server.services.accounts.extendPremium(premium.login, 0, 7000);
    await eventually(async () => (await trafficOf()) === 10_000, 'traffic topped up');
    assert.equal((await bodyBytes(await t.fetch(`/s/${once}/download`))).length, 4000);
    await eventually(async () => (await trafficOf()) === 6000, 'the one download charged');
    assertAtomError(await get(`/s/${once}/download`), 410, 'errorShareDownloadLimit');
    await eventually(async () => (await t.server.services.store.reservations.list(10)).length === 0, 'no reservation left open');
    assert.equal(await trafficOf(), 6000, 'the refused download cost nothing');

    // An owner without premium: fast is stored, and served free.
    const plain = await t.account();
    const plainFile = await upload('plain.bin', randomPayload(100), plain.key);
    const plainFast = await share({ file: plainFile, fast: '1' }, t, plain.key);
    assert.equal((await get(`/s/${plainFast}/download`)).status, 200);
  });
});

describe('share password throttle', () => {
  let s: TestServer;
  let acc: TestAccount;
  let id: string;
  before(async () => {
    // 3 wrong guesses a minute per address, 30 per share (limits.ts: ten times that).
    s = await startTestServer({ loginAttemptsPerMinute: 3, trustProxy: true });
    acc = await s.account();
    const fileId = (await s.upload(acc.key, 'guarded.txt', 'guarded')).id;
    id = await share({ file: fileId, password: 'right one' }, s, acc.key);
  });
  after(() => s.close());

  const guess = (password: string, address: string) => get(`/s/${id}/download`, { 'Filehaven-Share-Password': password, 'X-Forwarded-For': address }, s);

  test('wrong guesses from one address: 401 until its budget is spent, then 429 with Retry-After, even for the right password', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await guess(`wrong ${i}`, '198.51.100.7')).status);
    assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
    const throttled = await guess('right one', '198.51.100.7');
    assertAtomError(throttled, 429, 'errorSharePassword', 'Too many wrong passwords, try again later');
    assert.ok(Number(throttled.headers.get('retry-after')) >= 1);
    // Another address still gets in with the right password.
    assert.equal((await guess('right one', '198.51.100.8')).status, 200);
    // The web form is throttled the same way.
    const form429 = await s.fetch(`/s/${id}`, { method: 'POST', body: form({ password: 'right one' }), headers: { 'X-Forwarded-For': '198.51.100.7' } });
    assert.equal(form429.status, 429);
    assert.ok(form429.headers.get('retry-after'));
  });

  test("wrong guesses from many addresses: the share's own budget ends them", async () => {
    const statuses: number[] = [];
    // 30 per share in all; the test above spent 3 of them.
    for (let i = 0; i < 40; i++) statuses.push((await guess(`wrong ${i}`, `203.0.113.${i + 1}`)).status);
    const firstRefused = statuses.indexOf(429);
    assert.equal(firstRefused, 27, statuses.join(','));
    assert.ok(statuses.slice(firstRefused).every((status) => status === 429));
    assert.equal((await guess('right one', '192.0.2.99')).status, 429, 'a fresh address with the right password waits too');
  });
});
