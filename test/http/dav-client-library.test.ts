import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type FileStat, type WebDAVClient } from 'webdav';
import { FilehavenClient } from '../../src/client/index.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// Issue 27: a file manager's client library for the everyday steps. `webdav` on npm
// (perry-mitchell's client, the one many Node and browser apps use), unchanged, against
// /dav/ with the login and an API key: make folders, upload, list, download, rename,
// copy, delete; and what it did is what the API shows. Names carry what XML and URLs
// must escape (&, <, %, #, spaces) and non-Latin letters.

let t: TestServer;
let ada: TestAccount;
let dav: WebDAVClient;
let api: FilehavenClient;
before(async () => {
  t = await startTestServer();
  ada = await t.account({ premiumDays: 30, trafficBytes: 64 * 1024 * 1024 });
  dav = createClient(`${t.url}/dav/`, { username: ada.login, password: ada.key });
  api = new FilehavenClient({ server: t.url, key: ada.key });
});
after(() => t?.close());

async function list(folder: string): Promise<FileStat[]> {
  return (await dav.getDirectoryContents(folder)) as FileStat[];
}

async function bytesOf(where: string): Promise<Buffer> {
  return Buffer.from((await dav.getFileContents(where, { format: 'binary' })) as ArrayBuffer);
}

async function activeFiles(): Promise<Array<{ id: string; name: string; size: number; folderId: string | null }>> {
  const files = [];
  for await (const file of api.allFiles({ status: ['A'] })) files.push(file);
  return files;
}

test('createDirectory, putFileContents, getDirectoryContents and getFileContents', async () => {
  await dav.createDirectory('/Rapports 2026');
  await dav.createDirectory('/deep/er/est', { recursive: true });
  const content = randomBytes(200_000);
  assert.equal(await dav.putFileContents('/Rapports 2026/résumé & notes <v2> 100%.txt', content), true);
  assert.equal(await dav.putFileContents('/deep/er/est/vide.txt', Buffer.alloc(0)), true);

  const top = await list('/');
  assert.deepEqual(top.map((item) => [item.basename, item.type]).sort(), [
    ['Rapports 2026', 'directory'],
    ['deep', 'directory'],
  ]);
  const reports = await list('/Rapports 2026');
  assert.equal(reports.length, 1);
  assert.equal(reports[0]!.basename, 'résumé & notes <v2> 100%.txt');
  assert.equal(reports[0]!.filename, '/Rapports 2026/résumé & notes <v2> 100%.txt');
  assert.equal(reports[0]!.size, content.length);
  assert.equal(reports[0]!.type, 'file');
  assert.ok(reports[0]!.etag, 'a file has an ETag');
  assert.ok(!Number.isNaN(Date.parse(reports[0]!.lastmod)), `lastmod ${reports[0]!.lastmod}`);
  assert.deepEqual(await bytesOf('/Rapports 2026/résumé & notes <v2> 100%.txt'), content);
  const empty = await dav.stat('/deep/er/est/vide.txt');
  assert.equal((empty as FileStat).size, 0);

  // The same files through the API: names as given, in their folders, the same bytes.
  const files = await activeFiles();
  const stored = files.find((file) => file.name === 'résumé & notes <v2> 100%.txt');
  assert.ok(stored, JSON.stringify(files));
  assert.equal(stored.size, content.length);
  const folder = await api.folder(stored.folderId!);
  assert.equal(folder.folder.name, 'Rapports 2026');
  const download = await api.download(stored.id);
  const chunks: Buffer[] = [];
  for await (const chunk of download.body) chunks.push(chunk as Buffer);
  assert.deepEqual(Buffer.concat(chunks), content);
});

