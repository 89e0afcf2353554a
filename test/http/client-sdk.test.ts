// The SDK (filehaven/client, src/client) against a real server: every call, the SPEC
// codes of its errors, streamed uploads, resumable downloads, aborts that leave nothing.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FetchFunction, FilehavenApiError, FilehavenClient, FilehavenConnectionError, UploadNotMovedError } from '../../src/client/index.js';
import { randomPayload, sha256, trafficLeft } from '../helpers/downloads.js';
import { failure } from '../helpers/sdk-failure.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

let t: TestServer;
let free: TestAccount;
let premium: TestAccount;
before(async () => {
  t = await startTestServer();
  free = await t.account({ name: 'Ada & <Co> "quoted"', email: 'ada@example.org' });
  premium = await t.account({ premiumDays: 30, trafficBytes: 50 * 1024 * 1024 });
});
after(() => t.close());

const clientOf = (account: TestAccount) => new FilehavenClient({ server: t.url, key: account.key });

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A stream of `size` random-ish bytes in 64 KiB chunks, pausing between them so an abort lands mid-body. */
async function* slowBytes(size: number, pauseMs = 5): AsyncIterable<Uint8Array> {
  const chunk = randomPayload(64 * 1024);
  for (let sent = 0; sent < size; sent += chunk.length) {
    yield chunk.subarray(0, Math.min(chunk.length, size - sent));
    await sleep(pauseMs);
  }
}

/** Waits until nothing of a cut upload is left (the server cleans up as the request ends). */
async function noLeftovers(): Promise<void> {
  for (let tries = 0; ; tries++) {
    const leftovers = await t.storage.leftovers();
    if (leftovers.length === 0) return;
    if (tries > 200) assert.deepEqual(leftovers, [], 'staged uploads or unnamed blobs left behind');
    await sleep(50);
  }
}

