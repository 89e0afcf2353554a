/**
 * File expiry (issue 25), over HTTP on the run's backend: `expires_in` on uploads (the
 * multipart field before and after the file, the tus metadata), the `Filehaven-Expires`
 * header beside SPEC's unchanged bodies, `PUT /files/<id>;expiry`, the operator's default
 * and cap, and an expired file behaving as deleted everywhere until gc deletes it (and
 * removes its bytes unless a live twin still points at them).
 *
 * The server runs on a TestClock: expiry is decided per request against it, so moving it
 * past a file's expiry is the same as waiting, without any timing in the test.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Browser, csrfOf } from '../helpers/browser.js';
import { directLink, sha256 } from '../helpers/downloads.js';
import { assertGoldenLines, replaceLine, type Slot, substitute, xmlBlocks } from '../helpers/golden-lines.js';
import { fieldPart, filePart, multipartBody } from '../helpers/raw-upload.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';
import { createUpload, patchUpload } from '../helpers/tus.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'API.md');
/** API.md's upload example: SPEC's body, which an upload with an expiry must keep byte for byte. */
const UPLOAD_FEED = xmlBlocks(readFileSync(FIXTURE, 'utf8')).find((lines) => lines[0] === '<?xml version="1.0" encoding="UTF-8"?>')!;
const REPORT_NAME = 'report 2026.pdf';
const REPORT = Buffer.alloc(48213, 'filehaven golden format\n');
const NOW = '2026-11-21T10:04:05Z';
const ATOM_TYPE = 'application/atom+xml; charset=utf-8';
const DAY = 86_400;

const SLOTS: Slot[] = [
  { token: 'K7Q2M9X4PA', name: 'fileId', pattern: '[A-Z0-9]{10}' },
  { token: '3f9c...e1', name: 'secret', pattern: '[0-9a-f]{32}' },
  { token: '{file_id}', name: 'fileId', pattern: '[A-Z0-9]{10}' },
];

/** A whole feed in the upload example's frame, with another title, request path and entry. */
function feed(title: string, selfPath: string, entry: readonly string[]): string[] {
  const start = UPLOAD_FEED.indexOf('  <entry>');
  const end = UPLOAD_FEED.indexOf('  </entry>');
  let head = replaceLine(UPLOAD_FEED.slice(0, start), '  <title>File upload result</title>', `  <title>${title}</title>`);
  head = replaceLine(head, '  <id>{base_url}/files</id>', `  <id>{base_url}${selfPath}</id>`);
  return [...head, ...entry, ...replaceLine(UPLOAD_FEED.slice(end + 1), '  <link rel="self" href="/files"/>', `  <link rel="self" href="${selfPath}"/>`)];
}

const errorEntry = (code: string, message: string) => [
  '  <entry>',
  `    <title>${code}</title>`,
  `    <content type="text">${message}</content>`,
  '  </entry>',
];

/** The PUT /files/<id>;expiry answer written from the issue: feed `File expiry`, entry id, title, ed:expires. */
const expiryFeed = (selfPath: string, expires: string) =>
  feed('File expiry', selfPath, [
    '  <entry>',
    '    <id>{file_id}</id>',
    `    <title>${REPORT_NAME}</title>`,
    `    <ed:expires>${expires}</ed:expires>`,
    '  </entry>',
  ]);

/** Where a multipart upload puts `expires_in` relative to the file part. */
type FieldOrder = 'before' | 'after';

