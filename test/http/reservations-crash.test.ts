import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Services } from '../../src/composition.js';
import { openServices } from '../../src/composition.js';
import { type Config, DEFAULTS } from '../../src/config/config.js';
import type { Account } from '../../src/domain/types.js';
import { CHECKPOINT_BYTES } from '../../src/limits/reservations-service.js';
import { type FreshBackend, freshBackend, settingsEnv, TEST_BACKEND } from '../helpers/backend.js';
import { cleanEnv, filehavenEntry } from '../helpers/cli.js';
import { enclosureHref, entryId, errorCodeOf, request, trafficLeftOf } from '../helpers/crash-http.js';
import { ServerProcess } from '../helpers/server-process.js';

// Issue 14: a server killed (SIGKILL) while direct downloads and an upload are in flight
// leaves reservation rows; the next start settles them at their last checkpoint. The
// account must end up charged for what its clients received, never more, and less by at
// most one checkpoint's worth (plus what sat in the socket buffers) per transfer. The
// upload volume must count only files that exist.

const MiB = 1024 * 1024;
const PASSWORD = 'correct horse battery';
const TRAFFIC = 2048 * MiB;
const FILE_BYTES = 48 * MiB;
const UPLOAD_LIMIT = 80 * MiB;
/** Where a download stops reading until the kill: past the 12 MiB the kill waits for, far from the end. */
const HOLD_AT = 24 * MiB;
const IN_FLIGHT_UPLOAD = 36 * MiB;
/**
 * The most a crash may leave uncharged per transfer: the checkpoint interval, plus the
 * bytes already in the kernel's socket buffers (they reach the client after the kill; on
 * loopback those grow to a few MiB). Never charged more than received: no bound needed.
 */
const UNDERCHARGE_BOUND = CHECKPOINT_BYTES + 8 * MiB;

let backend: FreshBackend;
let dataDir: string;
let env: Record<string, string>;
const config = (): Config => ({ ...DEFAULTS, dataDir, logLevel: 'silent', ...backend.config });

before(async () => {
  backend = await freshBackend();
  dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-reservations-'));
  env = settingsEnv(backend.config);
  const services = await openServices(config(), { log: () => {} });
  try {
    await services.accounts.create({ login: 'ada', password: PASSWORD, premiumDays: 30, trafficBytes: TRAFFIC });
    // The second test's own account: whatever the first leaves open cannot move its figures.
    await services.accounts.create({ login: 'bob', password: PASSWORD, premiumDays: 30, trafficBytes: TRAFFIC });
  } finally {
    await services.close();
  }
});

after(async () => {
  await backend?.remove();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const serverArgs = ['--log-level', 'warn', '--upload-volume-premium', `${UPLOAD_LIMIT}`, '--gc-interval', '0'];
const start = () => ServerProcess.start(dataDir, serverArgs, 30_000, env);

async function apiKey(url: string, login = 'ada'): Promise<string> {
  const outcome = await request(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login, password: PASSWORD }) });
  const key = outcome.kind === 'answer' ? /<content type="text">([^<]+)<\/content>/.exec(outcome.body)?.[1] : undefined;
  assert.ok(key, JSON.stringify(outcome).slice(0, 300));
  return key;
}

async function trafficLeft(url: string, key: string): Promise<number> {
  const outcome = await request(`${url}/account`, { headers: { Authorization: key } });
  const left = outcome.kind === 'answer' ? trafficLeftOf(outcome.body) : null;
  assert.ok(left !== null, JSON.stringify(outcome).slice(0, 300));
  return left;
}

