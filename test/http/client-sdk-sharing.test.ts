// The SDK's sharing calls (issue 25) against a real server: shares (create, list, get,
// change, revoke, download with a password and a limit), upload requests (create, list,
// get, change, close, uploads into them by POST and by resumable tus), file expiry; every
// refusal a FilehavenApiError with the code and status.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { FilehavenClient, type Share } from '../../src/client/index.js';
import { randomPayload, sha256 } from '../helpers/downloads.js';
import { failure } from '../helpers/sdk-failure.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

const clock = new TestClock();
let t: TestServer;
let ada: TestAccount;
let bob: TestAccount;
let work: string;
before(async () => {
  t = await startTestServer({}, clock);
  ada = await t.account({ name: 'Ada' });
  bob = await t.account({ name: 'Bob' });
  work = await mkdtemp(path.join(tmpdir(), 'filehaven-sdk-sharing-'));
});
after(async () => {
  await t.close();
  await rm(work, { recursive: true, force: true });
});

const clientOf = (account: TestAccount) => new FilehavenClient({ server: t.url, key: account.key });
/** Someone with a link and no account. */
const stranger = () => new FilehavenClient({ server: t.url });

/** The API's date format (`YYYY-MM-DD HH:MM:SS`, UTC) of the test clock plus `seconds`. */
const inSeconds = (seconds: number) =>
  new Date(clock.now + seconds * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '');

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const SHARE_ID = /^[0-9A-Za-z]{22}$/;

