import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';
import { type FolderArchiveLimits, FolderArchiveService } from '../../src/downloads/folder-archive-service.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// A folder downloaded as one ZIP (GET /folder/<id>/zip, docs/web.md "A folder as one ZIP"):
// the archive is checked with Info-ZIP's own `unzip` (CRCs, structure), extracted, and
// every entry compared byte for byte; hostile and unicode names; the free-download rules
// (slots, blocked files); a client that leaves mid-ZIP.

const run = promisify(execFile);
const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
// Info-ZIP converts UTF-8 names to the locale's charset: a UTF-8 locale keeps them as they are.
const UTF8 = { ...process.env, LC_ALL: 'C.UTF-8' };

/** Runs `check` until it stops throwing (5 s at most): for what settles after a response ends. */
async function eventually(check: () => unknown): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await check();
      return;
    } catch (error) {
      if (attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

let t: TestServer;
let owner: TestAccount;
let scratch: string;

before(async () => {
  t = await startTestServer();
  owner = await t.account();
  scratch = await mkdtemp(path.join(tmpdir(), 'filehaven-zip-test-'));
});
after(async () => {
  await t?.close();
  await rm(scratch, { recursive: true, force: true });
});

async function uploadInto(folderId: string | null, name: string, content: Buffer | string): Promise<string> {
  const up = await t.upload(owner.key, name, content);
  assert.equal(up.response.status, 201, up.body);
  if (folderId) await t.server.services.folders.move(owner.account, folderId, [up.id]);
  return up.id;
}

const newFolder = async (name: string, parent?: string) => (await t.server.services.folders.create(owner.account, name, parent)).id;

/** Downloads a ZIP to a file; returns the response and the path. */
async function fetchZip(pathname: string): Promise<{ response: Response; file: string; bytes: Buffer }> {
  const response = await t.fetch(pathname);
  const bytes = Buffer.from(await response.arrayBuffer());
  const file = path.join(scratch, `${randomBytes(6).toString('hex')}.zip`);
  await writeFile(file, bytes);
  return { response, file, bytes };
}

/** Every regular file below `dir`, by its path relative to `dir` ('/' separated), with its SHA-256. */
async function tree(dir: string, base = dir, out = new Map<string, string>()): Promise<Map<string, string>> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await tree(full, base, out);
    else out.set(path.relative(base, full).split(path.sep).join('/'), sha(await readFile(full)));
  }
  return out;
}

/** `unzip -t` passes (every CRC right), then the archive is extracted; returns what it holds. */
async function unzipped(file: string): Promise<{ files: Map<string, string>; dirs: string[]; names: string[] }> {
  const checked = await run('unzip', ['-t', file], { env: UTF8 });
  assert.match(checked.stdout, /No errors detected/, checked.stdout);
  const names = (await run('unzip', ['-Z1', file], { env: UTF8 })).stdout.split('\n').filter((line) => line !== '');
  const into = await mkdtemp(path.join(scratch, 'x-'));
  await run('unzip', ['-q', file, '-d', into], { env: UTF8 });
  return { files: await tree(into), dirs: names.filter((name) => name.endsWith('/')), names };
}

/** Starts a download and cuts the connection once more than `bytes` arrived; returns what arrived. */
function startAndLeave(url: string, bytes: number): Promise<{ status: number; received: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, (res) => {
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > bytes && !req.destroyed) {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, received });
        }
      });
      res.on('error', () => {});
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end();
  });
}

/**
 * Starts a download, runs `meanwhile` once its first bytes arrive, then reads on to the
 * end; returns the status, the Content-Length, what arrived and whether it was cut.
 */
function downloadWith(url: string, meanwhile: () => Promise<void>): Promise<{ status: number; length: number; body: Buffer; cut: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, (res) => {
      const chunks: Buffer[] = [];
      let first = true;
      let cut = false;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (!first) return;
        first = false;
        res.pause();
        meanwhile().then(() => res.resume(), reject);
      });
      res.on('aborted', () => (cut = true));
      res.on('error', () => (cut = true));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, length: Number(res.headers['content-length']), body: Buffer.concat(chunks), cut }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Runs `body` with the server's ZIP maker (the download use case's) replaced by one with these limits (and this store). */
