import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { BlobStorageError } from '../../src/blob/blob-store.js';
import { type Config, DEFAULTS } from '../../src/config/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { type FreshBackend, freshBackend } from '../helpers/backend.js';
import { filePart, multipartBody, rawRequest } from '../helpers/raw-upload.js';
import { atomError } from '../helpers/server.js';
import { openStorageView, type StorageView } from '../helpers/storage-view.js';

/**
 * A storage failure while an upload is staged (API.md 3): 500 errorUploadFaild "storage
 * error", logged, never a 400 blamed on the client; once storage is back, uploads work.
 * Started without the test helper so the service log can be watched.
 */

const BOUNDARY = '----filehaven-storage-error-boundary-Q2w8';
/** A hang guard, not a speed check. */
const GUARD = { timeout: 60_000 };

let server: RunningServer;
let backend: FreshBackend;
let storage: StorageView;
let dataDir: string;
let key: string;
const logged: { error: unknown; message: string }[] = [];

before(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-test-'));
  backend = await freshBackend();
  const config: Config = { ...DEFAULTS, port: 0, dataDir, logLevel: 'silent', ...backend.config };
  server = await startServer(config, { log: (error, message) => logged.push({ error, message }) });
  storage = await openStorageView(server.services);
  const login = `storage-${process.pid}`;
  const password = 'correct horse battery';
  await server.services.accounts.create({ login, password });
  const response = await fetch(`${server.baseUrl}/apikeys`, { method: 'POST', body: new URLSearchParams({ login, password }) });
  const body = await response.text();
  assert.equal(response.status, 201, body);
  key = /<content type="text">([^<]+)<\/content>/.exec(body)![1]!;
});
after(async () => {
  await server?.close();
  await storage?.close();
  await backend?.remove();
  await rm(dataDir, { recursive: true, force: true });
});

async function upload(name: string) {
  const body = multipartBody(BOUNDARY, [filePart('upload', name, randomBytes(4096))]);
  const outcome = await rawRequest(server.baseUrl, {
    path: '/files',
    headers: { Authorization: key, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': body.length },
    body,
  });
  assert.ok(outcome.response, outcome.error?.message);
  return outcome.response;
}

test(
  'an upload the storage refuses (temp folder not writable, bucket denying writes) is 500 errorUploadFaild, logged; restored, uploads work',
  GUARD,
  async () => {
    const restore = await storage.failWrites();

    const failed = await upload('doomed.bin');
    assert.equal(failed.status, 500, failed.body);
    assert.deepEqual(atomError(failed.body), { code: 'errorUploadFaild', message: 'Upload failed: storage error' });
    assert.equal(logged.length, 1, String(logged.map((entry) => entry.message)));
    assert.ok(logged[0]!.error instanceof BlobStorageError, String(logged[0]!.error));
    assert.equal(await storage.count('files'), 0);

    await restore();
    // Listed once the storage works again (a temp folder that is a file cannot be listed).
    assert.deepEqual(await storage.leftovers(), [], 'nothing of the failed upload is kept');
    const ok = await upload('fine.bin');
    assert.equal(ok.status, 201, ok.body);
  },
);
