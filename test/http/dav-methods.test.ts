// WebDAV's methods (issue 27): GET/HEAD, PUT, MKCOL, DELETE, COPY and MOVE, over HTTP
// against a real server, each checked through WebDAV and then through the API (what a
// WebDAV client made is a file of the account with the right bytes). Limits map to
// WebDAV's statuses; bad paths are 400; a PUT cut halfway leaves nothing.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { FileStatus } from '../../src/domain/types.js';
import { rawRequest } from '../helpers/api-checks.js';
import { eventually } from '../helpers/raw-upload.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const MiB = 1024 * 1024;

let t: TestServer;
before(async () => {
  t = await startTestServer();
});
after(() => t.close());

type Dav = (path: string, init?: { method?: string; headers?: Record<string, string>; body?: BodyInit }) => Promise<Response>;

/** A WebDAV client of an account: Basic with its login and API key. */
function davOf(server: TestServer, account: TestAccount): Dav {
  const authorization = `Basic ${Buffer.from(`${account.login}:${account.key}`).toString('base64')}`;
  return (path, init = {}) => server.fetch(`/dav${path}`, { ...init, headers: { Authorization: authorization, ...init.headers } });
}

/** The request's Destination for a tree path. */
const destination = (server: TestServer, path: string) => ({ Destination: `${server.url}/dav${path}` });

/** The account's live files, from the metadata store the API reads. */
async function liveFiles(account: TestAccount) {
  const files = await t.server.services.store.files.list({ ownerId: account.account.id, states: [FileStatus.Active], limit: 1000 });
  return files;
}

/** A file through the API: its entry in GET /files (title, status) and its download link's bytes; 404 when gone. */
async function apiFile(account: TestAccount, id: string): Promise<{ status: number; title?: string; bytes?: Buffer }> {
  const list = await t.fetch('/files', { headers: { Authorization: account.key } });
  const body = await list.text();
  assert.equal(list.status, 200, body);
  const entry = [...body.matchAll(/<entry>([\s\S]*?)<\/entry>/g)].map((match) => match[1]!).find((text) => text.includes(`<id>${id}</id>`));
  if (!entry || entry.includes('<ed:status>D</ed:status>')) return { status: 404 };
  const title = /<title>([^<]*)<\/title>/.exec(entry)?.[1];
  const link = /title="download_link" href="([^"]+)"/.exec(entry)?.[1];
  assert.ok(link, entry);
  const download = await fetch(`${link}?download=1`);
  assert.equal(download.status, 200);
  return { status: 200, title, bytes: Buffer.from(await download.arrayBuffer()) };
}

async function put(dav: Dav, path: string, body: string | Buffer): Promise<Response> {
  const response = await dav(path, { method: 'PUT', body: typeof body === 'string' ? body : new Uint8Array(body) });
  await response.arrayBuffer();
  return response;
}

async function status(response: Promise<Response>): Promise<number> {
  const done = await response;
  await done.arrayBuffer();
  return done.status;
}