/** A hand-written multipart body: the `upload` part and the `expires_in` field in the order asked. */
function multipart(name: string, content: Buffer, fields: Array<[string, string]>, order: FieldOrder): { body: Buffer; type: string } {
  const boundary = `----expiry${randomBytes(8).toString('hex')}`;
  const field = ([key, value]: [string, string]) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${value}\r\n`);
  const file = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    content,
    Buffer.from('\r\n'),
  ]);
  const fieldParts = fields.map(field);
  const parts = order === 'before' ? [...fieldParts, file] : [file, ...fieldParts];
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

describe('file expiry', { timeout: 300_000 }, () => {
  let srv: TestServer;
  let clock: TestClock;
  let ada: TestAccount;
  let bob: TestAccount;

  const web = () => srv.config.webUrl ?? srv.url;
  const fixed = () => ({ '{ed_namespace}': `${web()}/developers`, '{base_url}': srv.url, '{web_url}': web() });
  const auth = (account: TestAccount, init: RequestInit = {}): RequestInit => ({
    ...init,
    headers: { ...(init.headers as Record<string, string> | undefined), Authorization: account.key },
  });

  function uploadWith(account: TestAccount, fields: Array<[string, string]>, order: FieldOrder = 'before', content = REPORT, name = REPORT_NAME) {
    const { body, type } = multipart(name, content, fields, order);
    return srv.fetch('/files', auth(account, { method: 'POST', headers: { 'Content-Type': type }, body: new Uint8Array(body) }));
  }

  /** The upload's answer is SPEC's body exactly; returns the file id. */
  async function goldenUpload(response: Response): Promise<string> {
    const body = await response.text();
    assert.equal(response.status, 201, body);
    assert.equal(response.headers.get('content-type'), ATOM_TYPE);
    return assertGoldenLines(body, substitute(UPLOAD_FEED, fixed()), SLOTS).get('fileId')!;
  }

  async function expectError(response: Response, status: number, code: string): Promise<string> {
    const body = await response.text();
    assert.equal(response.status, status, body);
    assert.match(body, new RegExp(`<title>${code}</title>`), body);
    return body;
  }

  /** Ada's stored files through GET /files (every state the listing shows). */
  async function listed(account: TestAccount, query = ''): Promise<string[]> {
    const response = await srv.fetch(`/files${query}`, auth(account));
    const body = await response.text();
    assert.equal(response.status, 200, body);
    return [...body.matchAll(/<entry>\s*<id>([^<]+)<\/id>/g)].map((m) => m[1]!);
  }

  before(async () => {
    clock = new TestClock();
    srv = await startTestServer({}, clock);
    ada = await srv.account({ login: 'ada', premiumDays: 30, trafficBytes: 10 * 1024 ** 3 });
    bob = await srv.account({ login: 'bob', premiumDays: 30, trafficBytes: 10 * 1024 ** 3 });
    clock.set(NOW);
  });
  after(() => srv.close());

  for (const order of ['before', 'after'] as const) {
    test(`expires_in ${order} the file part: SPEC's body exactly, and Filehaven-Expires in the API's date format`, async () => {
      clock.set(NOW);
      const response = await uploadWith(ada, [['expires_in', '3600']], order);
      assert.equal(response.headers.get('filehaven-expires'), '2026-11-21 11:04:05');
      const id = await goldenUpload(response);

      // GET /files/<id>: SPEC's File Full info body, with the header beside it.
      const details = await srv.fetch(`/files/${id}`, auth(ada));
      assert.equal(details.headers.get('filehaven-expires'), '2026-11-21 11:04:05');
      const expected = feed('File Full info', '/files/{file_id}', [
        '  <entry>',
        '    <id>{file_id}</id>',
        `    <title>${REPORT_NAME}</title>`,
        '    <ed:status>A</ed:status>',
        '    <link href="{web_url}/{file_id}/report%202026.pdf" rel="enclosure" length="48213"/>',
        '  </entry>',
      ]);
      assertGoldenLines(await details.text(), substitute(expected, fixed()), SLOTS, new Map([['fileId', id]]));
    });
  }

  test('an upload without expires_in (and no operator default) never expires: no header', async () => {
    const response = await uploadWith(ada, [], 'before');
    assert.equal(response.headers.get('filehaven-expires'), null);
    const id = await goldenUpload(response);
    assert.equal((await srv.fetch(`/files/${id}`, auth(ada))).headers.get('filehaven-expires'), null);
  });

  test('a bad expires_in, before or after the file, is errorWrongParameters and nothing is stored', async () => {
    const carol = await srv.account({ login: 'carol' });
    const blobsBefore = await srv.storage.blobKeys();
    const bad = ['0', '-1', '-3600', '1.5', '1e3', 'soon', 'one day', '', ' ', '0x10', '99999999999999', String(100 * 365 * DAY + 1)];
    for (const order of ['before', 'after'] as const) {
      for (const value of bad) {
        // Fresh content each time: a refused upload must leave no bytes of its own anywhere.
        const response = await uploadWith(carol, [['expires_in', value]], order, randomBytes(70_000), 'refused.bin');
        await expectError(response, 400, 'errorWrongParameters');
      }
      const twice = await uploadWith(
        carol,
        [
          ['expires_in', '60'],
          ['expires_in', '60'],
        ],
        order,
        randomBytes(1000),
      );
      await expectError(twice, 400, 'errorWrongParameters');
    }
    assert.deepEqual(await listed(carol), [], 'no file row');
    assert.deepEqual(await srv.storage.blobKeys(), blobsBefore, 'no new bytes');
    assert.deepEqual(await srv.storage.staged(), [], 'nothing left in staging');
  });

  test('PUT /files/<id>;expiry changes it (0 = never), for the owner only, with a golden answer', async () => {
    clock.set(NOW);
    const id = await goldenUpload(await uploadWith(ada, [], 'before'));
    const put = (account: TestAccount, ref: string, value?: string) =>
      srv.fetch(
        `/files/${ref}`,
        auth(account, { method: 'PUT', body: value === undefined ? new URLSearchParams() : new URLSearchParams({ expires_in: value }) }),
      );

    const set = await put(ada, `${id};expiry`, String(7 * DAY));
    assert.equal(set.status, 200);
    assert.equal(set.headers.get('content-type'), ATOM_TYPE);
    assert.equal(set.headers.get('filehaven-expires'), '2026-11-28 10:04:05');
    const selfPath = `/files/${id};expiry`;
    assertGoldenLines(await set.text(), substitute(expiryFeed(selfPath, '2026-11-28 10:04:05'), fixed()), SLOTS, new Map([['fileId', id]]));
    assert.equal((await srv.fetch(`/files/${id}`, auth(ada))).headers.get('filehaven-expires'), '2026-11-28 10:04:05');

    // %3B like ;DirectLink, and POST with _method=PUT (API.md 2).
    const encoded = await put(ada, `${id}%3Bexpiry`, '60');
    assert.equal(encoded.status, 200, await encoded.clone().text());
    assert.equal(encoded.headers.get('filehaven-expires'), '2026-11-21 10:05:05');
    const overridden = await srv.fetch(`/files/${id};expiry`, auth(ada, { method: 'POST', body: new URLSearchParams({ _method: 'PUT', expires_in: '120' }) }));
    assert.equal(overridden.status, 200);
    assert.equal(overridden.headers.get('filehaven-expires'), '2026-11-21 10:06:05');

    // 0 = never: an empty ed:expires, no header.
    const never = await put(ada, `${id};expiry`, '0');
    assert.equal(never.status, 200);
    assert.equal(never.headers.get('filehaven-expires'), null);
    assertGoldenLines(await never.text(), substitute(expiryFeed(selfPath, ''), fixed()), SLOTS, new Map([['fileId', id]]));
    assert.equal((await srv.fetch(`/files/${id}`, auth(ada))).headers.get('filehaven-expires'), null);

    // Others, unknown ids and bad values.
    const foreign = await put(bob, `${id};expiry`, '60');
    assertGoldenLines(
      await foreign.text(),
      substitute(feed('Error', selfPath, errorEntry('errorPermissionDenied', 'The file belongs to another account')), fixed()),
      SLOTS,
      new Map([['fileId', id]]),
    );
    assert.equal(foreign.status, 403);
    await expectError(await put(ada, 'ZZZZZZZZZZ;expiry', '60'), 404, 'errorFileNotFound');
    await expectError(await put(ada, 'not-an-id;expiry', '60'), 404, 'errorFileNotFound');
    await expectError(await put(ada, `${id};expiry`), 400, 'errorWrongParameters');
    for (const value of ['-1', 'tomorrow', '2.5', '99999999999999', '']) await expectError(await put(ada, `${id};expiry`, value), 400, 'errorWrongParameters');
    await expectError(await srv.fetch(`/files/${id};expiry`, auth(ada)), 405, 'errorMethodNotAllowed');
    assert.equal((await srv.fetch(`/files/${id}`, auth(ada))).headers.get('filehaven-expires'), null, 'the refusals changed nothing');
  });

  test('an expired file behaves as deleted everywhere; a copy made before lives on', async () => {
    clock.set(NOW);
    const folderBody = await (
      await srv.fetch('/folders', auth(ada, { method: 'POST', body: new URLSearchParams({ name: `Expiring ${randomBytes(3).toString('hex')}` }) }))
    ).text();
    const folderId = /<entry>\s*<id>([^<]+)<\/id>/.exec(folderBody)![1]!;
    const otherFolderBody = await (
      await srv.fetch('/folders', auth(ada, { method: 'POST', body: new URLSearchParams({ name: `Other ${randomBytes(3).toString('hex')}` }) }))
    ).text();
    const otherFolderId = /<entry>\s*<id>([^<]+)<\/id>/.exec(otherFolderBody)![1]!;

    const content = randomBytes(5000);
    const upload = await uploadWith(ada, [['expires_in', '60']], 'after', content, 'short-lived.bin');
    assert.equal(upload.status, 201);
    const body = await upload.text();
    const id = /<entry>\s*<id>([^<]+)<\/id>/.exec(body)![1]!;
    const downloadLink = /title="download_link" href="([^"]+)"/.exec(body)![1]!;
    const keeper = await uploadWith(ada, [], 'before', randomBytes(4000), 'keeper.bin');
    const keeperId = /<entry>\s*<id>([^<]+)<\/id>/.exec(await keeper.text())![1]!;
    const moved = await srv.fetch(
      `/folders/${folderId};files`,
      auth(ada, { method: 'PUT', body: new URLSearchParams({ 'files[0]': id, 'files[1]': keeperId }) }),
    );
    assert.equal(moved.status, 200, await moved.clone().text());
    const copyBody = await (await srv.fetch(`/files/copy/${id}`, auth(bob, { method: 'POST' }))).text();
    const copyId = /<entry>\s*<id>([^<]+)<\/id>/.exec(copyBody)![1]!;
    const direct = await directLink(srv, ada.key, id);

    // Still alive at one second before its expiry.
    clock.advance(59_000);
    assert.equal((await srv.fetch(`/files/${id}`, auth(ada))).status, 200);
    assert.equal((await fetch(`${downloadLink.replace(/&amp;/g, '&')}?download`)).status, 200);
    assert.ok((await listed(ada)).includes(id));

    // From its expiry on: gone, though gc has not run.
    clock.advance(1000);
    await expectError(await srv.fetch(`/files/${id}`, auth(ada)), 404, 'errorFileNotFound');
    assert.equal((await fetch(downloadLink.replace(/&amp;/g, '&'))).status, 404, 'download page');
    assert.equal((await fetch(`${downloadLink.replace(/&amp;/g, '&')}?download`)).status, 404, 'raw download');
    await expectError(await srv.fetch(`/files/${id};DirectLink`, auth(ada)), 404, 'errorFileNotFound');
    await expectError(await fetch(direct, { headers: { Authorization: ada.key } }), 404, 'errorFileNotFound');
    await expectError(await srv.fetch(`/files/copy/${id}`, auth(bob, { method: 'POST' })), 404, 'errorFileNotFound');
    await expectError(
      await srv.fetch(`/folders/${otherFolderId};files`, auth(ada, { method: 'PUT', body: new URLSearchParams({ 'files[0]': id }) })),
      422,
      'errorFolderFilesAddFailed',
    );
    await expectError(
      await srv.fetch(`/files/${id};expiry`, auth(ada, { method: 'PUT', body: new URLSearchParams({ expires_in: '0' }) })),
      404,
      'errorFileNotFound',
    );
    const listing = await listed(ada);
    assert.ok(!listing.includes(id), 'GET /files');
    assert.ok(listing.includes(keeperId));
    assert.ok(!(await listed(ada, `?folder=${folderId}`)).includes(id), 'GET /files?folder=');
    const folder = await (await srv.fetch(`/folders/${folderId}`, auth(ada))).text();
    assert.ok(!folder.includes(id), folder);
    assert.match(folder, /<ed:files>1<\/ed:files>/, 'the folder counts only the live file');
    assert.match(folder, /length="4000"/, 'and only its bytes');
    const folders = await (await srv.fetch('/folders', auth(ada))).text();
    assert.match(folders, new RegExp(`<id>${folderId}</id>[\\s\\S]*?<ed:files>1</ed:files>`), folders);
    const page = await (await fetch(`${web()}/folder/${folderId}`)).text();
    assert.ok(!page.includes('short-lived.bin') && page.includes('keeper.bin'), 'the folder page');
    const zip = Buffer.from(await (await fetch(`${web()}/folder/${folderId}/zip`)).arrayBuffer());
    assert.ok(zip.includes('keeper.bin') && !zip.includes('short-lived.bin'), 'the folder ZIP');
    // The owner's delete and the delete link find nothing either.
    await expectError(await srv.fetch(`/files/${id}`, auth(ada, { method: 'DELETE' })), 404, 'errorFileNotFound');

    // The copy is bob's own file, with the server's default (never): still there.
    const copy = await srv.fetch(`/files/${copyId}`, auth(bob));
    assert.equal(copy.status, 200);
    assert.equal(copy.headers.get('filehaven-expires'), null);
    // And the folder, holding only the expired file now, can be removed.
    const moveKeeperOut = await srv.fetch(`/folders/${otherFolderId};files`, auth(ada, { method: 'PUT', body: new URLSearchParams({ 'files[0]': keeperId }) }));
    assert.equal(moveKeeperOut.status, 200);
    const removed = await srv.fetch(`/folders/${folderId}`, auth(ada, { method: 'DELETE' }));
    assert.equal(removed.status, 200, await removed.clone().text());
    assert.equal(sha256(content).length, 64);
  });

  test('gc deletes expired files and removes their bytes, but not the bytes a live twin still points at', async () => {
    clock.set(NOW);
    const shared = randomBytes(9000);
    const alone = randomBytes(8000);
    const twinUp = await uploadWith(ada, [['expires_in', '30']], 'before', shared, 'twin-expiring.bin');
    const twinId = /<entry>\s*<id>([^<]+)<\/id>/.exec(await twinUp.text())![1]!;
    const liveUp = await uploadWith(bob, [], 'before', shared, 'twin-live.bin');
    const liveText = await liveUp.text();
    const liveLink = /title="download_link" href="([^"]+)"/.exec(liveText)![1]!.replace(/&amp;/g, '&');
    const aloneUp = await uploadWith(ada, [['expires_in', '30']], 'after', alone, 'alone.bin');
    const aloneId = /<entry>\s*<id>([^<]+)<\/id>/.exec(await aloneUp.text())![1]!;
    const sharedKey = (await srv.storage.keyOf(sha256(shared)))!;
    const aloneKey = (await srv.storage.keyOf(sha256(alone)))!;
    assert.ok(sharedKey && aloneKey);

    // Before the expiry gc leaves both alone.
    await srv.server.services.gc.run();
    assert.ok(await srv.storage.hasBytes(aloneKey));

    clock.advance(31_000);
    const dry = await srv.server.services.gc.run({ dryRun: true });
    assert.ok(dry.filesExpired >= 2, `a dry run counts them: ${JSON.stringify(dry)}`);
    const report = await srv.server.services.gc.run();
    assert.ok(report.filesExpired >= 2, JSON.stringify(report));
    const store = srv.server.services.store;
    assert.equal((await store.files.byId(twinId))?.status, 'D');
    assert.equal((await store.files.byId(aloneId))?.status, 'D');
    assert.equal(await srv.storage.keyOf(sha256(alone)), null, 'the expired file’s blob row is gone');
    assert.equal(await srv.storage.hasBytes(aloneKey), false, 'and its bytes');
    assert.equal(await srv.storage.keyOf(sha256(shared)), sharedKey, 'the twin’s blob stays');
    assert.ok(await srv.storage.hasBytes(sharedKey));
    const download = await fetch(`${liveLink}?download`);
    assert.equal(download.status, 200);
    assert.equal(sha256(Buffer.from(await download.arrayBuffer())), sha256(shared), 'the live twin still downloads its bytes');
    assert.equal((await srv.server.services.gc.run({ dryRun: true })).filesExpired, 0, 'nothing left to expire');
  });

  test('the web form takes expires_in before its files, refuses a bad one, and My files says when a file expires', async () => {
    clock.set(NOW);
    const dora = await srv.account({ login: 'dora' });
    const b = new Browser(srv.url);
    await b.signIn(dora.login, dora.password);
    const send = async (expiresIn: string) => {
      const csrf = csrfOf((await b.get('/my/files')).body)!;
      const boundary = `----web${randomBytes(6).toString('hex')}`;
      const body = multipartBody(boundary, [
        fieldPart('csrf', csrf),
        fieldPart('expires_in', expiresIn),
        filePart('upload', `web-${expiresIn}.bin`, randomBytes(500)),
      ]);
      return fetch(`${srv.url}/my/files/upload`, {
        method: 'POST',
        headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, Accept: 'application/json', Cookie: b.cookieHeader() ?? '' },
        body: new Uint8Array(body),
      });
    };
    assert.equal((await send(String(3 * DAY))).status, 201);
    assert.equal((await send('soon')).status, 400);
    const page = (await b.get('/my/files')).body;
    assert.match(page, /<span class="expires" title="2026-11-24 10:04 UTC">expires in 3 days<\/span>/, page);
    assert.ok(!page.includes('web-soon.bin'), 'the refused file is not there');
    clock.advance(2 * DAY * 1000 + 3_600_000);
    assert.match((await b.get('/my/files')).body, /expires in 23 hours/);
  });

  test("the operator console's file search still shows an expired file, marked expired", async () => {
    clock.set(NOW);
    await srv.server.services.accounts.create({ login: 'root-expiry', password: 'operator password', isOperator: true });
    const b = new Browser(srv.url);
    await b.signIn('root-expiry', 'operator password');
    const up = await uploadWith(ada, [['expires_in', '600']], 'before', randomBytes(700), 'console-expiring.bin');
    assert.equal(up.status, 201);
    const search = () => b.get('/console/files?name=console-expiring');
    assert.match((await search()).body, /console-expiring\.bin[\s\S]*expires 2026-11-21 10:14 UTC/);
    clock.advance(600_000);
    const after = (await search()).body;
    assert.match(after, /console-expiring\.bin[\s\S]*<span class="badge state-D" title="since 2026-11-21 10:14 UTC">expired<\/span>/, after);
  });

  test('tus: Upload-Metadata expires_in is checked at creation and applied when the upload is stored', async () => {
    clock.set(NOW);
    const content = randomBytes(3000);
    for (const value of ['0', '-5', 'week', '1.5']) {
      const refused = await createUpload(srv, ada.key, { length: content.length, metadata: { filename: 'tus.bin', expires_in: value } });
      assert.equal(refused.response.status, 400, refused.body);
      assert.match(refused.body, /<title>errorWrongParameters<\/title>/);
      assert.equal(refused.id, '', 'no upload was created');
    }
    const created = await createUpload(srv, ada.key, { length: content.length, metadata: { filename: 'tus.bin', expires_in: String(2 * DAY) } });
    assert.equal(created.response.status, 201, created.body);
    // Stored an hour later: the expiry counts from then.
    clock.advance(3_600_000);
    const finished = await patchUpload(srv, ada.key, created.id, 0, content);
    assert.equal(finished.response.status, 204, finished.body);
    assert.equal(finished.response.headers.get('filehaven-expires'), '2026-11-23 11:04:05');
    const id = finished.response.headers.get('filehaven-file-id')!;
    assert.equal((await srv.fetch(`/files/${id}`, auth(ada))).headers.get('filehaven-expires'), '2026-11-23 11:04:05');

    const plain = await createUpload(srv, ada.key, { length: content.length, metadata: { filename: 'tus-plain.bin' } });
    const plainDone = await patchUpload(srv, ada.key, plain.id, 0, randomBytes(3000));
    assert.equal(plainDone.response.status, 204);
    assert.equal(plainDone.response.headers.get('filehaven-expires'), null);
  });
});

describe('file expiry under the operator settings', { timeout: 120_000 }, () => {
  let srv: TestServer;
  let clock: TestClock;
  let ada: TestAccount;

  before(async () => {
    clock = new TestClock();
    srv = await startTestServer({ fileExpiryDefaultMs: DAY * 1000, fileExpiryMaxMs: 7 * DAY * 1000 }, clock);
    ada = await srv.account({ login: 'ada', premiumDays: 30 });
    clock.set(NOW);
  });
  after(() => srv.close());

  const upload = (fields: Record<string, string>) => {
    const form = new FormData();
    for (const [key, value] of Object.entries(fields)) form.append(key, value);
    form.append('upload', new Blob([new Uint8Array(randomBytes(2000))]), 'capped.bin');
    return srv.fetch('/files', { method: 'POST', headers: { Authorization: ada.key }, body: form });
  };
  const put = (id: string, value: string) =>
    srv.fetch(`/files/${id};expiry`, { method: 'PUT', headers: { Authorization: ada.key }, body: new URLSearchParams({ expires_in: value }) });

  test('the default applies when none is named, the cap refuses longer and never, at upload and on a change', async () => {
    const defaulted = await upload({});
    assert.equal(defaulted.status, 201);
    assert.equal(defaulted.headers.get('filehaven-expires'), '2026-11-22 10:04:05');
    const id = /<entry>\s*<id>([^<]+)<\/id>/.exec(await defaulted.text())![1]!;

    const atCap = await upload({ expires_in: String(7 * DAY) });
    assert.equal(atCap.status, 201);
    assert.equal(atCap.headers.get('filehaven-expires'), '2026-11-28 10:04:05');

    const before = await srv.server.services.store.files.list({ ownerId: ada.account.id, limit: 100 });
    const over = await upload({ expires_in: String(7 * DAY + 1) });
    assert.equal(over.status, 400);
    assert.match(await over.text(), /<title>errorWrongParameters<\/title>/);
    assert.equal((await srv.server.services.store.files.list({ ownerId: ada.account.id, limit: 100 })).length, before.length, 'nothing stored');

    const never = await put(id, '0');
    assert.equal(never.status, 400);
    assert.match(await never.text(), /<title>errorWrongParameters<\/title>/);
    const longer = await put(id, String(8 * DAY));
    assert.equal(longer.status, 400);
    const copy = await srv.fetch(`/files/copy/${id}`, { method: 'POST', headers: { Authorization: ada.key } });
    assert.equal(copy.status, 201);
    assert.equal(copy.headers.get('filehaven-expires'), '2026-11-22 10:04:05', 'a copy gets the default, not the source’s expiry');
    const shorter = await put(id, '3600');
    assert.equal(shorter.status, 200);
    assert.equal(shorter.headers.get('filehaven-expires'), '2026-11-21 11:04:05');
  });
});