/** A multipart upload body in three pieces, so the file can stream slowly between them. */
function uploadParts(size: number, filename: string): { head: Buffer; tail: Buffer; boundary: string; length: number } {
  const boundary = `----filehaven${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { head, tail, boundary, length: head.length + size + tail.length };
}

/** Uploads `size` random bytes at full speed; the Atom answer. */
async function upload(url: string, key: string, size: number, filename: string): Promise<{ status: number; body: string }> {
  const form = new FormData();
  form.append('upload', new Blob([new Uint8Array(randomBytes(size))]), filename);
  const outcome = await request(`${url}/files`, { method: 'POST', headers: { Authorization: key }, body: form }, 120_000);
  assert.equal(outcome.kind, 'answer', JSON.stringify(outcome));
  return outcome as { status: number; body: string };
}

/**
 * A slow upload that declares `size` bytes and sends them a MiB at a time: the server
 * reserves the whole declared size when the request starts.
 */
function slowUpload(url: string, key: string, size: number): { sent: () => number; done: Promise<string> } {
  const { head, tail, boundary, length } = uploadParts(size, 'in-flight.bin');
  let sent = 0;
  const target = new URL('/files', url);
  const done = new Promise<string>((resolve) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: '/files',
        method: 'POST',
        headers: { Authorization: key, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(`answered ${res.statusCode}`));
        res.on('error', (error) => resolve(`cut: ${error.message}`));
      },
    );
    req.on('error', (error) => resolve(`cut: ${error.message}`));
    void (async () => {
      req.write(head);
      const piece = randomBytes(MiB);
      while (sent < size && !req.destroyed) {
        const n = Math.min(MiB, size - sent);
        req.write(n === MiB ? piece : piece.subarray(0, n));
        sent += n;
        await sleep(40);
      }
      if (!req.destroyed) req.end(tail);
    })();
  });
  return { sent: () => sent, done };
}

/**
 * A direct download read at a bounded pace (a MiB, then a pause). Once it holds `holdAt`
 * bytes it stops reading until `release()`, so however fast the server is, no download can
 * end before the kill; released, it drains what the sockets still hold.
 */
function slowDownload(
  href: string,
  key: string,
  holdAt: number,
): { received: () => number; release: () => void; done: Promise<{ received: number; complete: boolean }> } {
  let received = 0;
  let released = false;
  let resumeHeld: (() => void) | undefined;
  const release = () => {
    released = true;
    resumeHeld?.();
  };
  const done = new Promise<{ received: number; complete: boolean }>((resolve, reject) => {
    const req = http.get(href, { headers: { Authorization: key } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`direct download answered ${res.statusCode}`));
        res.resume();
        return;
      }
      let sincePause = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        sincePause += chunk.length;
        if (!released && received >= holdAt) {
          res.pause();
          resumeHeld = () => res.resume();
        } else if (sincePause >= MiB) {
          sincePause = 0;
          res.pause();
          setTimeout(() => res.resume(), 25);
        }
      });
      res.on('end', () => resolve({ received, complete: received === FILE_BYTES }));
      res.on('aborted', () => resolve({ received, complete: false }));
      res.on('error', () => resolve({ received, complete: false }));
    });
    req.on('error', () => resolve({ received, complete: false }));
  });
  return { received: () => received, release, done };
}

async function openRows(services: Services): Promise<number> {
  return (await services.store.reservations.list(100_000)).length;
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe(`reservations survive a crash (${TEST_BACKEND})`, { timeout: 240_000 }, () => {
  test('SIGKILL during four direct downloads and an upload near the volume limit, twice in a row', async (context) => {
    let server = await start();
    let key = await apiKey(server.url);
    const stored = await upload(server.url, key, FILE_BYTES, 'big.bin');
    assert.equal(stored.status, 201, stored.body);
    const fileId = entryId(stored.body)!;
    let expectedLeft = TRAFFIC;
    let received = 0;
    try {
      for (let round = 1; round <= 2; round++) {
        const links = await Promise.all(
          [0, 1, 2, 3].map(async () => {
            const outcome = await request(`${server.url}/files/${fileId};DirectLink`, { headers: { Authorization: key } });
            const href = outcome.kind === 'answer' ? enclosureHref(outcome.body) : null;
            assert.ok(href, JSON.stringify(outcome).slice(0, 300));
            return href;
          }),
        );
        const downloads = links.map((href) => slowDownload(href, key, HOLD_AT));
        const uploading = slowUpload(server.url, key, IN_FLIGHT_UPLOAD);
        // Every transfer well under way, none near its end.
        await waitFor(() => downloads.every((d) => d.received() >= 12 * MiB) && uploading.sent() >= 8 * MiB, 60_000, 'the transfers to get going');
        await server.kill();
        for (const download of downloads) download.release();
        const results = await Promise.all(downloads.map((d) => d.done));
        context.diagnostic(
          `round ${round}: upload cut (${await uploading.done}), downloads received ${results.map((r) => (r.received / MiB).toFixed(1)).join(', ')} MiB`,
        );
        for (const result of results) assert.equal(result.complete, false, 'the kill cut every download short');
        const roundReceived = results.reduce((sum, r) => sum + r.received, 0);
        received += roundReceived;

        server = await start();
        key = await apiKey(server.url);
        const left = await trafficLeft(server.url, key);
        const charged = TRAFFIC - left;
        const under = received - charged;
        context.diagnostic(
          `round ${round}: received ${(received / MiB).toFixed(2)} MiB in all, charged ${(charged / MiB).toFixed(2)} MiB: ${(under / MiB).toFixed(2)} MiB not charged (${(under / MiB / (4 * round)).toFixed(2)} MiB per transfer)`,
        );
        assert.ok(charged <= received, `charged ${charged} bytes for ${received} received`);
        assert.ok(under <= 4 * round * UNDERCHARGE_BOUND, `${under} bytes received and not charged, over ${4 * round} x ${UNDERCHARGE_BOUND}`);
        expectedLeft = left;
      }

      // Upload volume: the stored file counts, the two cut uploads do not. The rest of the
      // limit is free to the byte.
      const room = UPLOAD_LIMIT - FILE_BYTES;
      const tooMuch = await upload(server.url, key, room + 1, 'one-too-many.bin');
      assert.equal(errorCodeOf(tooMuch.body), 'errorUploadLimit', tooMuch.body);
      const exact = await upload(server.url, key, room, 'exactly-the-rest.bin');
      assert.equal(exact.status, 201, exact.body);
      // Those uploads used no traffic.
      assert.equal(await trafficLeft(server.url, key), expectedLeft);
    } finally {
      await server.kill();
    }
  });

  test('SIGKILL while a start settles what the last process left: each row once', async (context) => {
    // Rows an earlier process of this server left: opened and never finished, some with a
    // checkpoint. Written through the services (the same transaction a download takes).
    const ROWS = 1500;
    const services = await openServices(config(), { log: () => {} });
    let checkpoints = 0;
    let account: Account;
    let startLeft: number;
    try {
      account = (await services.store.accounts.byLogin('bob'))!;
      startLeft = account.trafficLeft;
      for (let i = 0; i < ROWS; i++) {
        const transfer = await services.reservations.takeTraffic(account.id, 1000);
        assert.ok(transfer);
        if (i % 3 === 0) {
          await services.store.reservations.checkpoint(transfer.id, 400);
          checkpoints += 400;
        }
      }
    } finally {
      await services.close();
    }
    const afterTaking = startLeft - ROWS * 1000;
    const probe = await openServices(config(), { log: () => {} });
    try {
      assert.equal((await probe.store.accounts.byId(account.id))!.trafficLeft, afterTaking);
      // Start a server and kill it once it has settled some of the rows, not all: the
      // settle runs before the server listens, so the child is watched through the database.
      let cut = false;
      for (let attempt = 1; attempt <= 4 && !cut; attempt++) {
        const before = await openRows(probe);
        const child = spawn(process.execPath, [filehavenEntry(), 'serve', '--port', '0', '--data', dataDir, ...serverArgs], {
          env: cleanEnv(env),
          stdio: 'ignore',
        });
        const exited = new Promise((resolve) => child.once('exit', resolve));
        const until = Date.now() + 30_000;
        while ((await openRows(probe)) === before && child.exitCode === null && Date.now() < until) await sleep(1);
        child.kill('SIGKILL');
        await exited;
        const open = await openRows(probe);
        context.diagnostic(`attempt ${attempt}: ${before} open rows before the start, ${open} after its kill`);
        if (open > 0 && open < before) cut = true;
        if (open === 0) break;
      }
      assert.ok(cut, 'no kill landed in the middle of the settle');
      const server = await start();
      try {
        const key = await apiKey(server.url, 'bob');
        assert.deepEqual(await probe.store.reservations.list(10), [], 'every row settled');
        const expected = afterTaking + ROWS * 1000 - checkpoints;
        assert.equal(await trafficLeft(server.url, key), expected, 'each row settled exactly once, at its checkpoint');
      } finally {
        await server.kill();
      }
    } finally {
      await probe.close();
    }
  });
});