describe('GET, HEAD and PUT', () => {
  test('PUT makes a file of the account (201), with the bytes and SHA-256 the API sees; GET, HEAD, Range, ETag and 304', async () => {
    const alice = await t.account();
    const dav = davOf(t, alice);
    const content = 'hello over WebDAV\n';
    const created = await put(dav, '/hello.txt', content);
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('etag'), `"${sha256(content)}"`);

    const [file] = await liveFiles(alice);
    assert.equal(file?.name, 'hello.txt');
    assert.equal(file?.sha256, sha256(content));
    const seen = await apiFile(alice, file!.id);
    assert.equal(seen.title, 'hello.txt');
    assert.equal(sha256(seen.bytes!), sha256(content));

    const get = await dav('/hello.txt');
    assert.equal(get.status, 200);
    assert.equal(await get.text(), content);
    const etag = get.headers.get('etag');
    assert.equal(etag, `"${sha256(content)}"`);

    const head = await dav('/hello.txt', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(content.length));

    const range = await dav('/hello.txt', { headers: { Range: 'bytes=6-9' } });
    assert.equal(range.status, 206);
    assert.equal(await range.text(), 'over');
    // Through node:http: fetch adds its own cache headers to conditional requests.
    const basic = `Basic ${Buffer.from(`${alice.login}:${alice.key}`).toString('base64')}`;
    const notModified = await rawRequest(t.url, 'GET', '/dav/hello.txt', { headers: { Authorization: basic, 'If-None-Match': etag! } });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.body, '');
    assert.equal(await status(dav('/missing.txt')), 404);

    // A collection answers a small HTML list of its members.
    const listing = await dav('/');
    assert.equal(listing.status, 200);
    assert.match(listing.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await listing.text(), /href="\/dav\/hello\.txt">hello\.txt</);
  });

  test('PUT onto a file replaces it (204): new bytes, the old file deleted; 0 bytes are a file', async () => {
    const bob = await t.account();
    const dav = davOf(t, bob);
    assert.equal((await put(dav, '/doc.txt', 'first version')).status, 201);
    const [old] = await liveFiles(bob);
    const replaced = await put(dav, '/doc.txt', 'second version');
    assert.equal(replaced.status, 204);
    assert.equal(await (await dav('/doc.txt')).text(), 'second version');
    const files = await liveFiles(bob);
    assert.equal(files.length, 1, 'one file at the path');
    assert.notEqual(files[0]!.id, old!.id);
    assert.equal((await apiFile(bob, old!.id)).status, 404, 'the old file is deleted');
    assert.equal(sha256((await apiFile(bob, files[0]!.id)).bytes!), sha256('second version'));

    assert.equal((await put(dav, '/empty.txt', '')).status, 201);
    const empty = await dav('/empty.txt');
    assert.equal(empty.status, 200);
    assert.equal(await empty.text(), '');
    assert.equal((await liveFiles(bob)).find((file) => file.name === 'empty.txt')?.size, 0);
  });

  test('a 20 MiB PUT streams in and comes back byte-exact', async () => {
    const carol = await t.account();
    const dav = davOf(t, carol);
    const chunk = randomBytes(MiB);
    const hash = createHash('sha256');
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 20) return controller.close();
        sent++;
        hash.update(chunk);
        controller.enqueue(new Uint8Array(chunk));
      },
    });
    const response = await t.fetch('/dav/big.bin', {
      method: 'PUT',
      body,
      headers: { Authorization: `Basic ${Buffer.from(`${carol.login}:${carol.key}`).toString('base64')}` },
      duplex: 'half',
    } as RequestInit);
    assert.equal(response.status, 201, await response.text());
    const digest = hash.digest('hex');
    const [file] = await liveFiles(carol);
    assert.equal(file?.size, 20 * MiB);
    assert.equal(file?.sha256, digest);
    const back = createHash('sha256');
    const get = await dav('/big.bin');
    for await (const part of get.body!) back.update(part);
    assert.equal(back.digest('hex'), digest);
  });

  test('PUT refusals: no parent 409, onto a collection 405, Content-Range 400, a name that would change 400', async () => {
    const dan = await t.account();
    const dav = davOf(t, dan);
    assert.equal((await put(dav, '/nowhere/a.txt', 'x')).status, 409);
    assert.equal(await status(dav('/box', { method: 'MKCOL' })), 201);
    assert.equal((await put(dav, '/box', 'x')).status, 405);
    assert.equal((await put(dav, '/', 'x')).status, 405);
    assert.equal(await status(dav('/part.txt', { method: 'PUT', body: 'abc', headers: { 'Content-Range': 'bytes 0-2/10' } })), 400);
    const spaced = await dav('/trailing%20', { method: 'PUT', body: 'x' });
    assert.equal(spaced.status, 400);
    assert.match(await spaced.text(), /cannot be stored as it is/);
    assert.deepEqual(await liveFiles(dan), []);
  });

  test('a PUT cut halfway leaves no file and no bytes', async () => {
    const erin = await t.account();
    const url = new URL(t.url);
    const authorization = `Basic ${Buffer.from(`${erin.login}:${erin.key}`).toString('base64')}`;
    const request = http.request({
      host: url.hostname,
      port: url.port,
      method: 'PUT',
      path: '/dav/cut.bin',
      agent: false,
      headers: { Authorization: authorization, 'Content-Length': String(24 * MiB) },
    });
    request.on('error', () => {});
    // More than one S3 part (8 MiB), so that staging shows on S3 too (a multipart upload
    // begins with its first full part).
    request.write(randomBytes(10 * MiB));
    // Until the server has taken some of the body, then the connection goes.
    assert.ok(await eventually(async () => (await t.storage.stagedUploads()).length > 0), 'the server was staging the body');
    request.destroy();
    assert.ok(await eventually(async () => (await t.storage.leftovers()).length === 0), 'nothing staged is left');
    assert.deepEqual(await liveFiles(erin), []);
    assert.equal(await status(davOf(t, erin)('/cut.bin')), 404);
  });

  test('two PUTs to one path that overlap: the one that commits last is at the path, and no namesake is left', async () => {
    const gil = await t.account();
    const dav = davOf(t, gil);
    assert.equal((await put(dav, '/race.bin', 'the original')).status, 201);
    const url = new URL(t.url);
    // Past one S3 part before the pause (see the test above).
    const slowBody = randomBytes(20 * MiB);
    // The slow PUT begins first and streams its first half...
    const slow = http.request({
      host: url.hostname,
      port: url.port,
      method: 'PUT',
      path: '/dav/race.bin',
      agent: false,
      headers: { Authorization: `Basic ${Buffer.from(`${gil.login}:${gil.key}`).toString('base64')}`, 'Content-Length': String(slowBody.length) },
    });
    const slowAnswer = new Promise<number>((resolve, reject) => {
      slow.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      slow.on('error', reject);
    });
    slow.write(slowBody.subarray(0, 10 * MiB));
    assert.ok(await eventually(async () => (await t.storage.stagedUploads()).length > 0), 'the server was staging the slow body');
    // ...a quick one replaces the file meanwhile...
    assert.equal((await put(dav, '/race.bin', 'the quick one')).status, 204);
    // ...then the slow one ends, and commits last.
    slow.end(slowBody.subarray(10 * MiB));
    assert.equal(await slowAnswer, 204);
    const live = await liveFiles(gil);
    assert.deepEqual(
      live.map((file) => file.name),
      ['race.bin'],
      'one file at the path, no namesake',
    );
    assert.equal(live[0]!.sha256, sha256(slowBody));
    assert.equal(sha256(Buffer.from(await (await dav('/race.bin')).arrayBuffer())), sha256(slowBody));
  });

  test('a file whose own name looks like a namesake\'s "(id)" name never takes that namesake\'s path', async () => {
    const hal = await t.account();
    const dav = davOf(t, hal);
    const first = await t.upload(hal.key, 'foo.txt', 'ONE');
    const second = await t.upload(hal.key, 'foo.txt', 'TWO');
    const third = await t.upload(hal.key, `foo (${second.id}).txt`, 'THREE');
    assert.equal(await (await dav('/foo.txt')).text(), 'ONE');
    assert.equal(await (await dav(`/foo%20(${second.id}).txt`)).text(), 'TWO');
    assert.equal(await (await dav(`/foo%20(${second.id})%20(${third.id}).txt`)).text(), 'THREE');
    // The listing names each file by the path that reaches it.
    const listing = await (await dav('/', { method: 'PROPFIND', headers: { Depth: '1' } })).text();
    for (const name of ['foo.txt', `foo%20(${second.id}).txt`, `foo%20(${second.id})%20(${third.id}).txt`]) {
      assert.ok(listing.includes(`/dav/${name}</`), `${name} in ${listing}`);
    }
    assert.ok(first.id);
  });

  test('namesakes of the API are reachable by their "(id)" names', async () => {
    const fay = await t.account();
    const dav = davOf(t, fay);
    const first = await t.upload(fay.key, 'same.txt', 'the first');
    const second = await t.upload(fay.key, 'same.txt', 'the second');
    assert.equal(await (await dav('/same.txt')).text(), 'the first');
    assert.equal(await (await dav(`/same%20(${second.id}).txt`)).text(), 'the second');
    assert.ok(first.id);
    // Replacing the namesake through its own path keeps the other.
    assert.equal((await put(dav, `/same%20(${second.id}).txt`, 'the third')).status, 204);
    assert.equal(await (await dav('/same.txt')).text(), 'the first');
    assert.equal(await (await dav(`/same%20(${second.id}).txt`)).text(), 'the third');
  });

  test('bad paths are 400: "..", %2F, NUL, an overlong name', async () => {
    const gus = await t.account();
    const headers = { Authorization: `Basic ${Buffer.from(`${gus.login}:${gus.key}`).toString('base64')}` };
    for (const path of ['/dav/a/../b.txt', '/dav/a%2Fb.txt', '/dav/a%00b.txt', `/dav/${'x'.repeat(256)}`, '/dav/%E0%A4%A']) {
      for (const method of ['GET', 'PUT', 'MKCOL', 'DELETE']) {
        const response = await rawRequest(t.url, method, path, { headers, body: method === 'PUT' ? 'x' : undefined });
        assert.equal(response.status, 400, `${method} ${path}: ${response.body}`);
        assert.doesNotMatch(response.body, /at .*\.ts/);
      }
    }
    assert.deepEqual(await liveFiles(gus), []);
  });
});

