import assert from 'node:assert/strict';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { directLink, eventually, randomPayload, sha256 } from '../helpers/downloads.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Free downloads (`?download=1`, API.md 1 and 8): a speed cap per download and a number
// of concurrent downloads per client address (429 page with Retry-After, the slot freed
// when the response ends however it ends). Premium direct downloads are neither capped
// nor counted. Timing assertions are lower bounds the throttle guarantees, never upper
// bounds on the machine's speed.

const KiB = 1024;
const CAP = 256 * KiB;
const PER_IP = 2;
const GUARD = { timeout: 120_000 };

let t: TestServer;
let key: string;
let small: string;
let big: { url: string; payload: Buffer; id: string };
let large: { url: string; payload: Buffer; id: string };

before(async () => {
  t = await startTestServer({ freeDownloadSpeed: CAP, freeDownloadsPerIp: PER_IP, trustProxy: true });
  ({ key } = await t.account({ premiumDays: 30, trafficBytes: 1024 ** 3 }));
  const upload = async (name: string, payload: Buffer) => {
    const up = await t.upload(key, name, payload);
    assert.equal(up.response.status, 201, up.body);
    return { url: `${up.downloadLink}?download=1`, payload, id: up.id };
  };
  small = (await upload('small.bin', randomPayload(KiB))).url;
  big = await upload('big.bin', randomPayload(1024 * KiB));
  large = await upload('large.bin', randomPayload(4096 * KiB));
});
after(() => t.close());

interface Download {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Resolves with the whole body and the time from request to last byte. */
  done: Promise<{ body: Buffer; ms: number }>;
  /** Gives up: the connection is destroyed. */
  abort(): void;
  /** Whether the last byte has arrived. */
  finished(): boolean;
}

/**
 * Starts a GET through node:http on its own connection and resolves once the headers
 * are in. With `hold`, the body is not read (a stalled client keeps its download open).
 */
function start(url: string, ip: string, options: { hold?: boolean; headers?: Record<string, string>; method?: string } = {}): Promise<Download> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? 'GET', agent: false, headers: { 'X-Forwarded-For': ip, ...options.headers } }, (response) => {
      let finished = false;
      const chunks: Buffer[] = [];
      const done = new Promise<{ body: Buffer; ms: number }>((resolveDone, rejectDone) => {
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          finished = true;
          resolveDone({ body: Buffer.concat(chunks), ms: performance.now() - started });
        });
        response.on('error', rejectDone);
      });
      done.catch(() => {});
      if (options.hold) response.pause();
      resolve({ status: response.statusCode ?? 0, headers: response.headers, done, abort: () => request.destroy(), finished: () => finished });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET') reject(error);
    });
    request.end();
  });
}

/** A whole GET; returns status, headers and body. */
async function get(url: string, ip: string, headers?: Record<string, string>) {
  const download = await start(url, ip, { headers });
  const { body, ms } = await download.done;
  return { status: download.status, headers: download.headers, body, ms };
}

const slots = (ip: string) => t.server.services.limits.freeDownloads.inProgress(ip);

describe('free download speed', () => {
  test(`a free download runs at no more than the cap (${CAP / KiB} KiB/s)`, GUARD, async () => {
    const { status, body, ms } = await get(big.url, '10.20.0.1');
    assert.equal(status, 200);
    assert.equal(sha256(body), sha256(big.payload));
    // The throttle lets the byte at offset n out no earlier than n / cap after the first
    // (less half a second of catch-up after a stall): 1 MiB needs at least 3.4 s.
    const measured = body.length / (ms / 1000);
    assert.ok(measured / CAP <= 4 / 3, `measured ${Math.round(measured / KiB)} KiB/s against a cap of ${CAP / KiB} KiB/s (${Math.round(ms)} ms)`);
  });

  test('a byte range is capped too', GUARD, async () => {
    const { status, body, ms } = await get(big.url, '10.20.0.2', { Range: 'bytes=0-524287' });
    assert.equal(status, 206);
    assert.ok(body.equals(big.payload.subarray(0, 512 * KiB)));
    assert.ok(body.length / (ms / 1000) / CAP <= 2, `${Math.round(ms)} ms for 512 KiB`);
  });
});

describe('concurrent free downloads per address', () => {
  test(`more than ${PER_IP} at once from one address: 429 page; a slot frees when a download aborts or completes`, GUARD, async () => {
    const ip = '10.20.1.1';
    const first = await start(big.url, ip, { hold: true });
    const second = await start(big.url, ip, { hold: true });
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(slots(ip), 2);

    const refused = await get(small, ip);
    assert.equal(refused.status, 429);
    assert.match(String(refused.headers['content-type']), /^text\/html/);
    assert.match(String(refused.headers['retry-after']), /^\d+$/);
    assert.match(refused.body.toString('utf8'), /Too many downloads at once/);
    assert.equal(refused.headers['content-disposition'], undefined, 'a refusal is not the file');
    // Per address: another one is not affected.
    assert.equal((await get(small, '10.20.1.2')).status, 200);

    // An aborted download gives its slot back.
    first.abort();
    await eventually(async () => slots(ip) === 1, 'the aborted download freed its slot');
    // Completed downloads give theirs back: one slot is enough for any number in a row.
    for (let i = 0; i < 3; i++) {
      const ok = await get(small, ip);
      assert.equal(ok.status, 200, `download ${i} after the abort`);
    }
    await eventually(async () => slots(ip) === 1, 'completed downloads freed their slots');
    // So do answers without a body: 416, HEAD, a conditional 304.
    const etag = String((await get(small, ip)).headers.etag);
    assert.equal((await get(small, ip, { Range: 'bytes=99999999-' })).status, 416);
    const head = await start(small, ip, { method: 'HEAD' });
    await head.done;
    assert.equal(head.status, 200);
    assert.equal((await get(small, ip, { 'If-None-Match': etag })).status, 304);
    await eventually(async () => slots(ip) === 1, 'answers without a body freed their slots');
    assert.equal((await get(small, ip)).status, 200);

    second.abort();
    await eventually(async () => slots(ip) === 0, 'the second download freed its slot');
  });
});

describe('premium direct downloads', () => {
  test('are neither counted nor capped', GUARD, async () => {
    const ip = '10.20.2.1';
    // Both free slots of the address are busy: one reads at the capped speed (at least
    // 15 s for 4 MiB), one is stalled.
    const reading = await start(large.url, ip);
    const stalled = await start(large.url, ip, { hold: true });
    assert.equal(slots(ip), 2);
    assert.equal((await get(small, ip)).status, 429);

    const url = await directLink(t, key, large.id);
    const direct = await get(url, ip, { Authorization: key });
    assert.equal(direct.status, 200);
    assert.equal(sha256(direct.body), sha256(large.payload));
    // Not counted: the free slots are as they were. Not capped: it overtook the free
    // download of the same bytes that started first and reads all the time.
    assert.equal(slots(ip), 2);
    assert.equal(reading.finished(), false, `the direct download took ${Math.round(direct.ms)} ms, no faster than the capped one`);

    reading.abort();
    stalled.abort();
    await eventually(async () => slots(ip) === 0, 'the free downloads freed their slots');
  });
});