test('moveFile renames in place and into another folder; the API sees the same file under its new name', async () => {
  await dav.createDirectory('/rename');
  const content = Buffer.from('the one file, renamed twice');
  await dav.putFileContents('/rename/draft #1.txt', content);
  const before = (await activeFiles()).find((file) => file.name === 'draft #1.txt');
  assert.ok(before);

  await dav.moveFile('/rename/draft #1.txt', '/rename/final — 最終版.txt');
  assert.equal(await dav.exists('/rename/draft #1.txt'), false);
  assert.deepEqual(await bytesOf('/rename/final — 最終版.txt'), content);

  await dav.createDirectory('/done');
  await dav.moveFile('/rename/final — 最終版.txt', '/done/final — 最終版.txt');
  assert.deepEqual(
    (await list('/rename')).map((item) => item.basename),
    [],
  );
  assert.deepEqual(
    (await list('/done')).map((item) => item.basename),
    ['final — 最終版.txt'],
  );
  // A move keeps the file: same id, new name, new folder.
  const after = (await activeFiles()).find((file) => file.id === before.id);
  assert.equal(after?.name, 'final — 最終版.txt');
  assert.equal((await api.folder(after!.folderId!)).folder.name, 'done');

  // A folder renamed carries its files with it.
  await dav.moveFile('/done', '/archive 🗄');
  assert.equal(await dav.exists('/done'), false);
  assert.deepEqual(await bytesOf('/archive 🗄/final — 最終版.txt'), content);
});

test('copyFile makes a second file; putFileContents over a name replaces its content', async () => {
  await dav.createDirectory('/copies');
  await dav.putFileContents('/copies/a.bin', Buffer.from('first'));
  await dav.copyFile('/copies/a.bin', '/copies/b.bin');
  await dav.putFileContents('/copies/a.bin', Buffer.from('second, longer'));
  assert.deepEqual(await bytesOf('/copies/a.bin'), Buffer.from('second, longer'));
  assert.deepEqual(await bytesOf('/copies/b.bin'), Buffer.from('first'));
  assert.deepEqual((await list('/copies')).map((item) => [item.basename, item.size]).sort(), [
    ['a.bin', 14],
    ['b.bin', 5],
  ]);
  // One active file per path through the API too: the replaced content is not listed beside the new.
  const names = (await activeFiles()).map((file) => file.name).filter((name) => name === 'a.bin' || name === 'b.bin');
  assert.deepEqual(names.sort(), ['a.bin', 'b.bin']);
});

test('deleteFile removes a file and a folder with what is in it', async () => {
  await dav.createDirectory('/trash/inner', { recursive: true });
  await dav.putFileContents('/trash/one.txt', 'one');
  await dav.putFileContents('/trash/inner/two.txt', 'two');
  await dav.deleteFile('/trash/one.txt');
  assert.deepEqual(
    (await list('/trash')).map((item) => item.basename),
    ['inner'],
  );
  await dav.deleteFile('/trash');
  assert.equal(await dav.exists('/trash'), false);
  assert.equal(await dav.exists('/trash/inner/two.txt'), false);
  const left = (await activeFiles()).map((file) => file.name);
  assert.ok(!left.includes('one.txt') && !left.includes('two.txt'), JSON.stringify(left));
  const folders = (await api.listFolders()).items.map((folder) => folder.name);
  assert.ok(!folders.includes('trash') && !folders.includes('inner'), JSON.stringify(folders));
});

test('two API files of one name in a folder are listed once each, the newer as "stem (<id>).ext"', async () => {
  const older = await t.upload(ada.key, 'twice.txt', 'older');
  // Upload times are in milliseconds: the second is surely the newer.
  await sleep(5);
  const newer = await t.upload(ada.key, 'twice.txt', 'newer');
  const names = (await list('/')).map((item) => item.basename);
  assert.ok(names.includes('twice.txt'), JSON.stringify(names));
  assert.ok(names.includes(`twice (${newer.id}).txt`), JSON.stringify(names));
  assert.ok(!names.includes(`twice (${older.id}).txt`), JSON.stringify(names));
  assert.equal((await bytesOf('/twice.txt')).toString(), 'older');
  assert.equal((await bytesOf(`/twice (${newer.id}).txt`)).toString(), 'newer');
});

test('a wrong key is refused with 401 and a challenge', async () => {
  const wrong = createClient(`${t.url}/dav/`, { username: ada.login, password: 'not the key' });
  await assert.rejects(wrong.getDirectoryContents('/'), (error: { status?: number }) => error.status === 401);
});