describe('MKCOL and DELETE', () => {
  test('MKCOL: 201, again 405, over a file 405, with a body 415, without a parent 409', async () => {
    const hal = await t.account();
    const dav = davOf(t, hal);
    assert.equal(await status(dav('/docs', { method: 'MKCOL' })), 201);
    assert.equal(await status(dav('/docs/inner/', { method: 'MKCOL' })), 201);
    const folders = await t.server.services.store.folders.list({ ownerId: hal.account.id, limit: 10 });
    assert.deepEqual(folders.map((folder) => folder.name).sort(), ['docs', 'inner']);
    assert.equal(await status(dav('/docs', { method: 'MKCOL' })), 405);
    assert.equal((await put(dav, '/file.txt', 'x')).status, 201);
    assert.equal(await status(dav('/file.txt', { method: 'MKCOL' })), 405);
    assert.equal(await status(dav('/withbody', { method: 'MKCOL', body: '<x/>', headers: { 'Content-Type': 'application/xml' } })), 415);
    assert.equal(await status(dav('/no/parent', { method: 'MKCOL' })), 409);
    assert.equal(await status(dav('/file.txt/below', { method: 'MKCOL' })), 409);
    // A file put into the new collection is in that folder for the API too.
    assert.equal((await put(dav, '/docs/inner/a.txt', 'in a folder')).status, 201);
    const inner = folders.find((folder) => folder.name === 'inner')!;
    assert.equal((await liveFiles(hal)).find((file) => file.name === 'a.txt')?.folderId, inner.id);
  });

  test('DELETE: a file 204, a collection with everything in it 204, then 404; the top 403; Depth 0 on a collection 400', async () => {
    const ida = await t.account();
    const dav = davOf(t, ida);
    await status(dav('/tree', { method: 'MKCOL' }));
    await status(dav('/tree/sub', { method: 'MKCOL' }));
    await put(dav, '/tree/a.txt', 'a');
    await put(dav, '/tree/sub/b.txt', 'b');
    await put(dav, '/loose.txt', 'loose');
    const before = await liveFiles(ida);
    assert.equal(before.length, 3);

    assert.equal(await status(dav('/loose.txt', { method: 'DELETE' })), 204);
    assert.equal(await status(dav('/loose.txt', { method: 'DELETE' })), 404);
    assert.equal(await status(dav('/tree', { method: 'DELETE', headers: { Depth: '0' } })), 400);
    assert.equal(await status(dav('/', { method: 'DELETE' })), 403);
    assert.equal(await status(dav('/tree', { method: 'DELETE' })), 204);
    assert.equal(await status(dav('/tree/sub/b.txt')), 404);
    assert.deepEqual(await liveFiles(ida), []);
    for (const file of before) assert.equal((await apiFile(ida, file.id)).status, 404);
    assert.deepEqual(await t.server.services.store.folders.list({ ownerId: ida.account.id, limit: 10 }), []);
    // The bytes no file names any more are removed.
    assert.ok(await eventually(async () => (await t.storage.keyOf(sha256('b'))) === null));
  });

  test('a collection removed while files arrive in it: every file is deleted or kept with its folder, never lost from the tree', async () => {
    const jo = await t.account();
    const dav = davOf(t, jo);
    await status(dav('/busy', { method: 'MKCOL' }));
    for (let i = 0; i < 5; i++) await put(dav, `/busy/old-${i}.txt`, `old ${i}`);
    const uploads = Array.from({ length: 5 }, (_, i) => put(dav, `/busy/new-${i}.txt`, `new ${i}`));
    const removal = status(dav('/busy', { method: 'DELETE' }));
    const [removed, ...stored] = await Promise.all([removal, ...uploads]);
    assert.ok(removed === 204 || removed === 409, `DELETE: ${removed}`);
    for (const response of stored) assert.ok([201, 409].includes(response.status), `PUT: ${response.status}`);
    const live = await liveFiles(jo);
    const folders = await t.server.services.store.folders.list({ ownerId: jo.account.id, limit: 10 });
    if (removed === 204) {
      // Every file that was stored went with the folder; none is left without it.
      assert.deepEqual(live, []);
      assert.deepEqual(folders, []);
    } else {
      for (const file of live) assert.equal(file.folderId, folders[0]?.id);
    }
  });
  test('files and a folder moved out of a collection while it is being deleted stay where the MOVE put them', async () => {
    const kit = await t.account();
    const dav = davOf(t, kit);
    await status(dav('/big', { method: 'MKCOL' }));
    await status(dav('/big/inner', { method: 'MKCOL' }));
    await put(dav, '/big/inner/keep.txt', 'inside the folder that leaves');
    // Enough files that the DELETE takes a while: each goes in its own transaction.
    const names = Array.from({ length: 120 }, (_, i) => `f${i}.txt`);
    for (let at = 0; at < names.length; at += 12) {
      await Promise.all(names.slice(at, at + 12).map((name) => put(dav, `/big/${name}`, `file ${name}`)));
    }
    const removal = status(dav('/big', { method: 'DELETE' }));
    const moves = await Promise.all([
      ...['f119.txt', 'f60.txt', 'f1.txt'].map((name) =>
        status(dav(`/big/${name}`, { method: 'MOVE', headers: destination(t, `/moved-${name}`) })).then((code) => ({ name: `moved-${name}`, code })),
      ),
      // The folder itself: its file may have gone before the MOVE (the DELETE began first),
      // but a folder the MOVE answered 201 for is where the MOVE put it.
      status(dav('/big/inner/', { method: 'MOVE', headers: destination(t, '/moved-inner/') })).then((code) => ({ name: 'moved-inner/', code })),
    ]);
    assert.ok([204, 409].includes(await removal));
    for (const move of moves) {
      assert.ok([201, 404, 409].includes(move.code), `MOVE ${move.name}: ${move.code}`);
      // A MOVE that answered 201 is kept: the DELETE never takes what left the collection.
      if (move.code === 201) assert.equal(await status(dav(`/${move.name}`)), 200, `${move.name} after its MOVE answered 201`);
    }
  });
});