describe('shares', () => {
  test('createShare returns every field; share() reads it again; the password and the limit hold on downloadShare', async () => {
    const client = clientOf(ada);
    const content = randomPayload(200 * 1024);
    const file = await client.upload(new Blob([content]), { name: 'report & <draft>.bin' });
    const share = await client.createShare({ file: file.id }, { expiresIn: 3600, password: 'open sesame', maxDownloads: 2 });
    assert.match(share.id, SHARE_ID);
    assert.deepEqual(share, {
      id: share.id,
      name: 'report & <draft>.bin',
      link: `${t.url}/s/${share.id}`,
      target: file.id,
      expires: inSeconds(3600),
      maxDownloads: 2,
      downloads: 0,
      protected: true,
      fast: false,
    } satisfies Share);
    assert.deepEqual(await client.share(share.id), share);

    // No account needed; the password in its header, never the key.
    const anyone = stranger();
    const none = await failure(anyone.downloadShare(share.link));
    assert.deepEqual([none.code, none.status], ['errorSharePassword', 401]);
    const wrong = await failure(anyone.downloadShare(share.link, { password: 'open says me' }));
    assert.deepEqual([wrong.code, wrong.status], ['errorSharePassword', 401]);
    const first = await anyone.downloadShare(share.link, { password: 'open sesame' });
    assert.equal(first.size, content.length);
    assert.equal(first.name, 'report & <draft>.bin');
    assert.equal(sha256(await readAll(first.body)), sha256(content));
    // A resume further on is not a download of its own.
    const resumed = await anyone.downloadShare(share.link, { password: 'open sesame', offset: 1000, ...(first.etag ? { ifRange: first.etag } : {}) });
    assert.equal(resumed.offset, 1000);
    assert.deepEqual(await readAll(resumed.body), content.subarray(1000));
    assert.equal((await client.share(share.id)).downloads, 1);
    // By id, through the owner's client (which knows the web URL): the second and last.
    const second = await client.downloadShare(share.id, { password: 'open sesame' });
    assert.equal((await readAll(second.body)).length, content.length);
    const spent = await failure(anyone.downloadShare(share.link, { password: 'open sesame' }));
    assert.deepEqual([spent.code, spent.status], ['errorShareDownloadLimit', 410]);
    assert.equal((await client.share(share.id)).downloads, 2);
  });

  test('changeShare: never, no password, unlimited, fast; the count stays and the share downloads freely again', async () => {
    const client = clientOf(ada);
    const file = await client.upload(new Blob(['hello share']), { name: 'hello.txt' });
    const share = await client.createShare({ file: file.id }, { expiresIn: 60, password: 'pw', maxDownloads: 1 });
    await readAll((await stranger().downloadShare(share.link, { password: 'pw' })).body);
    assert.equal((await failure(stranger().downloadShare(share.link, { password: 'pw' }))).code, 'errorShareDownloadLimit');

    const changed = await client.changeShare(share.id, { expiresIn: null, password: null, maxDownloads: null });
    assert.deepEqual(changed, { ...share, expires: null, maxDownloads: null, downloads: 1, protected: false });
    const free = await stranger().downloadShare(share.id);
    assert.equal((await readAll(free.body)).toString(), 'hello share');
    const limited = await client.changeShare(share.id, { expiresIn: 7200, password: 'new', maxDownloads: 5 });
    assert.deepEqual([limited.expires, limited.protected, limited.maxDownloads, limited.downloads], [inSeconds(7200), true, 5, 2]);
    assert.equal((await failure(stranger().downloadShare(share.link, { password: 'pw' }))).code, 'errorSharePassword');
    // Only the fields given change.
    const fastOnly = await client.changeShare(share.id, { fast: true });
    assert.deepEqual(fastOnly, { ...limited, fast: true });
  });

  test('a HEAD tells name and size without counting; its refusals keep their codes though they carry no body', async () => {
    const client = clientOf(ada);
    const file = await client.upload(new Blob(['twelve bytes']), { name: 'head.txt' });
    const share = await client.createShare({ file: file.id }, { password: 'pw', expiresIn: 60 });
    const head = await stranger().downloadShare(share.link, { password: 'pw', method: 'HEAD' });
    assert.deepEqual([head.name, head.size, (await readAll(head.body)).length], ['head.txt', 12, 0]);
    assert.equal((await client.share(share.id)).downloads, 0);
    const wrong = await failure(stranger().downloadShare(share.link, { password: 'nope', method: 'HEAD' }));
    assert.deepEqual([wrong.code, wrong.status], ['errorSharePassword', 401]);
    clock.advance(60_000);
    const expired = await failure(stranger().downloadShare(share.link, { password: 'pw', method: 'HEAD' }));
    assert.deepEqual([expired.code, expired.status], ['errorShareExpired', 410]);
    await client.revokeShare(share.id);
    const revoked = await failure(stranger().downloadShare(share.link, { method: 'HEAD' }));
    assert.deepEqual([revoked.code, revoked.status], ['errorShareNotFound', 404]);
  });

  test('a folder share: the folder as one ZIP, or one file of it', async () => {
    const client = clientOf(ada);
    const folder = await client.createFolder('Holiday photos');
    const a = await client.upload(new Blob(['first file']), { name: 'a.txt', folder: folder.id });
    await client.upload(new Blob(['second file']), { name: 'b.txt', folder: folder.id });
    const share = await client.createShare({ folder: folder.id });
    assert.deepEqual([share.name, share.target, share.protected, share.maxDownloads, share.expires], ['Holiday photos', folder.id, false, null, null]);
    const zip = await readAll((await stranger().downloadShare(share.link)).body);
    assert.equal(zip.subarray(0, 4).toString('latin1'), 'PK\u0003\u0004', 'a ZIP archive');
    assert.ok(zip.includes(Buffer.from('a.txt')) && zip.includes(Buffer.from('b.txt')));
    // One file is named by its reference on the share, as the share's page links it (never its id).
    const page = await (await fetch(share.link)).text();
    const fileRef = /\/download\/([A-Za-z0-9_-]{22})" download>a\.txt</.exec(page)?.[1];
    assert.ok(fileRef, page);
    const one = await stranger().downloadShare(share.link, { file: fileRef });
    assert.equal((await readAll(one.body)).toString(), 'first file');
    // A link to one file of the share says so itself.
    const byLink = await stranger().downloadShare(`${share.link}/download/${fileRef}`);
    assert.equal((await readAll(byLink.body)).toString(), 'first file');
    const byId = await failure(stranger().downloadShare(share.link, { file: a.id }));
    assert.deepEqual([byId.code, byId.status], ['errorFileNotFound', 404]);
  });

  test('listShares pages newest first like listFiles; allShares walks every page', async () => {
    const client = clientOf(bob);
    const file = await client.upload(new Blob(['x']), { name: 'x.txt' });
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push((await client.createShare({ file: file.id })).id);
      clock.advance(1000);
    }
    const first = await client.listShares({ limit: 2 });
    assert.deepEqual(
      first.items.map((s) => s.id),
      [made[2], made[1]],
    );
    assert.ok(first.nextCursor);
    const second = await client.listShares({ limit: 2, cursor: first.nextCursor });
    assert.deepEqual(
      second.items.map((s) => s.id),
      [made[0]],
    );
    assert.equal(second.nextCursor, null);
    const all: string[] = [];
    for await (const share of client.allShares()) all.push(share.id);
    assert.deepEqual(all, [...made].reverse());
  });

  test('revokeShare: the link answers errorShareNotFound from then on; another account never sees a share', async () => {
    const client = clientOf(ada);
    const file = await client.upload(new Blob(['secret']), { name: 's.txt' });
    const share = await client.createShare({ file: file.id });
    // One call at a time: a rejection nobody awaits yet would end the test run.
    for (const call of [
      () => clientOf(bob).share(share.id),
      () => clientOf(bob).revokeShare(share.id),
      () => clientOf(bob).changeShare(share.id, { maxDownloads: 1 }),
    ]) {
      const error = await failure(call());
      assert.deepEqual([error.code, error.status], ['errorShareNotFound', 404]);
    }
    assert.deepEqual(await client.revokeShare(share.id), { id: share.id, name: 's.txt' });
    for (const call of [() => client.share(share.id), () => stranger().downloadShare(share.link), () => client.revokeShare(share.id)]) {
      const error = await failure(call());
      assert.deepEqual([error.code, error.status], ['errorShareNotFound', 404]);
    }
    const unknown = await failure(stranger().downloadShare(`${t.url}/s/${'A'.repeat(22)}`));
    assert.deepEqual([unknown.code, unknown.status], ['errorShareNotFound', 404]);
  });

  test('a share expires on the second: errorShareExpired (410)', async () => {
    const client = clientOf(ada);
    const file = await client.upload(new Blob(['soon gone']), { name: 'soon.txt' });
    const share = await client.createShare({ file: file.id }, { expiresIn: 30 });
    clock.advance(29_000);
    assert.equal((await readAll((await stranger().downloadShare(share.link)).body)).toString(), 'soon gone');
    clock.advance(1000);
    const expired = await failure(stranger().downloadShare(share.link));
    assert.deepEqual([expired.code, expired.status], ['errorShareExpired', 410]);
  });

  test('bad fields are errorWrongParameters (400); a file not yours is not shared (errorPermissionDenied, 403)', async () => {
    const client = clientOf(ada);
    const file = await client.upload(new Blob(['x']), { name: 'x.txt' });
    for (const options of [{ expiresIn: 0 }, { expiresIn: -5 }, { expiresIn: 1e15 }, { maxDownloads: 0 }, { maxDownloads: -1 }]) {
      const error = await failure(client.createShare({ file: file.id }, options));
      assert.deepEqual([error.code, error.status], ['errorWrongParameters', 400], JSON.stringify(options));
    }
    const share = await client.createShare({ file: file.id });
    const negative = await failure(client.changeShare(share.id, { expiresIn: -1 }));
    assert.deepEqual([negative.code, negative.status], ['errorWrongParameters', 400]);
    const theirs = await failure(clientOf(bob).createShare({ file: file.id }));
    assert.deepEqual([theirs.code, theirs.status], ['errorPermissionDenied', 403]);
    await assert.rejects(client.createShare({ file: '../x' }), TypeError);
    await assert.rejects(client.share('a/b'), TypeError);
  });

  test('wrong guesses are throttled: errorSharePassword with 429 and retryAfter, the right password too', async () => {
    const strict = await startTestServer({ loginAttemptsPerMinute: 3 });
    try {
      const owner = await strict.account();
      const client = new FilehavenClient({ server: strict.url, key: owner.key });
      const file = await client.upload(new Blob(['guarded']), { name: 'g.txt' });
      const share = await client.createShare({ file: file.id }, { password: 'right one' });
      const anyone = new FilehavenClient({ server: strict.url });
      let throttled = null;
      for (let guess = 0; guess < 10 && throttled === null; guess++) {
        const error = await failure(anyone.downloadShare(share.link, { password: `wrong ${guess}` }));
        assert.equal(error.code, 'errorSharePassword');
        if (error.status === 429) throttled = error;
        else assert.equal(error.status, 401);
      }
      assert.ok(throttled, 'throttled within 10 guesses');
      assert.ok(throttled.retryAfter !== undefined && throttled.retryAfter > 0, 'Retry-After');
      const right = await failure(anyone.downloadShare(share.link, { password: 'right one' }));
      assert.deepEqual([right.code, right.status], ['errorSharePassword', 429]);
    } finally {
      await strict.close();
    }
  });
});