async function withArchives(
  server: TestServer,
  options: { limits?: Partial<FolderArchiveLimits>; store?: MetadataStore },
  body: () => Promise<void>,
): Promise<void> {
  const services = server.server.services;
  const original = services.downloads;
  services.downloads = original.withArchives(
    new FolderArchiveService({ store: options.store ?? services.store, downloads: original, clock: services.clock, limits: options.limits }),
  );
  try {
    await body();
  } finally {
    services.downloads = original;
  }
}

/**
 * The most 'close' listeners each response had at once while `body` ran, by request path:
 * seen through each response's own 'newListener' event, nothing patched.
 */
async function peakCloseListeners(server: TestServer, body: () => Promise<void>): Promise<Map<string, number>> {
  const peaks = new Map<string, number>();
  const watch = (request: IncomingMessage, response: ServerResponse) => {
    const where = new URL(request.url ?? '/', 'http://x').pathname;
    response.on('newListener', (event) => {
      if (event === 'close') peaks.set(where, Math.max(peaks.get(where) ?? 0, response.listenerCount('close') + 1));
    });
  };
  const http = server.server.app.server;
  http.prependListener('request', watch);
  try {
    await body();
  } finally {
    http.removeListener('request', watch);
  }
  return peaks;
}

describe('GET /folder/<id>/zip', () => {
  test('every active file of the folder and the folders below it, byte for byte, with a Content-Length', async () => {
    const top = await newFolder('Holiday');
    const sub = await newFolder('Photos', top);
    await newFolder('empty', sub);
    const big = randomBytes(3 * 1024 * 1024 + 17);
    const expected = new Map<string, string>([
      ['notes.txt', sha('first notes')],
      ['big.bin', sha(big)],
      ['Photos/a.jpg', sha('not really a jpeg')],
      ['Photos/zero-ish.txt', sha('x')],
    ]);
    await uploadInto(top, 'notes.txt', 'first notes');
    await uploadInto(top, 'big.bin', big);
    await uploadInto(sub, 'a.jpg', 'not really a jpeg');
    await uploadInto(sub, 'zero-ish.txt', 'x');
    // Outside the folder: never in its ZIP.
    await uploadInto(null, 'elsewhere.txt', 'not in the folder');

    const { response, file, bytes } = await fetchZip(`/folder/${top}/zip`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/zip');
    assert.equal(Number(response.headers.get('content-length')), bytes.length);
    assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="?Holiday\.zip"?$/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const zip = await unzipped(file);
    assert.deepEqual(zip.files, expected);
    assert.deepEqual(zip.dirs.sort(), ['Photos/', 'Photos/empty/']);

    // A sub-folder's own ZIP holds only what is below it.
    const inner = await unzipped((await fetchZip(`/folder/${sub}/zip`)).file);
    assert.deepEqual([...inner.files.keys()].sort(), ['a.jpg', 'zero-ish.txt']);

    // HEAD: the same length, no body, no download counted.
    const head = await t.fetch(`/folder/${top}/zip`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers.get('content-length')), bytes.length);

    // Each file's download start is counted, as for its own download (the top folder's
    // files were in one ZIP, the sub-folder's in two).
    await eventually(async () => {
      for (const [folderId, times] of [
        [top, 1],
        [sub, 2],
      ] as const) {
        const rows = await t.server.services.store.files.list({ ownerId: owner.account.id, folderId, limit: 10 });
        assert.equal(rows.length, 2);
        for (const row of rows) assert.equal(row.downloads, times, row.name);
      }
    });
  });

  test('hostile and unicode names: safe, unique (ignoring case and normalisation) paths, nothing outside the folder', async () => {
    const top = await newFolder('../../etc/passwd');
    const nfc = 'Résumé.txt'.normalize('NFC');
    const nfd = 'Résumé.txt'.normalize('NFD');
    const dotty = await newFolder('..', top);
    const slashy = await newFolder('a/b\\c', top);
    await newFolder('C:\\Windows', top);
    await uploadInto(top, 'report.pdf', 'one');
    await uploadInto(top, 'REPORT.pdf', 'two');
    await uploadInto(top, 'report.pdf', 'three');
    await uploadInto(top, nfc, 'nfc');
    await uploadInto(top, nfd, 'nfd');
    await uploadInto(top, '日本語のファイル.txt', 'japanese');
    await uploadInto(top, '<script>alert(1)</script>.html', 'html');
    await uploadInto(dotty, '...', 'dots');
    await uploadInto(slashy, 'inner.txt', 'inner');

    const { response, file } = await fetchZip(`/folder/${top}/zip`);
    assert.equal(response.status, 200);
    // The attachment name is made safe too.
    assert.doesNotMatch(response.headers.get('content-disposition') ?? '', /\.\.\/|\//);
    const zip = await unzipped(file);
    for (const name of zip.names) {
      assert.ok(!name.startsWith('/') && !name.includes('\\') && !/^[A-Za-z]:/.test(name), name);
      assert.ok(!name.split('/').some((segment) => segment === '.' || segment === '..'), name);
    }
    const folded = zip.names.map((name) => name.normalize('NFC').toLowerCase());
    assert.equal(new Set(folded).size, folded.length, `duplicate names: ${zip.names.join(', ')}`);
    // Every file is there under some name, with its own bytes.
    assert.deepEqual([...zip.files.values()].sort(), ['one', 'two', 'three', 'nfc', 'nfd', 'japanese', 'html', 'dots', 'inner'].map(sha).sort());
    assert.ok(zip.files.has('日本語のファイル.txt'), [...zip.files.keys()].join(', '));
    assert.ok(zip.files.has('a_b_c/inner.txt'), [...zip.files.keys()].join(', '));
    assert.ok(zip.files.has('__/___'), [...zip.files.keys()].join(', '));
    assert.ok(zip.names.includes('_C:_Windows/'), zip.names.join(', '));
  });

  test('blocked and deleted files are left out; an unknown folder is a 404 page', async () => {
    const top = await newFolder('moderated');
    await uploadInto(top, 'kept.txt', 'kept');
    const blocked = await uploadInto(top, 'blocked.txt', 'blocked content');
    const deleted = await uploadInto(top, 'deleted.txt', 'deleted content');
    await t.server.services.files.block(blocked);
    await t.server.services.files.deleteOwned(owner.account, deleted);
    const zip = await unzipped((await fetchZip(`/folder/${top}/zip`)).file);
    assert.deepEqual([...zip.files.keys()], ['kept.txt']);

    const missing = await t.fetch('/folder/ZZZZZZZZZZ/zip', { headers: { Accept: 'text/html' } });
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /text\/html/);
  });

  test('a ZIP takes a free-download slot: refused with 429 when they are all taken', async () => {
    const limited = await t.sibling({ freeDownloadsPerIp: 1, freeDownloadSpeed: 64 * 1024 });
    try {
      const top = await newFolder('slotted');
      await uploadInto(top, 'slow.bin', randomBytes(1024 * 1024));
      // The first ZIP holds the address's only slot while it streams.
      let second: Response | undefined;
      const first = await new Promise<{ status: number }>((resolve, reject) => {
        const req = httpRequest(`${limited.url}/folder/${top}/zip`, (res) => {
          res.once('data', async () => {
            try {
              second = await limited.fetch(`/folder/${top}/zip`, { headers: { Accept: 'text/html' } });
              resolve({ status: res.statusCode ?? 0 });
            } catch (error) {
              reject(error);
            } finally {
              req.destroy();
            }
          });
          res.on('error', () => {});
        });
        req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
        req.end();
      });
      assert.equal(first.status, 200);
      assert.equal(second?.status, 429);
      assert.match(await second!.text(), /download/i);
      await eventually(() => assert.equal(limited.server.services.limits.freeDownloads.inProgress('127.0.0.1'), 0));
    } finally {
      await limited.close();
    }
  });

  test('a client that leaves mid-ZIP frees its slot and closes the file being read', async () => {
    const slow = await t.sibling({ freeDownloadSpeed: 256 * 1024 });
    try {
      const top = await newFolder('left');
      await uploadInto(top, 'first.bin', randomBytes(8 * 1024 * 1024));
      await uploadInto(top, 'second.bin', randomBytes(2 * 1024 * 1024));
      // Mid-way through the first file: its blob is open.
      const left = await startAndLeave(`${slow.url}/folder/${top}/zip`, 300 * 1024);
      assert.equal(left.status, 200);
      await eventually(() => assert.equal(slow.server.services.limits.freeDownloads.inProgress('127.0.0.1'), 0));
      // On the data folder, no descriptor of this process still points at a blob file.
      const blobDir = path.join(t.dataDir, 'blobs');
      if (await stat(blobDir).catch(() => null)) {
        await eventually(async () => {
          const open: string[] = [];
          for (const fd of await readdir('/proc/self/fd')) {
            const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
            if (target.startsWith(blobDir)) open.push(target);
          }
          assert.deepEqual(open, []);
        });
      }
    } finally {
      await slow.close();
    }
  });

  test('one close listener per ZIP response, however many files: no MaxListenersExceededWarning', async () => {
    const top = await newFolder('fifty');
    for (let i = 0; i < 50; i++) await uploadInto(top, `file-${i}.txt`, `file number ${i}\n`);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    let zip: { response: Response; file: string; bytes: Buffer } | undefined;
    try {
      const peaks = await peakCloseListeners(t, async () => {
        // The folder page: the listeners every response has (request metrics, the connection cap).
        const page = await t.fetch(`/folder/${top}`);
        assert.equal(page.status, 200);
        await page.arrayBuffer();
        zip = await fetchZip(`/folder/${top}/zip`);
      });
      assert.equal(zip!.response.status, 200);
      assert.equal((await unzipped(zip!.file)).files.size, 50);
      // The ZIP adds one of its own (the end of the free download: slot, meter, archive),
      // not one per entry nor the seven of a stream pipeline into the response.
      const everyResponse = peaks.get(`/folder/${top}`)!;
      assert.ok(everyResponse > 0);
      assert.equal(peaks.get(`/folder/${top}/zip`), everyResponse + 1);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(
      warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
      [],
    );
  });

  test('the response keeps the headers set before it (X-Request-Id)', async () => {
    const top = await newFolder('with-id');
    await uploadInto(top, 'a.txt', 'a');
    const response = await t.fetch(`/folder/${top}/zip`);
    assert.equal(response.status, 200);
    assert.ok(response.headers.get('x-request-id'), [...response.headers.keys()].join(', '));
    assert.equal(response.headers.get('content-type'), 'application/zip');
    await response.arrayBuffer();
  });

  test('the slot is taken before the plan is made, by HEAD too: with none left, 429 before any planning', async () => {
    const limited = await t.sibling({ freeDownloadsPerIp: 1, freeDownloadSpeed: 64 * 1024 });
    try {
      const busy = await newFolder('busy');
      await uploadInto(busy, 'slow.bin', randomBytes(160 * 1024));
      const other = await newFolder('other');
      await uploadInto(other, 'x.txt', 'x');
      let planned = 0;
      const store = limited.server.services.store;
      // Counts the plans made: a refused request makes none.
      const counting = {
        ...store,
        folders: {
          ...store.folders,
          children: (id: string, limit?: number) => {
            planned += 1;
            return store.folders.children(id, limit);
          },
        },
      };
      await withArchives(limited, { store: counting as MetadataStore }, async () => {
        const result = await downloadWith(`${limited.url}/folder/${busy}/zip`, async () => {
          planned = 0;
          const head = await limited.fetch(`/folder/${other}/zip`, { method: 'HEAD' });
          assert.equal(head.status, 429);
          const get = await limited.fetch(`/folder/${other}/zip`, { headers: { Accept: 'text/html' } });
          assert.equal(get.status, 429);
          await get.text();
          assert.equal(planned, 0, 'no plan made for a refused request');
        });
        assert.equal(result.status, 200);
      });
      await eventually(() => assert.equal(limited.server.services.limits.freeDownloads.inProgress('127.0.0.1'), 0));
      // A HEAD gives its slot back.
      assert.equal((await limited.fetch(`/folder/${other}/zip`, { method: 'HEAD' })).status, 200);
      await eventually(() => assert.equal(limited.server.services.limits.freeDownloads.inProgress('127.0.0.1'), 0));
    } finally {
      await limited.close();
    }
  });

  test('the caps (files, folders, depth) answer 400 and stop the walk there', async () => {
    const wide = await newFolder('wide');
    for (let i = 0; i < 6; i++) await newFolder(`sub ${i}`, wide);
    for (let i = 0; i < 5; i++) await uploadInto(wide, `f${i}.txt`, `file ${i}`);
    const deep = await newFolder('deep');
    let parent = deep;
    for (let i = 0; i < 3; i++) parent = await newFolder(`level ${i + 1}`, parent);
    await uploadInto(parent, 'bottom.txt', 'at the bottom');

    const store = t.server.services.store;
    let foldersRead = 0;
    let filesRead = 0;
    const counting = {
      ...store,
      folders: {
        ...store.folders,
        children: async (id: string, limit?: number) => {
          const rows = await store.folders.children(id, limit);
          foldersRead += rows.length;
          return rows;
        },
      },
      files: {
        ...store.files,
        list: async (query: Parameters<MetadataStore['files']['list']>[0]) => {
          const rows = await store.files.list(query);
          filesRead += rows.length;
          return rows;
        },
      },
    } as MetadataStore;
    const refused = async (folder: string, pattern: RegExp) => {
      const response = await t.fetch(`/folder/${folder}/zip`, { headers: { Accept: 'text/html' } });
      assert.equal(response.status, 400);
      assert.match(await response.text(), pattern);
    };
    await withArchives(t, { store: counting, limits: { maxFolders: 2 } }, async () => {
      await refused(wide, /more than 2 folders/);
      assert.ok(foldersRead <= 3, `${foldersRead} folder rows read`);
    });
    await withArchives(t, { store: counting, limits: { maxFiles: 2 } }, async () => {
      filesRead = 0;
      await refused(wide, /more than 2 files/);
      assert.ok(filesRead <= 3, `${filesRead} file rows read`);
    });
    // Three levels below the top: refused with two, whole with three (never cut silently).
    await withArchives(t, { limits: { maxDepth: 2 } }, async () => {
      await refused(deep, /more than 2 levels deep/);
    });
    await withArchives(t, { limits: { maxDepth: 3 } }, async () => {
      const zip = await unzipped((await fetchZip(`/folder/${deep}/zip`)).file);
      assert.deepEqual([...zip.files.keys()], ['level 1/level 2/level 3/bottom.txt']);
    });
  });

  test('a file blocked, deleted or moved out of the tree after the plan is never sent: the download is cut', async () => {
    const slow = await t.sibling({ freeDownloadSpeed: 256 * 1024 });
    try {
      const elsewhere = await newFolder('elsewhere');
      const cases = {
        blocked: (id: string) => slow.server.services.files.block(id).then(() => {}),
        deleted: (id: string) => slow.server.services.files.deleteOwned(owner.account, id).then(() => {}),
        moved: (id: string) => slow.server.services.folders.move(owner.account, elsewhere, [id]).then(() => {}),
      };
      // One case at a time: on SQLite the two servers of this process share one database
      // file, and better-sqlite3 waits for its lock synchronously, blocking the event loop
      // the other server needs to finish its transaction (seen as SQLITE_BUSY in CI when
      // the three ran at once). Separate processes, as in production, wait for each other.
      const results = [];
      for (const [name, change] of Object.entries(cases)) {
        const top = await newFolder(`changing ${name}`);
        const marker = `${name} ${randomBytes(16).toString('hex')} `.repeat(64);
        // Newest first in the ZIP: the marked file is uploaded first, so it comes last.
        const later = await uploadInto(top, 'later.txt', marker);
        await uploadInto(top, 'first.bin', randomBytes(1024 * 1024));
        const result = await downloadWith(`${slow.url}/folder/${top}/zip`, () => change(later));
        results.push({ name, marker, ...result });
      }
      for (const result of results) {
        assert.equal(result.status, 200, result.name);
        assert.ok(result.body.length < result.length, `${result.name}: ${result.body.length} of ${result.length} bytes`);
        assert.ok(!result.body.includes(Buffer.from(result.marker.slice(0, 40))), `${result.name}: its bytes were sent`);
      }
      await eventually(() => assert.equal(slow.server.services.limits.freeDownloads.inProgress('127.0.0.1'), 0));
    } finally {
      await slow.close();
    }
  });

  test('bytes served count what was sent of each file, not its size', async () => {
    const slow = await t.sibling({ freeDownloadSpeed: 256 * 1024 });
    try {
      const top = await newFolder('counted');
      await uploadInto(top, 'big.bin', randomBytes(4 * 1024 * 1024));
      const stats = () => slow.server.services.store.housekeeping.stats();
      const before = (await stats()).bytesServed;
      const left = await startAndLeave(`${slow.url}/folder/${top}/zip`, 300 * 1024);
      assert.equal(left.status, 200);
      await eventually(async () => {
        const served = (await stats()).bytesServed - before;
        assert.ok(served > 0 && served < 2 * 1024 * 1024, `${served} bytes counted`);
      });
    } finally {
      await slow.close();
    }
  });
});