describe('locks under names of any script', () => {
  test('a lock inside a folder named with an emoji holds a DELETE of the folder, and goes with it', async () => {
    const lou = await t.account();
    const dav = davOf(t, lou);
    assert.equal(await status(dav('/%F0%9F%98%80', { method: 'MKCOL' })), 201);
    assert.equal((await put(dav, '/%F0%9F%98%80/f.txt', 'locked')).status, 201);
    const lockinfo =
      '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    const locked = await dav('/%F0%9F%98%80/f.txt', { method: 'LOCK', headers: { Depth: '0', 'Content-Type': 'application/xml' }, body: lockinfo });
    await locked.arrayBuffer();
    assert.equal(locked.status, 200);
    const token = locked.headers.get('lock-token')!;
    assert.equal(await status(dav('/%F0%9F%98%80/', { method: 'DELETE' })), 423, 'the lock below holds the DELETE');
    assert.equal(await status(dav('/%F0%9F%98%80/', { method: 'DELETE', headers: { If: `<${t.url}/dav/%F0%9F%98%80/f.txt> (${token})` } })), 204);
    // The lock went with the file: the same path is free again.
    assert.equal(await status(dav('/%F0%9F%98%80', { method: 'MKCOL' })), 201);
    assert.equal((await put(dav, '/%F0%9F%98%80/f.txt', 'again')).status, 201);
  });
});