describe('upload requests', () => {
  test('createUploadRequest returns every field; uploads land in the folder as the owner files; the counts follow', async () => {
    const client = clientOf(ada);
    const folder = await client.createFolder('Inbox');
    const request = await client.createUploadRequest({
      folder: folder.id,
      title: 'Send me <your> drafts',
      message: 'Thanks & see you',
      expiresIn: 86400,
      password: 'drop it',
      maxFiles: 3,
      maxBytes: 1024 * 1024,
      maxFileSize: 512 * 1024,
    });
    assert.match(request.id, SHARE_ID);
    assert.deepEqual(request, {
      id: request.id,
      title: 'Send me <your> drafts',
      link: `${t.url}/r/${request.id}`,
      folderId: folder.id,
      expires: inSeconds(86400),
      maxFiles: 3,
      files: 0,
      maxBytes: 1024 * 1024,
      bytes: 0,
      protected: true,
      maxFileSize: 512 * 1024,
      message: 'Thanks & see you',
    });
    assert.deepEqual(await client.uploadRequest(request.id), request);

    const anyone = stranger();
    const refused = await failure(anyone.uploadToRequest(request.link, new Blob(['x']), { name: 'x.txt', transport: 'post' }));
    assert.deepEqual([refused.code, refused.status], ['errorSharePassword', 401]);
    // POST {web_url}/r/<id>: a stream, read once.
    const posted = await anyone.uploadToRequest(request.link, new Blob(['posted bytes']), { name: 'posted.txt', password: 'drop it', transport: 'post' });
    assert.deepEqual(Object.keys(posted).sort(), ['id', 'name', 'size'], 'no link into the account');
    assert.deepEqual([posted.name, posted.size], ['posted.txt', 12]);
    // tus through {base_url}/uploads, from a file path, resumable.
    const content = randomPayload(300 * 1024);
    const local = path.join(work, 'tus upload.bin');
    await writeFile(local, content);
    const viaTus = await anyone.uploadToRequest(request.id, local, { password: 'drop it', transport: 'tus' });
    assert.deepEqual([viaTus.name, viaTus.size], ['tus upload.bin', content.length]);
    assert.equal((await t.server.services.store.files.byId(viaTus.id))?.sha256, sha256(content));

    const inFolder = await client.listFiles({ folder: folder.id });
    assert.deepEqual(inFolder.items.map((f) => f.id).sort(), [posted.id, viaTus.id].sort());
    const counted = await client.uploadRequest(request.id);
    assert.deepEqual([counted.files, counted.bytes], [2, 12 + content.length]);
  });

  test('a tus upload into a request cut short resumes in a later client (resumeFile), never with a key', async () => {
    const request = await clientOf(ada).createUploadRequest({ password: 'resume me' });
    const content = randomPayload(12 * 1024 * 1024);
    const local = path.join(work, 'resumed into request.bin');
    await writeFile(local, content);
    const resumeFile = path.join(work, 'request-resume', 'uploads.json');
    /** A client with no key whose requests are recorded: `METHOD /path` and whether a key went with it. */
    const recording = () => {
      const seen: string[] = [];
      const client = new FilehavenClient({
        server: t.url,
        resumeFile,
        fetch: (input, init) => {
          const headers = new Headers(init?.headers);
          assert.equal(headers.get('authorization'), null, 'no key is sent');
          seen.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
          return fetch(input, init);
        },
      });
      return { client, seen };
    };
    const controller = new AbortController();
    const reason = new Error('cut');
    await assert.rejects(
      recording().client.uploadToRequest(request.link, local, {
        password: 'resume me',
        transport: 'tus',
        signal: controller.signal,
        onProgress: (sent) => sent > 4 * 1024 * 1024 && controller.abort(reason),
      }),
      (error) => error === reason,
    );
    const second = recording();
    const stored = await second.client.uploadToRequest(request.link, local, { password: 'resume me', transport: 'tus' });
    assert.ok(!second.seen.includes('POST /uploads'), `no new upload: ${second.seen.join(', ')}`);
    assert.ok(
      second.seen.some((line) => /^HEAD \/uploads\/\S+$/.test(line)),
      second.seen.join(', '),
    );
    assert.deepEqual([stored.name, stored.size], ['resumed into request.bin', content.length]);
    assert.equal((await t.server.services.store.files.byId(stored.id))?.sha256, sha256(content));
    assert.equal((await clientOf(ada).uploadRequest(request.id)).files, 1);
  });

  test('the limits: max_file_size, max_files; a closed request takes nothing and its files stay', async () => {
    const client = clientOf(bob);
    const request = await client.createUploadRequest({ maxFiles: 2, maxFileSize: 1000 });
    assert.deepEqual([request.folderId, request.title, request.message, request.protected, request.maxBytes], [null, '', '', false, null]);
    const anyone = stranger();
    const tooBig = await failure(anyone.uploadToRequest(request.id, new Blob([randomPayload(2000)]), { name: 'big.bin' }));
    assert.equal(tooBig.code, 'errorFileSize');
    const a = await anyone.uploadToRequest(request.id, new Blob(['a']), { name: 'a.txt' });
    await anyone.uploadToRequest(request.id, new Blob(['b']), { name: 'b.txt' });
    const third = await failure(anyone.uploadToRequest(request.id, new Blob(['c']), { name: 'c.txt' }));
    assert.equal(third.code, 'errorUploadLimit');

    assert.deepEqual(await client.closeUploadRequest(request.id), { id: request.id, name: '' });
    const closed = await failure(anyone.uploadToRequest(request.id, new Blob(['d']), { name: 'd.txt' }));
    assert.deepEqual([closed.code, closed.status], ['errorShareNotFound', 404]);
    assert.equal((await failure(client.uploadRequest(request.id))).code, 'errorShareNotFound', 'a closed request is gone for its owner too');
    assert.equal((await client.listFiles()).items.filter((f) => f.id === a.id).length, 1, 'the files stay');
  });

  test('changeUploadRequest, listUploadRequests and allUploadRequests; another account sees none of them', async () => {
    const client = clientOf(ada);
    // Newer than the requests of the tests before (same-second ones have no order to test).
    clock.advance(1000);
    const request = await client.createUploadRequest({ title: 'Old', maxFiles: 1, password: 'p' });
    const changed = await client.changeUploadRequest(request.id, { title: 'New', message: 'Hi', maxFiles: null, password: null, expiresIn: 600 });
    assert.deepEqual(changed, { ...request, title: 'New', message: 'Hi', maxFiles: null, protected: false, expires: inSeconds(600) });
    const never = await client.changeUploadRequest(request.id, { expiresIn: null, maxBytes: 4096 });
    assert.deepEqual([never.expires, never.maxBytes, never.title], [null, 4096, 'New']);
    clock.advance(1000);
    const newer = await client.createUploadRequest({ title: 'Newest' });
    const page = await client.listUploadRequests({ limit: 1 });
    assert.deepEqual(
      page.items.map((r) => r.id),
      [newer.id],
    );
    assert.ok(page.nextCursor);
    const all: string[] = [];
    for await (const one of client.allUploadRequests()) all.push(one.id);
    assert.deepEqual(all.slice(0, 2), [newer.id, request.id]);

    for (const call of [() => clientOf(bob).uploadRequest(request.id), () => clientOf(bob).closeUploadRequest(request.id)]) {
      const error = await failure(call());
      assert.deepEqual([error.code, error.status], ['errorShareNotFound', 404]);
    }
    const bad = await failure(client.createUploadRequest({ maxFiles: -2 }));
    assert.deepEqual([bad.code, bad.status], ['errorWrongParameters', 400]);
    const folderless = await failure(client.createUploadRequest({ folder: 'NOSUCHFOLDER' }));
    assert.equal(folderless.code, 'errorFolderNotFound');
  });
});

