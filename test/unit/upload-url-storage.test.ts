// The JSON file that keeps tus upload URLs between runs (src/client/upload-url-storage.ts):
// tus-js-client's UrlStorage contract, a private file rewritten whole, no entry lost to
// the uploads of one process running side by side.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { PreviousUpload } from 'tus-js-client';
import { JsonFileUrlStorage } from '../../src/client/upload-url-storage.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'filehaven-url-storage-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const NOW = Date.parse('2026-11-21T10:04:05Z');

function upload(url: string, creationTime = new Date(NOW).toString()): PreviousUpload {
  return { size: 10, metadata: { filename: 'a.bin' }, creationTime, urlStorageKey: '', uploadUrl: url, parallelUploadUrls: null };
}

test('add, find by fingerprint (exactly, not by prefix), remove; the file is 0600 in a 0700 folder, with no temp files left', async () => {
  const file = path.join(dir, 'one', 'filehaven', 'uploads.json');
  const storage = new JsonFileUrlStorage(file, () => NOW);
  assert.deepEqual(await storage.findAllUploads(), [], 'no file yet: nothing stored');
  const key = await storage.addUpload('fp-a', upload('http://127.0.0.1:1/uploads/a'));
  await storage.addUpload('fp-a-longer', upload('http://127.0.0.1:1/uploads/b'));
  const found = await storage.findUploadsByFingerprint('fp-a');
  assert.deepEqual(
    found.map((entry) => [entry.urlStorageKey, entry.uploadUrl, entry.size, entry.metadata.filename]),
    [[key, 'http://127.0.0.1:1/uploads/a', 10, 'a.bin']],
  );
  assert.equal((await stat(file)).mode & 0o777, 0o600);
  assert.equal((await stat(path.dirname(file))).mode & 0o777, 0o700);
  assert.deepEqual(await readdir(path.dirname(file)), ['uploads.json']);

  // A second instance (a later process) reads what the first wrote.
  const later = new JsonFileUrlStorage(file, () => NOW);
  await later.removeUpload(key);
  assert.deepEqual(await later.findUploadsByFingerprint('fp-a'), []);
  await later.removeUploadsByFingerprint('fp-a-longer');
  assert.deepEqual(await storage.findAllUploads(), []);
});

test('changes made at once in one process all land (the uploads of --parallel)', async () => {
  const file = path.join(dir, 'parallel.json');
  const storage = new JsonFileUrlStorage(file, () => NOW);
  const keys = await Promise.all(Array.from({ length: 20 }, (_, index) => storage.addUpload(`fp-${index}`, upload(`http://127.0.0.1:1/uploads/${index}`))));
  assert.equal((await storage.findAllUploads()).length, 20);
  await Promise.all(keys.slice(0, 10).map((key) => storage.removeUpload(key)));
  assert.deepEqual((await storage.findAllUploads()).map((entry) => entry.urlStorageKey).sort(), keys.slice(10).sort());
});

test('a damaged file counts as empty and is rewritten; entries older than 30 days go at the next write', async () => {
  const file = path.join(dir, 'damaged.json');
  await writeFile(file, '{"version":1,"uploads":{"x":');
  const storage = new JsonFileUrlStorage(file, () => NOW);
  assert.deepEqual(await storage.findAllUploads(), []);
  await storage.addUpload('fp', upload('http://127.0.0.1:1/uploads/fp'));
  assert.equal(Object.keys(JSON.parse(await readFile(file, 'utf8')).uploads).length, 1, 'rewritten whole');
  const stale = {
    fingerprint: 'old',
    uploadUrl: 'http://127.0.0.1:1/uploads/old',
    size: 10,
    metadata: {},
    creationTime: new Date(NOW - 31 * 24 * 3600 * 1000).toString(),
  };
  await writeFile(file, JSON.stringify({ version: 1, uploads: { k1: stale } }));
  assert.equal((await storage.findAllUploads()).length, 1, 'kept until the next write');
  await storage.addUpload('new', upload('http://127.0.0.1:1/uploads/new'));
  assert.deepEqual(
    (await storage.findAllUploads()).map((entry) => entry.uploadUrl),
    ['http://127.0.0.1:1/uploads/new'],
  );
});