describe('COPY and MOVE', () => {
  test('file COPY is the O(1) copy (201, then 204 over it); Overwrite F 412; no parent 409; onto itself 403', async () => {
    const kim = await t.account();
    const dav = davOf(t, kim);
    await put(dav, '/orig.txt', 'copied bytes');
    await status(dav('/into', { method: 'MKCOL' }));
    const copy = (to: string, headers: Record<string, string> = {}) =>
      status(dav('/orig.txt', { method: 'COPY', headers: { ...destination(t, to), ...headers } }));
    assert.equal(await copy('/into/copy.txt'), 201);
    assert.equal(await (await dav('/into/copy.txt')).text(), 'copied bytes');
    assert.equal(await t.storage.count('blobs', { sha256: sha256('copied bytes') }), 1, 'no bytes duplicated');
    assert.equal(await t.storage.count('files', { sha256: sha256('copied bytes') }), 2);
    assert.equal(await copy('/into/copy.txt', { Overwrite: 'F' }), 412);
    assert.equal(await copy('/into/copy.txt'), 204);
    assert.equal(await t.storage.count('files', { sha256: sha256('copied bytes'), status: FileStatus.Active }), 2);
    assert.equal(await copy('/missing/copy.txt'), 409);
    assert.equal(await copy('/orig.txt'), 403);
    assert.equal(await status(dav('/orig.txt', { method: 'COPY' })), 400, 'no Destination');
    assert.equal(await status(dav('/orig.txt', { method: 'COPY', headers: { Destination: 'http://elsewhere.example/dav/x' } })), 502);
    const copied = (await liveFiles(kim)).find((file) => file.name === 'copy.txt');
    const inFolder = (await t.server.services.store.folders.list({ ownerId: kim.account.id, limit: 10 }))[0]!;
    assert.equal(copied?.folderId, inFolder.id);
    assert.equal(sha256((await apiFile(kim, copied!.id)).bytes!), sha256('copied bytes'));
  });

  test('file MOVE keeps the file (same id) under its new name and folder; Overwrite deletes what was there', async () => {
    const lou = await t.account();
    const dav = davOf(t, lou);
    await put(dav, '/a.txt', 'moving');
    await put(dav, '/b.txt', 'in the way');
    await status(dav('/dir', { method: 'MKCOL' }));
    const [a] = (await liveFiles(lou)).filter((file) => file.name === 'a.txt');
    const move = (from: string, to: string, headers: Record<string, string> = {}) =>
      status(dav(from, { method: 'MOVE', headers: { ...destination(t, to), ...headers } }));
    assert.equal(await move('/a.txt', '/dir/renamed.txt'), 201);
    assert.equal(await status(dav('/a.txt')), 404);
    const seen = await apiFile(lou, a!.id);
    assert.equal(seen.title, 'renamed.txt');
    assert.equal(seen.bytes?.toString(), 'moving');
    assert.equal(await move('/dir/renamed.txt', '/b.txt', { Overwrite: 'F' }), 412);
    assert.equal(await move('/dir/renamed.txt', '/b.txt'), 204);
    assert.equal(await (await dav('/b.txt')).text(), 'moving');
    assert.deepEqual(
      (await liveFiles(lou)).map((file) => file.id),
      [a!.id],
    );
    assert.equal(await move('/b.txt', '/b.txt'), 403, 'onto itself');
    assert.equal(await move('/b.txt', '/nope/b.txt'), 409);
  });

  test('collection MOVE: into itself or its own child 403; elsewhere it goes whole', async () => {
    const max = await t.account();
    const dav = davOf(t, max);
    await status(dav('/c', { method: 'MKCOL' }));
    await status(dav('/c/sub', { method: 'MKCOL' }));
    await put(dav, '/c/sub/f.txt', 'deep');
    const move = (from: string, to: string) => status(dav(from, { method: 'MOVE', headers: destination(t, to) }));
    assert.equal(await move('/c', '/c'), 403);
    assert.equal(await move('/c', '/c/sub/c'), 403);
    assert.equal(await move('/c/sub', '/c'), 403, 'onto its own parent would delete it');
    assert.equal(await move('/c', '/d'), 201);
    assert.equal(await (await dav('/d/sub/f.txt')).text(), 'deep');
    assert.equal(await status(dav('/c/sub/f.txt')), 404);
    assert.equal(await status(dav('/d', { method: 'MOVE', headers: { ...destination(t, '/e'), Depth: '0' } })), 400);
  });

  test('the service refuses a folder move that would make a cycle, whatever the paths said', async () => {
    const ned = await t.account();
    const { folders } = t.server.services;
    const outer = await folders.create(ned.account, 'outer');
    const inner = await folders.create(ned.account, 'inner', outer.id);
    await assert.rejects(folders.relocate(ned.account, outer.id, inner.id, 'outer'), /cannot be moved into itself/);
    await assert.rejects(folders.relocate(ned.account, outer.id, outer.id, 'outer'), /cannot be moved into itself/);
    assert.equal((await t.server.services.store.folders.byId(outer.id))?.parentId, null);
  });

  test('collection COPY: Depth infinity copies the tree (files O(1)), Depth 0 the collection alone', async () => {
    const ola = await t.account();
    const dav = davOf(t, ola);
    await status(dav('/src', { method: 'MKCOL' }));
    await status(dav('/src/sub', { method: 'MKCOL' }));
    await put(dav, '/src/one.txt', 'one');
    await put(dav, '/src/sub/two.txt', 'two');
    assert.equal(await status(dav('/src', { method: 'COPY', headers: destination(t, '/all') })), 201);
    assert.equal(await (await dav('/all/one.txt')).text(), 'one');
    assert.equal(await (await dav('/all/sub/two.txt')).text(), 'two');
    assert.equal(await (await dav('/src/sub/two.txt')).text(), 'two', 'the source stays');
    assert.equal(await t.storage.count('blobs', { sha256: sha256('two') }), 1);
    assert.equal(await status(dav('/src', { method: 'COPY', headers: { ...destination(t, '/shallow'), Depth: '0' } })), 201);
    assert.equal(await status(dav('/shallow/one.txt')), 404);
    assert.match(await (await dav('/shallow/')).text(), /<ul>\n<\/ul>/);
    assert.equal(await status(dav('/src', { method: 'COPY', headers: { ...destination(t, '/src/sub/x') } })), 403);
    assert.equal(await status(dav('/src', { method: 'COPY', headers: { ...destination(t, '/all'), Overwrite: 'F' } })), 412);
    assert.equal(await status(dav('/src', { method: 'COPY', headers: { ...destination(t, '/all') } })), 204);
    assert.equal(await (await dav('/all/sub/two.txt')).text(), 'two');
  });
});

