import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FreshBackend, freshBackend, settingsEnv } from '../helpers/backend.js';
import { ServerProcess } from '../helpers/server-process.js';

/**
 * SIGTERM (issue 10): the server stops accepting, lets the requests in progress finish
 * (uploads whose bodies are still arriving too) up to --shutdown-grace, answers what
 * arrives meanwhile on open connections with `Connection: close` and `/readyz` 503, then
 * exits 0; past the grace it cuts what is left and exits all the same.
 */
const MiB = 1024 * 1024;

let backend: FreshBackend;
let env: Record<string, string>;
let dataDir: string;

before(async () => {
  backend = await freshBackend();
  env = settingsEnv(backend.config);
  dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-shutdown-'));
});
after(async () => {
  await backend.remove();
  await rm(dataDir, { recursive: true, force: true });
});

/** Starts a server on the test data folder and gets the operator's API key. */
async function start(args: string[] = []): Promise<{ server: ServerProcess; key: string }> {
  const server = await ServerProcess.start(dataDir, ['--log-level', 'warn', ...args], 30_000, env);
  key ??= await firstKey(server);
  return { server, key: key! };
}
let key: string | undefined;

async function firstKey(server: ServerProcess): Promise<string> {
  const password = /password: (\S+)/.exec(server.log)?.[1];
  assert.ok(password, `the first start shows the operator's password:\n${server.log}`);
  const made = await fetch(`${server.url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'admin', password }) });
  const found = /<content type="text">([^<]+)</.exec(await made.text())?.[1];
  assert.ok(found, `a key (${made.status})`);
  return found;
}

/** A raw connection: what was written, and everything read until the server closes it. */
function connect(url: string): { socket: net.Socket; received: Promise<Buffer> } {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  const chunks: Buffer[] = [];
  const received = new Promise<Buffer>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  });
  return { socket, received };
}

function multipartHead(boundary: string, name: string): Buffer {
  return Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
}

const refused = (url: string) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(true));
  });

describe('graceful shutdown', () => {
  test('health and readiness answer while the server runs', async () => {
    const { server } = await start();
    try {
      // A client's own request id is not taken (only a trusted proxy's is): the server makes one.
      const health = await fetch(`${server.url}/healthz`, { headers: { 'X-Request-Id': 'client-made-up' } });
      assert.equal(health.status, 200);
      assert.equal(await health.text(), 'ok\n');
      const id = health.headers.get('x-request-id');
      assert.match(id ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'every response names its request');
      assert.notEqual((await fetch(`${server.url}/healthz`)).headers.get('x-request-id'), id, 'one id per request');
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal(ready.headers.get('cache-control'), 'no-store');
      assert.equal(await ready.text(), 'ready\n');
    } finally {
      assert.deepEqual(await server.stop(), { code: 0, signal: null });
    }
  });

  test('behind a trusted proxy, the request id the proxy sends is the one answered', async () => {
    const { server } = await start(['--trust-proxy', 'true']);
    try {
      const answer = await fetch(`${server.url}/healthz`, { headers: { 'X-Request-Id': '6f1c0d2e9a8b7c6d5e4f3a2b1c0d9e8f' } });
      assert.equal(answer.headers.get('x-request-id'), '6f1c0d2e9a8b7c6d5e4f3a2b1c0d9e8f');
    } finally {
      await server.stop();
    }
  });

  test('an upload whose body is still arriving at SIGTERM completes; the request behind it gets 503 from /readyz; exit 0', async () => {
    const { server, key } = await start();
    const content = randomBytes(6 * MiB);
    const boundary = 'shutdownboundary';
    const head = multipartHead(boundary, 'late.bin');
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const { socket, received } = connect(server.url);
    socket.write(
      `POST /files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + content.length + tail.length}\r\n\r\n`,
    );
    socket.write(head);
    socket.write(content.subarray(0, 2 * MiB));
    await sleep(300);
    const stopped = server.stop(30_000);
    await sleep(300);
    assert.equal(await refused(server.url), true, 'no new connection is accepted once the server drains');
    // The rest of the body, and a second request pipelined behind the upload.
    socket.write(content.subarray(2 * MiB));
    socket.write(tail);
    socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const text = (await received).toString('latin1');
    const answers = text.split(/(?=HTTP\/1\.1 )/);
    assert.equal(answers.length, 2, text);
    assert.match(answers[0]!, /^HTTP\/1\.1 201 /, 'the upload landed');
    assert.match(answers[1]!, /^HTTP\/1\.1 503 /);
    assert.match(answers[1]!, /\r\nconnection: close\r\n/i);
    assert.match(answers[1]!, /\r\n\r\nnot ready: shutting down\n$/);
    assert.deepEqual(await stopped, { code: 0, signal: null }, 'a clean exit once the requests are done');

    // Acknowledged is kept: the next start serves the bytes.
    const link = /title="download_link" href="([^"]+)"/.exec(answers[0]!)?.[1];
    assert.ok(link, answers[0]);
    const next = await start();
    try {
      const path = new URL(link).pathname;
      const download = await fetch(`${next.server.url}${path}?download=1`);
      assert.equal(download.status, 200);
      const bytes = Buffer.from(await download.arrayBuffer());
      assert.equal(createHash('sha256').update(bytes).digest('hex'), createHash('sha256').update(content).digest('hex'));
    } finally {
      await next.server.stop();
    }
  });

  test('past --shutdown-grace a stalled upload is cut, the server exits 0, and no file is left of it', async () => {
    const { server, key } = await start(['--shutdown-grace', '1s']);
    const boundary = 'stalledboundary';
    const head = multipartHead(boundary, 'stalled.bin');
    const { socket, received } = connect(server.url);
    socket.on('error', () => {});
    socket.write(
      `POST /files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + 4 * MiB}\r\n\r\n`,
    );
    socket.write(head);
    socket.write(randomBytes(MiB));
    await sleep(300);
    const began = Date.now();
    const exit = await server.stop(20_000);
    const took = Date.now() - began;
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(took >= 900, `the upload had its grace (${took} ms)`);
    await received.catch(() => Buffer.alloc(0));
    const next = await start();
    try {
      const listing = await (await fetch(`${next.server.url}/files`, { headers: { Authorization: key } })).text();
      assert.doesNotMatch(listing, /stalled\.bin/, 'nothing of the cut upload is listed');
    } finally {
      await next.server.stop();
    }
  });
});
