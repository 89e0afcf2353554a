// Shares through the API (issue 25, docs/api.md "Shares"): CRUD with whole-body golden
// answers written from the spec, ownership, bad fields, the operator's rules, paging
// and the audit log. Downloads through shares: shares-download.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, assertAtomOk, form, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

const T0 = '2026-11-21T10:04:05Z';
const UPDATED = 'Sat, 21 Nov 2026 10:04:05 +0000';

let t: TestServer;
let clock: TestClock;
let owner: TestAccount;
let other: TestAccount;
let fileId: string;
let folderId: string;

before(async () => {
  clock = new TestClock(Date.parse(T0));
  t = await startTestServer({}, clock);
  owner = await t.account();
  other = await t.account();
  const up = await t.upload(owner.key, 'report 2026 <final> & more.pdf', 'the report body');
  assert.equal(up.response.status, 201, up.body);
  fileId = up.id;
  const folder = await read(await t.fetch('/folders', { method: 'POST', headers: { Authorization: owner.key }, body: form({ name: 'Holiday photos' }) }));
  folderId = assertAtomOk(folder, 201, 'Folder').entry.id;
});
after(() => t.close());

const call = async (method: string, path: string, key: string, fields?: Record<string, string>): Promise<ReadResponse> =>
  read(await t.fetch(path, { method, headers: { Authorization: key }, body: fields ? form(fields) : undefined }));
const shareIdOf = (body: string) => /<entry>\s*<id>([A-Za-z0-9]{22})<\/id>/.exec(body)?.[1] ?? assert.fail(`no share id in ${body}`);