describe('dead properties follow the resources', () => {
  test('COPY copies them, MOVE keeps them, a PUT that replaces carries them over, DELETE forgets them (collections and what was in them too)', async () => {
    const quinn = await t.account();
    const dav = davOf(t, quinn);
    const props = t.server.services.store.davProperties;
    const id = quinn.account.id;
    const color = (value: string) => [{ namespace: 'urn:test', name: 'color', valueXml: value }];
    const colorOf = async (key: string) => (await props.list(id, key)).map((property) => property.valueXml);
    const fileKey = async (name: string) => `file:${(await liveFiles(quinn)).find((file) => file.name === name)!.id}`;

    await put(dav, '/p.txt', 'with properties');
    const original = await fileKey('p.txt');
    await props.set(id, original, color('red'));
    assert.equal(await status(dav('/p.txt', { method: 'COPY', headers: destination(t, '/q.txt') })), 201);
    assert.deepEqual(await colorOf(await fileKey('q.txt')), ['red']);
    assert.equal(await status(dav('/p.txt', { method: 'MOVE', headers: destination(t, '/r.txt') })), 201);
    assert.deepEqual(await colorOf(original), ['red'], 'kept by id');
    assert.equal((await put(dav, '/r.txt', 'replaced')).status, 204);
    const replacement = await fileKey('r.txt');
    assert.deepEqual(await colorOf(replacement), ['red']);
    assert.deepEqual(await colorOf(original), [], 'the old file is gone, and so are its');
    assert.equal(await status(dav('/r.txt', { method: 'DELETE' })), 204);
    assert.deepEqual(await colorOf(replacement), []);

    await status(dav('/box', { method: 'MKCOL' }));
    await put(dav, '/box/inside.txt', 'inside');
    const inside = await fileKey('inside.txt');
    await props.set(id, inside, color('blue'));
    assert.equal(await status(dav('/box', { method: 'DELETE' })), 204);
    assert.deepEqual(await colorOf(inside), []);
  });
});

