import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServices } from '../../src/composition.js';
import { type Config, DEFAULTS } from '../../src/config/config.js';
import { CHECKPOINT_BYTES } from '../../src/limits/reservations-service.js';
import { type FreshBackend, freshBackend, settingsEnv, TEST_BACKEND } from '../helpers/backend.js';
import { entryId, request, trafficLeftOf } from '../helpers/crash-http.js';
import { ServerProcess } from '../helpers/server-process.js';

// Issue 25: "kill -9 during a fast share download (charged what was sent)". A fast share of
// a premium owner is paid from the owner's traffic exactly as a direct link is (issue 14):
// the reservation row the download opened is settled by the next start at its last
// checkpoint, so the owner is charged at most what the client received, and less by at
// most one checkpoint plus what sat in the socket buffers. The share's count (taken before
// the first byte) stays.

const MiB = 1024 * 1024;
const PASSWORD = 'correct horse battery';
const TRAFFIC = 1024 * MiB;
const FILE_BYTES = 32 * MiB;
const HOLD_AT = 16 * MiB;
const UNDERCHARGE_BOUND = CHECKPOINT_BYTES + 8 * MiB;

let backend: FreshBackend;
let dataDir: string;
let env: Record<string, string>;
const config = (): Config => ({ ...DEFAULTS, dataDir, logLevel: 'silent', ...backend.config });

before(async () => {
  backend = await freshBackend();
  dataDir = await mkdtemp(path.join(tmpdir(), 'filehaven-share-crash-'));
  env = settingsEnv(backend.config);
  const services = await openServices(config(), { log: () => {} });
  try {
    await services.accounts.create({ login: 'ada', password: PASSWORD, premiumDays: 30, trafficBytes: TRAFFIC });
  } finally {
    await services.close();
  }
});

after(async () => {
  await backend?.remove();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const start = () => ServerProcess.start(dataDir, ['--log-level', 'warn', '--gc-interval', '0'], 30_000, env);

async function apiKey(url: string): Promise<string> {
  const outcome = await request(`${url}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'ada', password: PASSWORD }) });
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

/** A share download that stops reading at `holdAt` bytes until released, so it cannot end before the kill. */
function heldDownload(href: string, holdAt: number) {
  let received = 0;
  let released = false;
  let resumeHeld: (() => void) | undefined;
  const release = () => {
    released = true;
    resumeHeld?.();
  };
  const done = new Promise<{ received: number; complete: boolean }>((resolve, reject) => {
    const req = http.get(href, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`share download answered ${res.statusCode}`));
        res.resume();
        return;
      }
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (!released && received >= holdAt) {
          res.pause();
          resumeHeld = () => res.resume();
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

describe(`fast share downloads survive a crash (${TEST_BACKEND})`, { timeout: 180_000 }, () => {
  test('SIGKILL during a fast share download: the owner is charged what was sent, never more', async (context) => {
    let server = await start();
    try {
      let key = await apiKey(server.url);
      const form = new FormData();
      form.append('upload', new Blob([new Uint8Array(randomBytes(FILE_BYTES))]), 'big.bin');
      const stored = await request(`${server.url}/files`, { method: 'POST', headers: { Authorization: key }, body: form }, 120_000);
      assert.ok(stored.kind === 'answer' && stored.status === 201, JSON.stringify(stored).slice(0, 300));
      const shared = await request(`${server.url}/shares`, {
        method: 'POST',
        headers: { Authorization: key },
        body: new URLSearchParams({ file: entryId(stored.body)!, fast: '1' }),
      });
      const shareId = shared.kind === 'answer' ? /<entry>\s*<id>([A-Za-z0-9]{22})<\/id>/.exec(shared.body)?.[1] : undefined;
      assert.ok(shareId, JSON.stringify(shared).slice(0, 300));

      const download = heldDownload(`${server.url}/s/${shareId}/download`, HOLD_AT);
      const until = Date.now() + 60_000;
      while (download.received() < 8 * MiB) {
        assert.ok(Date.now() < until, 'the download got going');
        await sleep(10);
      }
      await server.kill();
      download.release();
      const result = await download.done;
      assert.equal(result.complete, false, 'the kill cut the download short');

      server = await start();
      key = await apiKey(server.url);
      const charged = TRAFFIC - (await trafficLeft(server.url, key));
      const under = result.received - charged;
      context.diagnostic(`received ${(result.received / MiB).toFixed(2)} MiB, charged ${(charged / MiB).toFixed(2)} MiB`);
      assert.ok(charged <= result.received, `charged ${charged} bytes for ${result.received} received`);
      assert.ok(under <= UNDERCHARGE_BOUND, `${under} bytes received and not charged, over ${UNDERCHARGE_BOUND}`);
      assert.ok(charged > 0, 'something was charged: the fast share was paid from the traffic');
      const shown = await request(`${server.url}/shares/${shareId}`, { headers: { Authorization: key } });
      assert.ok(shown.kind === 'answer' && /<ed:downloads>1<\/ed:downloads>/.test(shown.body), 'the count stays');
    } finally {
      await server.kill();
    }
  });
});