describe('keys and account', () => {
  test('createApiKey returns the account key; a wrong password is errorWrongCredentials (401)', async () => {
    const anonymous = new FilehavenClient({ server: `${t.url}/` });
    assert.equal(await anonymous.createApiKey(free.login, free.password), free.key);
    const error = await failure(anonymous.createApiKey(free.login, 'wrong'));
    assert.equal(error.code, 'errorWrongCredentials');
    assert.equal(error.status, 401);
    assert.equal(error.message, 'Invalid login or password');
    assert.equal(error.isAuthError, true);
  });

  test('account() reads every field, entities decoded; the feed tells the web URL', async () => {
    const client = clientOf(free);
    const account = await client.account();
    assert.equal(account.id, String(free.account.id));
    assert.equal(account.name, 'Ada & <Co> "quoted"');
    assert.equal(account.email, 'ada@example.org');
    assert.equal(account.balance, '0.00');
    assert.equal(account.premium, 'None');
    assert.equal(account.premiumStart, null);
    assert.equal(client.webUrl, t.url);
    const rich = await clientOf(premium).account();
    assert.equal(rich.premium, 'Active');
    assert.equal(rich.premiumTrafficLeft, 50 * 1024 * 1024);
    assert.match(rich.premiumEnd ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  test('a wrong key is errorPermissionDenied (401, Wrong apikey); no key fails before any request', async () => {
    const error = await failure(new FilehavenClient({ server: t.url, key: 'nope' }).account());
    assert.deepEqual([error.code, error.status, error.message], ['errorPermissionDenied', 401, 'Wrong apikey']);
    const none = await failure(new FilehavenClient({ server: t.url }).account());
    assert.equal(none.code, 'errorPermissionDenied');
  });

  test('an unreachable server is a FilehavenConnectionError naming it', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const error = await new FilehavenClient({ server: `http://127.0.0.1:${port}`, key: 'k' }).account().catch((caught: unknown) => caught);
    assert.ok(error instanceof FilehavenConnectionError);
    assert.match(error.message, new RegExp(`cannot reach http://127.0.0.1:${port}: ECONNREFUSED`));
  });

  test('a server that is not filehaven is errorUnexpectedResponse, never a parse crash', async () => {
    // Something else at the address: an HTML page, and a body that is not XML at all.
    for (const [type, body] of [
      ['text/html', '<!doctype html><title>Welcome</title><p>nginx'],
      ['application/atom+xml', '<feed><entry>cut'],
    ] as const) {
      const other = http.createServer((_request, response) => response.writeHead(200, { 'Content-Type': type }).end(body));
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      try {
        const client = new FilehavenClient({ server: `http://127.0.0.1:${(other.address() as AddressInfo).port}`, key: free.key });
        const error = await failure(client.account());
        assert.equal(error.code, 'errorUnexpectedResponse', `${type}: ${error.message}`);
      } finally {
        await new Promise((resolve) => other.close(resolve));
      }
    }
    // And an answer of filehaven's that is not what was asked: an Atom error where a page was.
    const misplaced = await failure(new FilehavenClient({ server: `${t.url}/static`, key: free.key }).account());
    assert.equal(misplaced.code, 'errorNotFound');
    assert.throws(() => new FilehavenClient({ server: 'ftp://example.org' }), TypeError);
  });
});

describe('uploads', () => {
  test('a file path, a Blob and a stream upload, names round-trip, the bytes are the stored digest', async () => {
    const client = clientOf(free);
    const content = randomPayload(300 * 1024);
    const { writeFile, mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sdk-'));
    try {
      const file = path.join(dir, 'report 2026 & <x>.bin');
      await writeFile(file, content);
      const progress: number[] = [];
      const fromPath = await client.upload(file, {
        onProgress: (sent, total) => {
          assert.equal(total, content.length);
          progress.push(sent);
        },
      });
      assert.equal(fromPath.name, 'report 2026 & <x>.bin');
      assert.equal(fromPath.size, content.length);
      assert.equal(progress.at(-1), content.length);
      assert.equal((await t.server.services.store.files.byId(fromPath.id))?.sha256, sha256(content));
      assert.match(fromPath.deleteLink ?? '', new RegExp(`/${fromPath.id}/delete/[0-9a-f]+$`));

      const quoted = await client.upload(new Blob([content]), { name: `it's "q" ; é.txt` });
      assert.equal(quoted.name, `it's "q" ; é.txt`);
      const streamed = await client.upload(Readable.from([content.subarray(0, 1000), content.subarray(1000)]), { name: 's.bin', size: content.length });
      assert.equal((await t.server.services.store.files.byId(streamed.id))?.sha256, sha256(content));
      const unsized = await client.upload(Readable.from([content]), { name: 'chunked.bin' });
      assert.equal(unsized.size, content.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('upload errors carry their codes: errorEmptyFile, errorFileSize before the body, errorUploadLimit with retryAfter', async () => {
    const client = clientOf(free);
    assert.equal((await failure(client.upload(new Blob([]), { name: 'empty' }))).code, 'errorEmptyFile');
    const small = await startTestServer({ maxFileSize: 1024 * 1024, uploadVolumeFree: 3 * 1024 * 1024 });
    try {
      const account = await small.account();
      const limited = new FilehavenClient({ server: small.url, key: account.key });
      // Declared far past the limit: refused on its Content-Length, the body never read.
      const tooBig = await failure(limited.upload(new Blob([randomPayload(8 * 1024 * 1024)]), { name: 'big' }));
      assert.deepEqual([tooBig.code, tooBig.status], ['errorFileSize', 413]);
      await limited.upload(new Blob([randomPayload(1000 * 1024)]), { name: 'a' });
      await limited.upload(new Blob([randomPayload(1000 * 1024)]), { name: 'b' });
      await limited.upload(new Blob([randomPayload(1000 * 1024)]), { name: 'c' });
      const over = await failure(limited.upload(new Blob([randomPayload(1000 * 1024)]), { name: 'd' }));
      assert.deepEqual([over.code, over.status], ['errorUploadLimit', 429]);
      assert.ok(over.retryAfter !== undefined && over.retryAfter > 0, 'retryAfter from Retry-After');
    } finally {
      await small.close();
    }
  });

  test('a refused key is errorPermissionDenied even when the refusal cuts a slow upload short', async () => {
    const wrong = new FilehavenClient({ server: t.url, key: 'not-a-key' });
    const error = await failure(wrong.upload(slowBytes(8 * 1024 * 1024, 2), { name: 'slow.bin', size: 8 * 1024 * 1024 }));
    assert.deepEqual([error.code, error.status], ['errorPermissionDenied', 401]);
  });

  test('an upload aborted mid-body rejects with the reason and leaves no file and no staged bytes', async () => {
    const client = clientOf(free);
    const before = (await client.listFiles()).items.length;
    const controller = new AbortController();
    const reason = new Error('stop now');
    const upload = client.upload(slowBytes(32 * 1024 * 1024), {
      name: 'aborted.bin',
      size: 32 * 1024 * 1024,
      signal: controller.signal,
      onProgress: (sent) => sent > 2 * 1024 * 1024 && controller.abort(reason),
    });
    await assert.rejects(upload, (error) => error === reason);
    await noLeftovers();
    assert.equal((await client.listFiles()).items.length, before);
  });

  test("the client's own signal aborts its calls too", async () => {
    const controller = new AbortController();
    const client = new FilehavenClient({ server: t.url, key: free.key, signal: controller.signal });
    controller.abort(new Error('client closed'));
    await assert.rejects(client.account(), /client closed/);
  });

  test('upload with a folder moves the file there; an unknown folder fails before any byte is sent', async () => {
    const client = clientOf(free);
    const folder = await client.createFolder('inbox');
    const file = await client.upload(new Blob(['in a folder']), { name: 'f.txt', folder: folder.id });
    assert.equal((await t.server.services.store.files.byId(file.id))?.folderId, folder.id);
    const count = (await client.listFiles()).items.length;
    const error = await failure(client.upload(new Blob(['x']), { name: 'g.txt', folder: 'ZZZZZZZZZZ' }));
    assert.equal(error.code, 'errorFolderNotFound');
    assert.equal((await client.listFiles()).items.length, count, 'nothing uploaded');
    assert.ok(UploadNotMovedError.prototype instanceof FilehavenApiError);
  });
});

describe('files and folders', () => {
  test('list, details, direct link, copy, move, folders, delete', async () => {
    const owner = clientOf(premium);
    const a = await owner.upload(new Blob(['alpha']), { name: 'a & b.txt' });
    const b = await owner.upload(new Blob(['bravo!']), { name: 'b.txt' });

    const page = await owner.listFiles({ limit: 1 });
    assert.deepEqual(
      page.items.map((file) => file.id),
      [b.id],
    );
    assert.ok(page.nextCursor);
    const next = await owner.listFiles({ limit: 1, cursor: page.nextCursor });
    assert.deepEqual(
      next.items.map((file) => [file.id, file.name, file.size, file.status, file.folderId]),
      [[a.id, 'a & b.txt', 5, 'A', null]],
    );
    const all: string[] = [];
    for await (const file of owner.allFiles()) all.push(file.id);
    assert.deepEqual(all, [b.id, a.id]);

    assert.deepEqual(await owner.fileDetails(a.id), { id: a.id, name: 'a & b.txt', status: 'A', size: 5, downloadLink: a.downloadLink });
    const direct = await owner.directLink(a.id);
    assert.equal(direct.size, 5);
    assert.match(direct.url, new RegExp(`^${t.url}/direct/${a.id}/`));

    const copy = await clientOf(free).copy(a.id);
    assert.notEqual(copy.id, a.id);
    assert.equal(copy.size, 5);

    const parent = await owner.createFolder('Reports & co');
    assert.deepEqual([parent.name, parent.parentId, parent.size], ['Reports & co', null, 0]);
    const child = await owner.createFolder('2026', parent.id);
    assert.equal(child.parentId, parent.id);
    const moved = await owner.move([a.id, b.id], parent.id);
    assert.deepEqual([moved.folderId, moved.moved, moved.folderSize], [parent.id, 2, 11]);
    const listing = await owner.folder(parent.id);
    assert.deepEqual(
      listing.subfolders.map((f) => f.name),
      ['2026'],
    );
    assert.deepEqual(listing.files.map((f) => f.id).sort(), [a.id, b.id].sort());
    assert.equal(listing.folder.files, 2);
    assert.deepEqual((await owner.listFiles({ folder: parent.id })).items.length, 2);
    assert.deepEqual(
      (await owner.listFolders({ parent: 'root' })).items.map((f) => f.id),
      [parent.id],
    );
    assert.equal((await failure(owner.deleteFolder(parent.id))).code, 'errorFolderNotEmpty');
    assert.deepEqual(await owner.deleteFolder(child.id), { id: child.id, name: '2026' });

    assert.deepEqual(await owner.deleteFile(a.id), { id: a.id, name: 'a & b.txt' });
    assert.equal((await failure(owner.fileDetails(a.id))).code, 'errorFileNotFound');
    assert.deepEqual((await owner.listFiles({ status: ['B'] })).items, []);
  });

  test('errors carry the SPEC codes and statuses', async () => {
    const client = clientOf(free);
    const own = await client.upload(new Blob(['mine']), { name: 'mine.txt' });
    const notPremium = await failure(client.fileDetails(own.id));
    assert.deepEqual([notPremium.code, notPremium.status], ['errorPermissionDenied', 403]);
    assert.equal((await failure(client.directLink(own.id))).code, 'errorPermissionDenied');
    assert.deepEqual([(await failure(clientOf(premium).fileDetails('ZZZZZZZZZZ'))).code], ['errorFileNotFound']);
    assert.equal((await failure(client.copy('ZZZZZZZZZZ'))).status, 404);
    assert.equal((await failure(client.move([own.id], 'ZZZZZZZZZZ'))).code, 'errorFolderNotFound');
    const folder = await client.createFolder('f');
    const someoneElses = await clientOf(premium).upload(new Blob(['theirs']), { name: 't.txt' });
    const refused = await failure(client.move([own.id, someoneElses.id], folder.id));
    assert.deepEqual([refused.code, refused.status], ['errorFolderFilesAddFailed', 422]);
    assert.equal((await failure(client.listFiles({ cursor: 'garbage!' }))).code, 'errorBadRequest');
    await assert.rejects(client.fileDetails('../account'), TypeError);
  });
});

describe('downloads', () => {
  test('by id: direct link for premium (counted), public link otherwise; resume with Range and If-Range', async () => {
    const content = randomPayload(200 * 1024);
    const owner = clientOf(free);
    const file = await owner.upload(new Blob([content]), { name: 'data.bin' });

    const viaPublic = await owner.resolveDownload(file.id);
    assert.deepEqual([viaPublic.direct, viaPublic.name, viaPublic.size], [false, 'data.bin', content.length]);
    const whole = await owner.download(viaPublic);
    assert.equal(sha256(await readAll(whole.body)), sha256(content));
    assert.equal(whole.etag, `"${sha256(content)}"`);

    const resumed = await owner.download(viaPublic, { offset: 1000, ifRange: whole.etag! });
    assert.deepEqual([resumed.offset, resumed.size], [1000, content.length]);
    assert.deepEqual(await readAll(resumed.body), content.subarray(1000));
    const changed = await owner.download(viaPublic, { offset: 1000, ifRange: '"another"' });
    assert.equal(changed.offset, 0, 'a validator that does not hold sends the whole file');
    assert.equal((await readAll(changed.body)).length, content.length);
    const complete = await owner.download(viaPublic, { offset: content.length });
    assert.deepEqual([complete.offset, (await readAll(complete.body)).length], [content.length, 0]);

    const reader = clientOf(premium);
    const before = await trafficLeft(t, premium.key);
    const direct = await reader.download(file.id);
    assert.equal(sha256(await readAll(direct.body)), sha256(content));
    assert.equal(await trafficLeft(t, premium.key), before - content.length);

    // Links as people paste them: the download page, the direct link.
    const byLink = await clientOf(free).download(file.downloadLink);
    assert.equal((await readAll(byLink.body)).length, content.length);
    const link = await reader.directLink(file.id);
    assert.equal((await readAll((await reader.download(link.url)).body)).length, content.length);
  });

  test('download errors: unknown and deleted files, a direct link on another host gets no key', async () => {
    const client = clientOf(free);
    const gone = await client.upload(new Blob(['bye']), { name: 'gone.txt' });
    await client.deleteFile(gone.id);
    const error = await failure(client.download(gone.id));
    assert.deepEqual([error.code, error.status], ['errorFileNotFound', 404]);
    await assert.rejects(clientOf(premium).download('https://elsewhere.example/direct/ABC/token/x'), /not on/);
    await assert.rejects(client.download('https://example.org/nothing-here'), /not a filehaven download link/);
  });
});

describe('tus uploads', () => {
  let dir: string;
  let content: Buffer;
  let file: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'filehaven-sdk-tus-'));
    content = randomPayload(24 * 1024 * 1024 + 17);
    file = path.join(dir, 'tus & <co>.bin');
    await writeFile(file, content);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** A client whose requests are recorded as `METHOD /path`; `fetch` may stand in for the global one. */
  function recording(account: TestAccount, options: { resumeFile?: string; server?: string; fetch?: FetchFunction } = {}) {
    const seen: string[] = [];
    const inner = options.fetch ?? ((input, init) => fetch(input, init));
    const client = new FilehavenClient({
      server: options.server ?? t.url,
      key: account.key,
      resumeFile: options.resumeFile,
      fetch: (input, init) => {
        seen.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
        return inner(input, init);
      },
    });
    return { client, seen };
  }

  const storedEntries = async (resumeFile: string): Promise<Array<{ uploadUrl: string }>> =>
    Object.values((JSON.parse(await readFile(resumeFile, 'utf8')) as { uploads: Record<string, { uploadUrl: string }> }).uploads);

  /** Upload-Offset of a tus upload, as HEAD tells it. */
  async function offsetOf(url: string, key: string): Promise<number> {
    const response = await fetch(url, { method: 'HEAD', headers: { Authorization: key, 'Tus-Resumable': '1.0.0' } });
    assert.equal(response.status, 200, `HEAD ${url}`);
    return Number(response.headers.get('upload-offset'));
  }

  async function downloaded(client: FilehavenClient, id: string): Promise<string> {
    return sha256(await readAll((await client.download(id)).body));
  }

  test('a file goes through /uploads when the server offers tus: the same StoredFile as POST /files, the bytes download back identical', async () => {
    const { client, seen } = recording(free);
    assert.equal(await client.offersTus(), true);
    const progress: number[] = [];
    const viaTus = await client.upload(file, {
      onProgress: (sent, total) => {
        assert.equal(total, content.length);
        progress.push(sent);
      },
    });
    assert.ok(seen.includes('POST /uploads'), seen.join(', '));
    assert.ok(
      seen.some((request) => /^PATCH \/uploads\/\S+$/.test(request)),
      seen.join(', '),
    );
    assert.ok(!seen.includes('POST /files'));
    assert.equal(seen.filter((request) => request === 'OPTIONS /uploads').length, 1);
    assert.equal(progress.at(-1), content.length);

    const viaPost = await client.upload(file, { transport: 'post' });
    assert.ok(seen.includes('POST /files'));
    assert.deepEqual(Object.keys(viaTus).sort(), Object.keys(viaPost).sort());
    assert.deepEqual([viaTus.name, viaTus.size], ['tus & <co>.bin', content.length]);
    assert.deepEqual([viaPost.name, viaPost.size], [viaTus.name, viaTus.size]);
    assert.match(viaTus.downloadLink, new RegExp(`/${viaTus.id}/`));
    assert.match(viaTus.deleteLink ?? '', new RegExp(`/${viaTus.id}/delete/[0-9a-f]+$`));
    assert.equal((await t.server.services.store.files.byId(viaTus.id))?.sha256, sha256(content));
    assert.equal(await downloaded(client, viaTus.id), sha256(content));
    assert.equal(await downloaded(client, viaPost.id), sha256(content));
    assert.equal(seen.filter((request) => request === 'OPTIONS /uploads').length, 1, 'asked once per client');
  });

  test('an aborted tus upload keeps its bytes; the same file uploaded again (resumeFile) continues from the server offset, and its entry goes', async () => {
    const resumeFile = path.join(dir, 'aborted', 'uploads.json');
    const controller = new AbortController();
    const reason = new Error('stop now');
    const first = recording(free, { resumeFile });
    await assert.rejects(
      first.client.upload(file, { signal: controller.signal, onProgress: (sent) => sent > 4 * 1024 * 1024 && controller.abort(reason) }),
      (error) => error === reason,
    );
    const entries = await storedEntries(resumeFile);
    assert.equal(entries.length, 1);
    const url = entries[0]!.uploadUrl;
    assert.equal((await stat(resumeFile)).mode & 0o777, 0o600);
    assert.doesNotMatch(await readFile(resumeFile, 'utf8'), new RegExp(free.key), 'the key is never stored');
    const offset = await offsetOf(url, free.key);
    assert.ok(offset > 0 && offset < content.length, `offset ${offset}`);

    // Another client, as a later process would be: only the rest is sent.
    const second = recording(free, { resumeFile });
    const progress: number[] = [];
    const stored = await second.client.upload(file, { onProgress: (sent) => progress.push(sent) });
    const uploadPath = new URL(url).pathname;
    assert.ok(second.seen.includes(`HEAD ${uploadPath}`), second.seen.join(', '));
    assert.ok(second.seen.includes(`PATCH ${uploadPath}`), second.seen.join(', '));
    assert.ok(!second.seen.includes('POST /uploads'), 'no new upload');
    assert.ok(progress[0]! >= offset, `progress starts at the offset: ${progress[0]} < ${offset}`);
    assert.equal((await t.server.services.store.files.byId(stored.id))?.sha256, sha256(content));
    assert.ok(stored.deleteLink);
    assert.deepEqual(await storedEntries(resumeFile), [], 'the entry goes once the upload is done');
  });

  test('an entry the server no longer knows (404) starts a new upload', async () => {
    const resumeFile = path.join(dir, 'stale', 'uploads.json');
    const controller = new AbortController();
    await assert.rejects(
      recording(free, { resumeFile }).client.upload(file, { signal: controller.signal, onProgress: (sent) => sent > 1024 * 1024 && controller.abort() }),
    );
    const state = JSON.parse(await readFile(resumeFile, 'utf8'));
    const [key] = Object.keys(state.uploads);
    state.uploads[key!].uploadUrl = `${t.url}/uploads/0123456789abcdef0123456789abcdef`;
    await writeFile(resumeFile, JSON.stringify(state));
    const { client, seen } = recording(free, { resumeFile });
    const stored = await client.upload(file);
    assert.ok(seen.includes('HEAD /uploads/0123456789abcdef0123456789abcdef'));
    assert.ok(seen.includes('POST /uploads'), seen.join(', '));
    assert.equal((await t.server.services.store.files.byId(stored.id))?.sha256, sha256(content));
    assert.deepEqual(await storedEntries(resumeFile), []);
  });

  test('the answer of the last PATCH lost: the retry finds the upload complete (HEAD) and returns the file, without its delete link', async () => {
    const small = randomPayload(300 * 1024);
    const smallFile = path.join(dir, 'lost answer.bin');
    await writeFile(smallFile, small);
    let cut = false;
    const { client, seen } = recording(free, {
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (init?.method === 'PATCH' && !cut) {
          cut = true;
          await response.arrayBuffer();
          throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
        }
        return response;
      },
    });
    const stored = await client.upload(smallFile);
    assert.ok(cut);
    assert.deepEqual(
      seen.slice(-2).map((request) => request.split(' ')[0]),
      ['PATCH', 'HEAD'],
    );
    assert.equal(stored.deleteLink, undefined);
    assert.deepEqual([stored.name, stored.size], ['lost answer.bin', small.length]);
    assert.equal((await t.server.services.store.files.byId(stored.id))?.sha256, sha256(small));
    assert.equal(await downloaded(client, stored.id), sha256(small));
  });

  test('tus refusals carry the codes of POST /files: errorFileSize before any byte, errorUploadLimit with retryAfter, a refused key', async () => {
    const wrong = await failure(new FilehavenClient({ server: t.url, key: 'not-a-key' }).upload(file, { transport: 'tus' }));
    assert.deepEqual([wrong.code, wrong.status], ['errorPermissionDenied', 401]);
    const limited = await startTestServer({ maxFileSize: 1024 * 1024, uploadVolumeFree: 3 * 1024 * 1024 });
    try {
      const account = await limited.account();
      const { client, seen } = recording(account, { server: limited.url });
      const tooBig = await failure(client.upload(new Blob([randomPayload(8 * 1024 * 1024)]), { name: 'big', transport: 'tus' }));
      assert.deepEqual([tooBig.code, tooBig.status], ['errorFileSize', 413]);
      assert.ok(!seen.some((request) => request.startsWith('PATCH')), 'refused at creation');
      for (const name of ['a', 'b', 'c']) await client.upload(new Blob([randomPayload(1000 * 1024)]), { name, transport: 'tus' });
      const over = await failure(client.upload(new Blob([randomPayload(1000 * 1024)]), { name: 'd', transport: 'tus' }));
      assert.deepEqual([over.code, over.status], ['errorUploadLimit', 429]);
      assert.ok(over.retryAfter !== undefined && over.retryAfter > 0, 'retryAfter from Retry-After');
    } finally {
      await limited.close();
    }
    await assert.rejects(clientOf(free).upload(Readable.from([content]), { name: 's.bin', size: content.length, transport: 'tus' }), TypeError);
  });

  test('a server without /uploads (404 or 405 to OPTIONS) gets POST /files', async () => {
    for (const status of [404, 405]) {
      // The real server behind a proxy that knows no /uploads, as an older filehaven.
      const proxy = http.createServer((request, response) => {
        if (request.url?.startsWith('/uploads')) return void response.writeHead(status).end();
        const upstream = http.request(`${t.url}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
          response.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(response);
        });
        request.pipe(upstream);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      try {
        const { client, seen } = recording(free, { server: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
        assert.equal(await client.offersTus(), false);
        const stored = await client.upload(file);
        assert.deepEqual(
          seen.filter((request) => request !== 'GET /account'),
          ['OPTIONS /uploads', 'POST /files'],
          `${status}`,
        );
        assert.equal((await t.server.services.store.files.byId(stored.id))?.sha256, sha256(content));
      } finally {
        await new Promise((resolve) => proxy.close(resolve));
      }
    }
  });
});