describe('limits', () => {
  let limited: TestServer;
  before(async () => {
    limited = await startTestServer({ maxFileSize: 64 * 1024, uploadVolumeFree: 100 * 1024 });
  });
  after(() => limited.close());

  test('over --max-file-size 413, over the volume 507, a blacklisted name 403; nothing is kept', async () => {
    const pat = await limited.account();
    const dav = davOf(limited, pat);
    const tooBig = await dav('/big.bin', { method: 'PUT', body: new Uint8Array(randomBytes(65 * 1024)) });
    assert.equal(tooBig.status, 413, await tooBig.text());
    assert.equal((await put(dav, '/a.bin', randomBytes(60 * 1024))).status, 201);
    const overVolume = await dav('/b.bin', { method: 'PUT', body: new Uint8Array(randomBytes(60 * 1024)) });
    assert.equal(overVolume.status, 507, await overVolume.text());
    await limited.server.services.moderation.addNamePattern('*.exe');
    const blacklisted = await dav('/tool.exe', { method: 'PUT', body: 'MZ' });
    assert.equal(blacklisted.status, 403, await blacklisted.text());
    const names = (await limited.server.services.store.files.list({ ownerId: pat.account.id, limit: 10 })).map((file) => file.name);
    assert.deepEqual(names, ['a.bin']);
    assert.ok(await eventually(async () => (await limited.storage.leftovers()).length === 0));
  });
});

describe('If-Match and If-None-Match on writes (RFC 9110 13.1)', () => {
  test('DELETE with a wrong If-Match is 412 and the file stays; with its ETag 204; If-None-Match * on it 412', async () => {
    const pat = await t.account();
    const dav = davOf(t, pat);
    assert.equal((await put(dav, '/kept.txt', 'kept')).status, 201);
    const etag = `"${sha256('kept')}"`;
    assert.equal(await status(dav('/kept.txt', { method: 'DELETE', headers: { 'If-Match': '"nope"' } })), 412);
    assert.equal(await status(dav('/kept.txt', { method: 'DELETE', headers: { 'If-None-Match': '*' } })), 412);
    assert.equal(await status(dav('/kept.txt', { method: 'GET' })), 200, 'still there');
    assert.equal(await status(dav('/kept.txt', { method: 'DELETE', headers: { 'If-Match': `"nope", ${etag}` } })), 204);
    assert.equal(await status(dav('/kept.txt', { method: 'GET' })), 404);
  });

  test('PUT: If-None-Match * makes it only if nothing is there; If-Match needs the current ETag', async () => {
    const quin = await t.account();
    const dav = davOf(t, quin);
    const putWith = (headers: Record<string, string>, body: string) => status(dav('/doc.txt', { method: 'PUT', headers, body }));
    assert.equal(await putWith({ 'If-Match': '*' }, 'first'), 412, 'nothing there to match *');
    assert.equal(await putWith({ 'If-None-Match': '*' }, 'first'), 201);
    assert.equal(await putWith({ 'If-None-Match': '*' }, 'second'), 412, 'something is there now');
    assert.equal(await putWith({ 'If-Match': '"stale"' }, 'second'), 412);
    assert.equal(await putWith({ 'If-Match': `"${sha256('first')}"` }, 'second'), 204);
    assert.equal(await (await dav('/doc.txt')).text(), 'second');
  });

  test('MKCOL, PROPPATCH, MOVE and LOCK honour them too; a collection has no ETag but matches *', async () => {
    const pat = await t.account();
    const dav = davOf(t, pat);
    assert.equal(await status(dav('/new/', { method: 'MKCOL', headers: { 'If-Match': '*' } })), 412, 'nothing there to match *');
    assert.equal(await status(dav('/new/', { method: 'MKCOL', headers: { 'If-None-Match': '*' } })), 201);
    const proppatch = `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1</x></D:prop></D:set></D:propertyupdate>`;
    assert.equal(await status(dav('/new/', { method: 'PROPPATCH', headers: { 'If-Match': '"abc"' }, body: proppatch })), 412);
    assert.equal(await status(dav('/new/', { method: 'PROPPATCH', headers: { 'If-Match': '*' }, body: proppatch })), 207);
    assert.equal((await put(dav, '/m.txt', 'm')).status, 201);
    assert.equal(await status(dav('/m.txt', { method: 'MOVE', headers: { ...destination(t, '/n.txt'), 'If-Match': '"other"' } })), 412);
    assert.equal(await status(dav('/m.txt', { method: 'MOVE', headers: { ...destination(t, '/n.txt'), 'If-Match': `"${sha256('m')}"` } })), 201);
    const lockinfo = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    assert.equal(await status(dav('/n.txt', { method: 'LOCK', headers: { 'If-None-Match': `"${sha256('m')}"` }, body: lockinfo })), 412);
    assert.equal(await status(dav('/n.txt', { method: 'LOCK', headers: { 'If-Match': `"${sha256('m')}"` }, body: lockinfo })), 200);
  });
});