/** The whole feed of API.md 3 around the given entries (each a list of lines inside <entry>). */
function feed(title: string, selfPath: string, entries: string[][], updated = UPDATED): string {
  const web = t.url;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ed="${web}/developers">`,
    `  <title>${title}</title>`,
    `  <id>${t.url}${selfPath}</id>`,
    `  <updated>${updated}</updated>`,
    '  <author>',
    `    <name>${web}</name>`,
    '  </author>',
    ...entries.flatMap((lines) => ['  <entry>', ...lines.map((line) => `    ${line}`), '  </entry>']),
    `  <link rel="self" href="${selfPath.split('?')[0]}"/>`,
    '</feed>',
    '',
  ].join('\n');
}

/** The entry of one share, in the order, with ed:fast last. */
function entry(id: string, s: { title: string; target: string; expires: string; max: string; downloads: number; protected: 'yes' | 'no'; fast: 'yes' | 'no' }) {
  return [
    `<id>${id}</id>`,
    `<title>${s.title}</title>`,
    `<link title="share_link" href="${t.url}/s/${id}"/>`,
    `<ed:target>${s.target}</ed:target>`,
    `<ed:expires>${s.expires}</ed:expires>`,
    `<ed:max_downloads>${s.max}</ed:max_downloads>`,
    `<ed:downloads>${s.downloads}</ed:downloads>`,
    `<ed:protected>${s.protected}</ed:protected>`,
    `<ed:fast>${s.fast}</ed:fast>`,
  ];
}

describe('shares API', () => {
  test('create, get, change, list and revoke, each answer whole as the spec writes it', async () => {
    // A file share with every option: expires in 7 days, a password, at most 5 downloads.
    const created = await call('POST', '/shares', owner.key, { file: fileId, expires_in: '604800', password: 'open sesame', max_downloads: '5' });
    const id = shareIdOf(created.body);
    assert.equal(created.status, 201);
    assert.match(created.headers.get('content-type') ?? '', /^application\/atom\+xml/);
    assert.equal(created.headers.get('cache-control'), 'no-store', 'the link is the key: never cached');
    const fileShare = {
      title: 'report 2026 &lt;final&gt; &amp; more.pdf',
      target: fileId,
      expires: '2026-11-28 10:04:05',
      max: '5',
      downloads: 0,
      protected: 'yes' as const,
      fast: 'no' as const,
    };
    assert.equal(created.body, feed('Share', '/shares', [entry(id, fileShare)]));

    const shown = await call('GET', `/shares/${id}`, owner.key);
    assert.equal(shown.status, 200);
    assert.equal(shown.body, feed('Share', `/shares/${id}`, [entry(id, fileShare)]));

    // A folder share with nothing set: never expires (empty, never self-closed), unlimited.
    clock.advance(1000);
    const folderShare = await call('POST', '/shares', owner.key, { folder: folderId, fast: '1' });
    const folderShareId = shareIdOf(folderShare.body);
    const plainFolder = { title: 'Holiday photos', target: folderId, expires: '', max: '', downloads: 0, protected: 'no' as const, fast: 'yes' as const };
    assert.equal(folderShare.status, 201);
    assert.equal(folderShare.body, feed('Share', '/shares', [entry(folderShareId, plainFolder)], 'Sat, 21 Nov 2026 10:04:06 +0000'));
    clock.advance(-1000);

    // Change: never expires, no password, unlimited, fast; the count so far stays.
    const changed = await call('PUT', `/shares/${id}`, owner.key, { expires_in: '0', password: '', max_downloads: '0', fast: '1' });
    assert.equal(changed.status, 200);
    const open = { ...fileShare, expires: '', max: '', protected: 'no' as const, fast: 'yes' as const };
    assert.equal(changed.body, feed('Share', `/shares/${id}`, [entry(id, open)]));
    // Only what is sent changes: a new limit, the rest as it was.
    const limited = await call('PUT', `/shares/${id}`, owner.key, { max_downloads: '3', expires_in: '60' });
    assert.equal(limited.body, feed('Share', `/shares/${id}`, [entry(id, { ...open, max: '3', expires: '2026-11-21 10:05:05' })]));

    // The list: newest first.
    const listed = await call('GET', '/shares', owner.key);
    assert.equal(listed.status, 200);
    assert.equal(listed.headers.get('cache-control'), 'no-store');
    assert.equal(
      listed.body,
      feed('Share list', '/shares', [entry(folderShareId, plainFolder), entry(id, { ...open, max: '3', expires: '2026-11-21 10:05:05' })]),
    );
    assert.equal((await call('GET', '/shares', other.key)).body, feed('Share list', '/shares', []), 'another account sees none of them');

    // Revoke: the answer shows the share as it was; from then on it is gone.
    const revoked = await call('DELETE', `/shares/${id}`, owner.key);
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body, feed('Share', `/shares/${id}`, [entry(id, { ...open, max: '3', expires: '2026-11-21 10:05:05' })]));
    assertAtomError(await call('GET', `/shares/${id}`, owner.key), 404, 'errorShareNotFound', 'Share does not exist or was revoked');
    assertAtomError(await call('PUT', `/shares/${id}`, owner.key, { max_downloads: '9' }), 404, 'errorShareNotFound');
    assertAtomError(await call('DELETE', `/shares/${id}`, owner.key), 404, 'errorShareNotFound');
    assert.equal((await call('GET', '/shares', owner.key)).body, feed('Share list', '/shares', [entry(folderShareId, plainFolder)]));
    await call('DELETE', `/shares/${folderShareId}`, owner.key);
  });

  test("ownership: another account's share is errorShareNotFound; only your own active files and folders can be shared", async () => {
    const id = shareIdOf((await call('POST', '/shares', owner.key, { file: fileId })).body);
    for (const [method, fields] of [['GET'], ['PUT', { max_downloads: '1' }], ['DELETE']] as const) {
      assertAtomError(await call(method, `/shares/${id}`, other.key, fields), 404, 'errorShareNotFound');
    }
    assert.equal((await t.server.services.store.shares.byId(id))?.maxDownloads, null, 'nothing changed');
    assertAtomError(await call('POST', '/shares', other.key, { file: fileId }), 403, 'errorPermissionDenied', 'The file belongs to another account');
    assertAtomError(await call('POST', '/shares', other.key, { folder: folderId }), 403, 'errorPermissionDenied');
    assertAtomError(await call('POST', '/shares', owner.key, { file: 'ZZZZZZZZZZ' }), 404, 'errorFileNotFound');
    assertAtomError(await call('POST', '/shares', owner.key, { folder: 'ZZZZZZZZZZ' }), 404, 'errorFolderNotFound');
    assertAtomError(await call('GET', '/shares/not-a-share', owner.key), 404, 'errorShareNotFound');
    assertAtomError(await call('GET', '/shares', 'wrong key'), 401, 'errorPermissionDenied', 'Wrong apikey');
    // A blocked file cannot be shared.
    const blocked = await t.upload(owner.key, 'blocked.txt', 'to be blocked');
    await t.server.services.files.block(blocked.id);
    assertAtomError(await call('POST', '/shares', owner.key, { file: blocked.id }), 403, 'errorPermissionDenied', 'Blocked files cannot be shared');
    await call('DELETE', `/shares/${id}`, owner.key);
  });

  test('bad fields are errorWrongParameters (400) with a clear message, and nothing is stored', async () => {
    const before = (await t.server.services.store.shares.list({ ownerId: owner.account.id, limit: 100 })).length;
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /exactly one of file and folder/],
      [{ file: fileId, folder: folderId }, /exactly one of file and folder/],
      [{ file: fileId, expires_in: '0' }, /at least 1 second/],
      [{ file: fileId, expires_in: '-5' }, /whole number of seconds/],
      [{ file: fileId, expires_in: '1.5' }, /whole number of seconds/],
      [{ file: fileId, expires_in: 'tomorrow' }, /whole number of seconds/],
      [{ file: fileId, expires_in: '99999999999' }, /at most 3153600000 seconds/],
      [{ file: fileId, max_downloads: '0' }, /max_downloads must be a whole number from 1/],
      [{ file: fileId, max_downloads: '-1' }, /max_downloads must be a whole number from 1/],
      [{ file: fileId, max_downloads: 'five' }, /max_downloads/],
      [{ file: fileId, max_downloads: '99999999999' }, /max_downloads/],
      [{ file: fileId, fast: 'yes' }, /fast must be 1 or 0/],
      [{ file: fileId, password: 'x'.repeat(1025) }, /password must be at most 1024 characters/],
    ];
    for (const [fields, message] of cases) {
      assertAtomError(await call('POST', '/shares', owner.key, fields), 400, 'errorWrongParameters', message);
    }
    const id = shareIdOf((await call('POST', '/shares', owner.key, { file: fileId })).body);
    for (const [fields, message] of [
      [{ expires_in: '-1' }, /whole number of seconds/],
      [{ max_downloads: '-1' }, /or 0 for unlimited/],
      [{ fast: '2' }, /fast must be 1 or 0/],
      [{ file: fileId }, /cannot be changed/],
    ] as Array<[Record<string, string>, RegExp]>) {
      assertAtomError(await call('PUT', `/shares/${id}`, owner.key, fields), 400, 'errorWrongParameters', message);
    }
    // A password in the query string is no password: the share is created without one.
    const viaQuery = await call('POST', '/shares?password=hunter2', owner.key, { file: fileId });
    assert.match(viaQuery.body, /<ed:protected>no<\/ed:protected>/);
    const after = await t.server.services.store.shares.list({ ownerId: owner.account.id, limit: 100 });
    assert.equal(after.length, before + 2, 'only the two valid shares were stored');
    for (const share of after) await call('DELETE', `/shares/${share.id}`, owner.key);
  });

  test('paging: limit and cursor as for GET /files, newest first, every share once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      ids.unshift(shareIdOf((await call('POST', '/shares', owner.key, { file: fileId })).body));
    }
    clock.set(T0);
    const seen: string[] = [];
    let path: string | null = '/shares?limit=2';
    for (let page = 0; path !== null && page < 10; page++) {
      const response: ReadResponse = await call('GET', path, owner.key);
      assert.equal(response.status, 200, response.body);
      seen.push(...[...response.body.matchAll(/<entry>\s*<id>([A-Za-z0-9]{22})<\/id>/g)].map((m) => m[1]!));
      const next: string | undefined = /<link rel="next" href="([^"]+)"\/>/.exec(response.body)?.[1]?.replaceAll('&amp;', '&');
      path = next ?? null;
    }
    assert.deepEqual(seen, ids);
    assertAtomError(await call('GET', '/shares?cursor=bogus', owner.key), 400, 'errorBadRequest');
    assertAtomError(await call('GET', '/shares?limit=0', owner.key), 400, 'errorBadRequest');
    for (const id of ids) await call('DELETE', `/shares/${id}`, owner.key);
  });

  test('every create, change and revoke is in the audit log, without the password', async () => {
    const id = shareIdOf((await call('POST', '/shares', owner.key, { file: fileId, password: 'swordfish', max_downloads: '2' })).body);
    await call('PUT', `/shares/${id}`, owner.key, { password: 'marlin' });
    await call('DELETE', `/shares/${id}`, owner.key);
    const entries = (await t.server.services.audit.list({ limit: 100, action: 'shares.' })).filter((e) => e.object === `share:${id}`);
    assert.deepEqual(
      entries.map((e) => [e.action, e.actor]),
      [
        ['shares.revoke', `account:${owner.login}`],
        ['shares.change', `account:${owner.login}`],
        ['shares.create', `account:${owner.login}`],
      ],
    );
    assert.equal(entries[2]!.details, `file:${fileId} expires=never max_downloads=2 protected=yes fast=no`);
    for (const e of entries) assert.doesNotMatch(e.details, /swordfish|marlin/);
  });
});

describe('operator settings for shares', () => {
  let s: TestServer;
  let acc: TestAccount;
  let file: string;
  before(async () => {
    s = await startTestServer({ sharePasswordRequired: true, shareMaxExpiryMs: 3_600_000 });
    acc = await s.account();
    file = (await s.upload(acc.key, 'a.txt', 'aaa')).id;
  });
  after(() => s.close());
  const on = async (method: string, path: string, fields: Record<string, string>) =>
    read(await s.fetch(path, { method, headers: { Authorization: acc.key }, body: form(fields) }));

  test('a password is required; expiry is capped (absent takes the cap, never and longer are refused)', async () => {
    assertAtomError(await on('POST', '/shares', { file }), 400, 'errorWrongParameters', 'this server requires a password on every share');
    assertAtomError(await on('POST', '/shares', { file, password: '' }), 400, 'errorWrongParameters', /requires a password/);
    assertAtomError(await on('POST', '/shares', { file, password: 'pw', expires_in: '3601' }), 400, 'errorWrongParameters', /at most 3600 seconds/);
    const capped = await on('POST', '/shares', { file, password: 'pw' });
    assert.equal(capped.status, 201, capped.body);
    const id = shareIdOf(capped.body);
    const share = await s.server.services.store.shares.byId(id);
    assert.ok(share?.expiresAt && Math.abs(share.expiresAt - share.createdAt - 3_600_000) < 1000, 'absent expiry takes the cap');
    assert.equal((await on('POST', '/shares', { file, password: 'pw', expires_in: '3600' })).status, 201);
    assertAtomError(await on('PUT', `/shares/${id}`, { expires_in: '0' }), 400, 'errorWrongParameters', /at most 3600 seconds/);
    assertAtomError(await on('PUT', `/shares/${id}`, { password: '' }), 400, 'errorWrongParameters', /requires a password/);
    assert.equal((await on('PUT', `/shares/${id}`, { password: 'new one', expires_in: '10' })).status, 200);
  });
});