describe('file expiry', () => {
  test('upload expiresIn (POST and tus) gives expires; setFileExpiry changes it or clears it', async () => {
    const client = clientOf(ada);
    const posted = await client.upload(new Blob(['expiring']), { name: 'e.txt', expiresIn: 3600, transport: 'post' });
    assert.equal(posted.expires, inSeconds(3600));
    const local = path.join(work, 'expiring.bin');
    await writeFile(local, randomPayload(64 * 1024));
    const viaTus = await client.upload(local, { expiresIn: 120, transport: 'tus' });
    assert.equal(viaTus.expires, inSeconds(120));
    const forever = await client.upload(new Blob(['kept']), { name: 'k.txt' });
    assert.equal(forever.expires, undefined, 'no header for a file that never expires');

    assert.deepEqual(await client.setFileExpiry(posted.id, 7200), { id: posted.id, name: 'e.txt', expires: inSeconds(7200) });
    assert.deepEqual(await client.setFileExpiry(posted.id, null), { id: posted.id, name: 'e.txt', expires: null });
    // From its expiry the file behaves as deleted.
    clock.advance(121_000);
    const gone = await failure(client.setFileExpiry(viaTus.id, 60));
    assert.equal(gone.code, 'errorFileNotFound');
  });

  test('bad expiries are errorWrongParameters; another account cannot set one', async () => {
    const client = clientOf(ada);
    for (const expiresIn of [0, -1, 1e15]) {
      const error = await failure(client.upload(new Blob(['x']), { name: 'x.txt', expiresIn, transport: 'post' }));
      assert.deepEqual([error.code, error.status], ['errorWrongParameters', 400], String(expiresIn));
    }
    const file = await client.upload(new Blob(['x']), { name: 'x.txt' });
    const negative = await failure(client.setFileExpiry(file.id, -10));
    assert.deepEqual([negative.code, negative.status], ['errorWrongParameters', 400]);
    const theirs = await failure(clientOf(bob).setFileExpiry(file.id, 60));
    assert.deepEqual([theirs.code, theirs.status], ['errorPermissionDenied', 403]);
  });
});
