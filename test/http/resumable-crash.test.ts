import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServices } from '../../src/composition.js';
import { type Config, DEFAULTS } from '../../src/config/config.js';
import { type FreshBackend, freshBackend, settingsEnv } from '../helpers/backend.js';
import { ServerProcess } from '../helpers/server-process.js';
import { OFFSET_STREAM, streamedPatch, TUS, uploadMetadata } from '../helpers/tus.js';

// Issue 11, "done when": a resumable upload whose server is killed (SIGKILL) at random
// points mid-PATCH, several times, then stopped and started between two PATCHes,
// resumes each time from the offset the store kept and ends as a file with the right
// SHA-256, on the run's backend. (npm run bench does the same with 2 GiB.)

const MiB = 1024 * 1024;
const PASSWORD = 'correct horse battery';
const FILE_BYTES = 48 * MiB;
const KILLS = 3;
/** A hang guard, not a speed check. */
const GUARD = { timeout: 300_000 };

let backend: FreshBackend;
let dataDir: string;
let env: Record<string, string>;
const config = (): Config => ({ ...DEFAULTS, dataDir, logLevel: 'silent', ...backend.config });
const start = () => ServerProcess.start(dataDir, ['--log-level', 'warn', '--gc-interval', '0'], 30_000, env);

before(async () => {
  backend = await freshBackend();
  dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-resumable-crash-'));
  env = settingsEnv(backend.config);
  const services = await openServices(config(), { log: () => {} });
  try {
    await services.accounts.create({ login: 'ada', password: PASSWORD, premiumDays: 30, trafficBytes: 1024 * MiB });
  } finally {
    await services.close();
  }
});

after(async () => {
  await backend?.remove();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function apiKey(url: string): Promise<string> {
  const response = await fetch(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'ada', password: PASSWORD }) });
  const key = /<content type="text">([^<]+)<\/content>/.exec(await response.text())?.[1];
  assert.ok(key, 'an API key');
  return key;
}

async function storedOffset(url: string, key: string, id: string): Promise<number> {
  const head = await fetch(`${url}/uploads/${id}`, { method: 'HEAD', headers: { ...TUS, Authorization: key } });
  assert.equal(head.status, 200);
  return Number(head.headers.get('upload-offset'));
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

test('killed at random points mid-PATCH, then restarted between two PATCHes: the upload resumes each time and ends with the right SHA-256', GUARD, async () => {
  const content = randomBytes(FILE_BYTES);
  let server = await start();
  try {
    const key = await apiKey(server.url);
    const created = await fetch(`${server.url}/uploads`, {
      method: 'POST',
      headers: { ...TUS, Authorization: key, 'Upload-Length': String(FILE_BYTES), 'Upload-Metadata': uploadMetadata({ filename: 'survivor.bin' }) },
    });
    assert.equal(created.status, 201, await created.text());
    const id = created.headers.get('location')!.split('/').at(-1)!;

    let offset = 0;
    const history: string[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      // Send a random 4 to 12 MiB of the rest, then kill the server with the request open.
      const until = Math.min(FILE_BYTES - MiB, offset + randomInt(4 * MiB, 12 * MiB));
      const patch = streamedPatch(server.url, key, id, offset, FILE_BYTES - offset);
      for (let sent = offset; sent < until; sent += 256 * 1024) await patch.write(content.subarray(sent, Math.min(until, sent + 256 * 1024)));
      await sleep(randomInt(0, 300));
      await server.kill();
      assert.equal((await patch.outcome).kind, 'cut');
      server = await start();
      const resumed = await storedOffset(server.url, key, id);
      history.push(`sent ${offset}..${until}, kept ${resumed}`);
      assert.ok(resumed <= until, `never more than was sent: ${history.join('; ')}`);
      offset = resumed;
    }

    // A clean stop between two PATCHes.
    const middle = offset + Math.floor((FILE_BYTES - offset) / 2);
    const first = await fetch(`${server.url}/uploads/${id}`, {
      method: 'PATCH',
      headers: { ...TUS, Authorization: key, 'Upload-Offset': String(offset), 'Content-Type': OFFSET_STREAM },
      body: new Uint8Array(content.subarray(offset, middle)),
    });
    assert.equal(first.status, 204, await first.text());
    await server.stop();
    server = await start();
    assert.equal(await storedOffset(server.url, key, id), middle, history.join('; '));
    const last = await fetch(`${server.url}/uploads/${id}`, {
      method: 'PATCH',
      headers: { ...TUS, Authorization: key, 'Upload-Offset': String(middle), 'Content-Type': OFFSET_STREAM },
      body: new Uint8Array(content.subarray(middle)),
    });
    const body = await last.text();
    assert.equal(last.status, 204, body);
    const fileId = last.headers.get('filehaven-file-id')!;

    // The digest the server recorded, and the bytes it serves, are the file's.
    const info = await fetch(`${server.url}/files/${fileId};DirectLink`, { headers: { Authorization: key } });
    const href = /<link href="([^"]+)" rel="enclosure"/.exec(await info.text())?.[1];
    assert.ok(href);
    const served = Buffer.from(await (await fetch(href.replace(/&amp;/g, '&'), { headers: { Authorization: key } })).arrayBuffer());
    assert.equal(served.length, FILE_BYTES);
    assert.equal(sha256(served), sha256(content), history.join('; '));
    const services = await openServices(config(), { log: () => {} });
    try {
      assert.equal((await services.store.files.byId(fileId))?.sha256, sha256(content), 'the recorded digest');
    } finally {
      await services.close();
    }
  } finally {
    await server.kill();
  }
});

test("a PATCH hashed with node:crypto (no saved state), then the rest on another server process: the recorded SHA-256 is the file's", GUARD, async () => {
  const length = 20 * MiB;
  const content = randomBytes(length);
  const half = 9 * MiB + 12_345;
  let server = await start();
  try {
    const key = await apiKey(server.url);
    const created = await fetch(`${server.url}/uploads`, {
      method: 'POST',
      headers: { ...TUS, Authorization: key, 'Upload-Length': String(length), 'Upload-Metadata': uploadMetadata({ filename: 'two-processes.bin' }) },
    });
    assert.equal(created.status, 201, await created.text());
    const id = created.headers.get('location')!.split('/').at(-1)!;
    const first = await fetch(`${server.url}/uploads/${id}`, {
      method: 'PATCH',
      headers: { ...TUS, Authorization: key, 'Upload-Offset': '0', 'Content-Type': OFFSET_STREAM },
      body: new Uint8Array(content.subarray(0, half)),
    });
    assert.equal(first.status, 204, await first.text());
    // The first process kept its digest in memory: no state was saved for another process.
    const services = await openServices(config(), { log: () => {} });
    try {
      assert.equal((await services.store.resumableUploads.byId(id))?.digestCheckpoints, '[]', 'nothing saved by the node:crypto digest');
    } finally {
      await services.close();
    }
    await server.stop();
    server = await start();
    const last = await fetch(`${server.url}/uploads/${id}`, {
      method: 'PATCH',
      headers: { ...TUS, Authorization: key, 'Upload-Offset': String(half), 'Content-Type': OFFSET_STREAM },
      body: new Uint8Array(content.subarray(half)),
    });
    assert.equal(last.status, 204, await last.text());
    const fileId = last.headers.get('filehaven-file-id')!;
    const check = await openServices(config(), { log: () => {} });
    try {
      assert.equal((await check.store.files.byId(fileId))?.sha256, sha256(content), 'the recorded digest');
    } finally {
      await check.close();
    }
  } finally {
    await server.kill();
  }
});