describe('the transport rule and the Destination host', () => {
  test('plain HTTP from elsewhere is 403 before any sign-in: no Basic challenge, with or without credentials', async () => {
    const proxied = await startTestServer({ trustProxy: true });
    try {
      const pat = await proxied.account();
      const from = { 'X-Forwarded-For': '198.51.100.7' };
      for (const headers of [from, { ...from, Authorization: `Basic ${Buffer.from(`${pat.login}:${pat.key}`).toString('base64')}` }]) {
        const response = await proxied.fetch('/dav/', { method: 'PROPFIND', headers: { Depth: '0', ...headers } });
        assert.equal(response.status, 403, await response.text());
        assert.equal(response.headers.get('www-authenticate'), null);
      }
      const https = await davOf(proxied, pat)('/', { method: 'PROPFIND', headers: { Depth: '0', ...from, 'X-Forwarded-Proto': 'https' } });
      assert.equal(https.status, 207, await https.text());
    } finally {
      await proxied.close();
    }
  });

  test('without --trust-proxy, a loopback request with proxy headers is a proxied one: 403', async () => {
    const pat = await t.account();
    const dav = davOf(t, pat);
    assert.equal(await status(dav('/', { method: 'PROPFIND', headers: { Depth: '0' } })), 207, 'from this host itself');
    const proxyHeaders: Record<string, string>[] = [{ 'X-Forwarded-For': '203.0.113.9' }, { Forwarded: 'for=203.0.113.9' }, { 'X-Forwarded-Proto': 'http' }];
    for (const header of proxyHeaders) {
      const response = await dav('/', { method: 'PROPFIND', headers: { Depth: '0', ...header } });
      assert.equal(response.status, 403, JSON.stringify(header));
      assert.equal(response.headers.get('www-authenticate'), null);
      await response.arrayBuffer();
    }
  });

  test("a Destination is this server's on the request's Host in any case, or on the site's base URL host (a proxy that passes its upstream's Host)", async () => {
    const pat = await t.account();
    const dav = davOf(t, pat);
    assert.equal((await put(dav, '/a.txt', 'a')).status, 201);
    const authorization = `Basic ${Buffer.from(`${pat.login}:${pat.key}`).toString('base64')}`;
    // As nginx's default proxy_pass sends it: Host is the upstream's name, the Destination the public one.
    const behindProxy = (method: string, from: string, to: string) =>
      rawRequest(t.url, method, `/dav${from}`, { headers: { Authorization: authorization, Host: 'Upstream-Backend:8080', Destination: to } });
    assert.equal((await behindProxy('MOVE', '/a.txt', `${t.url}/dav/b.txt`)).status, 201, 'the base URL host');
    assert.equal((await behindProxy('COPY', '/b.txt', 'http://upstream-backend:8080/dav/c.txt')).status, 201, 'the Host header, case aside');
    assert.equal((await behindProxy('COPY', '/b.txt', 'http://elsewhere.example.test/dav/d.txt')).status, 502);
    assert.equal(await status(dav('/c.txt', { method: 'GET' })), 200);
  });
});
