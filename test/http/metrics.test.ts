import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bodyBytes, directLink, eventually, randomPayload, sha256, startAndAbort, trafficLeft } from '../helpers/downloads.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createUpload } from '../helpers/tus.js';

// GET /metrics (issue 10 item 5): the counters move by exactly what happened, the route
// label is the router's pattern, and the token guards the endpoint.

const GiB = 1024 ** 3;
const KiB = 1024;

/** Samples of the Prometheus text format, keyed `name{label="value",...}` with the labels sorted. */
type Samples = Map<string, number>;

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** A small parser of the exposition text format 0.0.4: comments skipped, one sample a line. */
function parseExposition(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(LABEL)].map(
      ([, name, value]) => [name!, value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))] as const,
    );
    samples.set(key(match[1]!, Object.fromEntries(labels)), Number(match[3]));
  }
  return samples;
}

function key(name: string, labels: Record<string, string> = {}): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((label) => `${label}=${JSON.stringify(labels[label])}`);
  return `${name}{${sorted.join(',')}}`;
}

/** One sample's value; 0 when the series does not exist (yet). */
const value = (samples: Samples, name: string, labels: Record<string, string> = {}) => samples.get(key(name, labels)) ?? 0;

async function scrape(t: TestServer, token?: string): Promise<Samples> {
  const response = await t.fetch('/metrics', token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(text);
}

/** Waits until a scrape satisfies `holds` (a response's counters are taken when it closes, just after the client has it). */
async function scrapeUntil(t: TestServer, holds: (samples: Samples) => boolean, what: string): Promise<Samples> {
  let samples: Samples = new Map();
  await eventually(async () => {
    samples = await scrape(t);
    return holds(samples);
  }, what);
  return samples;
}

describe('metrics: transfers, limits and routes', () => {
  let t: TestServer;
  before(async () => {
    // A tiny free upload volume, so a refusal is one small upload away.
    t = await startTestServer({ uploadVolumeFree: 4 * KiB, loginAttemptsPerMinute: 2 });
  });
  after(() => t.close());

  test('a resumable upload counts in the upload metrics when its file is made, as POST /files does', async () => {
    const owner = await t.account({ premiumDays: 30 });
    const payload = randomPayload(20 * KiB + 3);
    const before = await scrape(t);
    const created = await createUpload(t, owner.key, { length: payload.length, metadata: { filename: 'resumed.bin' }, body: payload });
    assert.equal(created.response.status, 201, created.body);
    const after = await scrapeUntil(t, (s) => value(s, 'filehaven_transfers_in_flight', { direction: 'upload' }) === 0, 'the upload has ended');
    assert.equal(value(after, 'filehaven_upload_bytes_total') - value(before, 'filehaven_upload_bytes_total'), payload.length);
    assert.equal(
      value(after, 'filehaven_upload_duration_seconds_count', { outcome: 'stored' }) -
        value(before, 'filehaven_upload_duration_seconds_count', { outcome: 'stored' }),
      1,
    );
  });

  test('an upload, a public and a direct download move the byte counters by exactly the file size', async () => {
    const owner = await t.account({ premiumDays: 30, trafficBytes: GiB });
    const payload = randomPayload(300 * KiB + 7);
    const before = await scrape(t);

    const up = await t.upload(owner.key, 'counted.bin', payload);
    assert.equal(up.response.status, 201, up.body);
    const afterUpload = await scrapeUntil(t, (s) => value(s, 'filehaven_transfers_in_flight', { direction: 'upload' }) === 0, 'the upload has ended');
    assert.equal(value(afterUpload, 'filehaven_upload_bytes_total') - value(before, 'filehaven_upload_bytes_total'), payload.length);
    assert.equal(
      value(afterUpload, 'filehaven_upload_duration_seconds_count', { outcome: 'stored' }) -
        value(before, 'filehaven_upload_duration_seconds_count', { outcome: 'stored' }),
      1,
    );
    assert.equal(
      value(afterUpload, 'filehaven_http_requests_total', { route: '/files', method: 'POST', status: '201' }) -
        value(before, 'filehaven_http_requests_total', { route: '/files', method: 'POST', status: '201' }),
      1,
    );

    const publicResponse = await fetch(`${up.downloadLink}?download=1`);
    assert.equal(publicResponse.status, 200);
    assert.equal(sha256(await bodyBytes(publicResponse)), sha256(payload));
    const afterPublic = await scrapeUntil(
      t,
      (s) =>
        value(s, 'filehaven_download_duration_seconds_count', { kind: 'public' }) >
        value(before, 'filehaven_download_duration_seconds_count', { kind: 'public' }),
      'the public download has ended',
    );
    assert.equal(
      value(afterPublic, 'filehaven_download_bytes_total', { kind: 'public' }) - value(before, 'filehaven_download_bytes_total', { kind: 'public' }),
      payload.length,
    );
    assert.equal(value(afterPublic, 'filehaven_download_bytes_total', { kind: 'direct' }), value(before, 'filehaven_download_bytes_total', { kind: 'direct' }));

    const url = await directLink(t, owner.key, up.id);
    const direct = await fetch(url, { headers: { Authorization: owner.key } });
    assert.equal(direct.status, 200);
    assert.equal(sha256(await bodyBytes(direct)), sha256(payload));
    const afterDirect = await scrapeUntil(
      t,
      (s) =>
        value(s, 'filehaven_download_duration_seconds_count', { kind: 'direct' }) >
        value(before, 'filehaven_download_duration_seconds_count', { kind: 'direct' }),
      'the direct download has ended',
    );
    assert.equal(
      value(afterDirect, 'filehaven_download_bytes_total', { kind: 'direct' }) - value(before, 'filehaven_download_bytes_total', { kind: 'direct' }),
      payload.length,
    );
    assert.equal(value(afterDirect, 'filehaven_traffic_reserved_bytes_total') - value(before, 'filehaven_traffic_reserved_bytes_total'), payload.length);
    assert.equal(
      value(afterDirect, 'filehaven_traffic_refunded_bytes_total'),
      value(before, 'filehaven_traffic_refunded_bytes_total'),
      'a whole download gives nothing back',
    );
    assert.equal(value(afterDirect, 'filehaven_transfers_in_flight', { direction: 'download' }), 0);

    // The route label is the router's pattern: no file id, no link token, no name.
    assert.equal(
      value(afterDirect, 'filehaven_http_requests_total', { route: '/:id/:name', method: 'GET', status: '200' }) -
        value(before, 'filehaven_http_requests_total', { route: '/:id/:name', method: 'GET', status: '200' }),
      1,
    );
    assert.equal(
      value(afterDirect, 'filehaven_http_requests_total', { route: '/direct/:id/:token/:name', method: 'GET', status: '200' }) -
        value(before, 'filehaven_http_requests_total', { route: '/direct/:id/:token/:name', method: 'GET', status: '200' }),
      1,
    );
    const text = await (await t.fetch('/metrics')).text();
    assert.ok(!text.includes(up.id), 'no file id in any label');
    assert.ok(!text.includes('counted.bin'), 'no file name in any label');
    assert.ok(!text.includes(owner.key), 'no API key in any label');
  });

  test('a direct download cut short: what was reserved and not sent is given back, and counted', async () => {
    const owner = await t.account({ premiumDays: 30, trafficBytes: GiB });
    const size = 16 * 1024 * 1024;
    const up = await t.upload(owner.key, 'cut.bin', randomPayload(size));
    assert.equal(up.response.status, 201, up.body);
    const url = await directLink(t, owner.key, up.id);
    const before = await scrape(t);
    const { status, received } = await startAndAbort(url, { Authorization: owner.key });
    assert.equal(status, 200);
    assert.ok(received > 0 && received < size);
    const after = await scrapeUntil(
      t,
      (s) => value(s, 'filehaven_traffic_refunded_bytes_total') > value(before, 'filehaven_traffic_refunded_bytes_total'),
      'the unsent bytes are given back',
    );
    const reserved = value(after, 'filehaven_traffic_reserved_bytes_total') - value(before, 'filehaven_traffic_reserved_bytes_total');
    const refunded = value(after, 'filehaven_traffic_refunded_bytes_total') - value(before, 'filehaven_traffic_refunded_bytes_total');
    const sent = value(after, 'filehaven_download_bytes_total', { kind: 'direct' }) - value(before, 'filehaven_download_bytes_total', { kind: 'direct' });
    assert.equal(reserved, size);
    assert.equal(reserved - refunded, sent, 'charged exactly the bytes counted as sent');
    assert.equal(GiB - (await trafficLeft(t, owner.key)), sent, 'and that is what the account was charged');
    assert.equal(value(after, 'filehaven_transfers_in_flight', { direction: 'download' }), 0);
  });

  test('an upload past the volume is refused once, and counted as a failed upload', async () => {
    const free = await t.account();
    const before = await scrape(t);
    const up = await t.upload(free.key, 'too-big.bin', randomPayload(8 * KiB));
    assert.equal(up.response.status, 429, up.body);
    const after = await scrapeUntil(t, (s) => value(s, 'filehaven_transfers_in_flight', { direction: 'upload' }) === 0, 'the upload has ended');
    assert.equal(
      value(after, 'filehaven_limit_refusals_total', { limit: 'upload-volume' }) - value(before, 'filehaven_limit_refusals_total', { limit: 'upload-volume' }),
      1,
    );
    assert.equal(
      value(after, 'filehaven_upload_duration_seconds_count', { outcome: 'failed' }) -
        value(before, 'filehaven_upload_duration_seconds_count', { outcome: 'failed' }),
      1,
    );
    assert.equal(value(after, 'filehaven_upload_bytes_total'), value(before, 'filehaven_upload_bytes_total'), 'a refused upload stored no bytes');
  });

  test('an unmatched path is labelled as such, never by its URL', async () => {
    const before = await scrape(t);
    assert.equal((await t.fetch('/no/such/path/secret-looking-word')).status, 404);
    const after = await scrapeUntil(
      t,
      (s) =>
        value(s, 'filehaven_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }) >
        value(before, 'filehaven_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }),
      'the 404 is counted',
    );
    assert.ok(![...after.keys()].some((name) => name.includes('secret-looking-word')));
  });

  test('the pool is reported on PostgreSQL, and has no samples on SQLite', async () => {
    const samples = await scrape(t);
    const total = samples.get(key('filehaven_db_pool_connections', { state: 'total' }));
    if (t.server.services.store.engine === 'sqlite') {
      assert.equal(total, undefined);
    } else {
      assert.ok(total !== undefined && total >= 1 && total <= t.server.services.config.databasePoolSize, `total ${total}`);
      assert.ok(samples.has(key('filehaven_db_pool_connections', { state: 'idle' })));
      assert.ok(samples.has(key('filehaven_db_pool_connections', { state: 'waiting' })));
    }
    assert.ok(value(samples, 'process_resident_memory_bytes') > 0);
    assert.ok(value(samples, 'process_cpu_seconds_total') > 0);
  });

  // Last: the refusal holds the address's sign-in counter for a minute.
  test('a refused sign-in counts once as a sign-in refusal', async () => {
    const someone = await t.account();
    const before = await scrape(t);
    const signIn = () => t.fetch('/apikeys', { method: 'POST', body: new URLSearchParams({ login: someone.login, password: 'wrong password' }) });
    assert.equal((await signIn()).status, 401);
    assert.equal((await signIn()).status, 401);
    assert.equal((await signIn()).status, 429);
    const after = await scrape(t);
    assert.equal(
      value(after, 'filehaven_limit_refusals_total', { limit: 'sign-in' }) - value(before, 'filehaven_limit_refusals_total', { limit: 'sign-in' }),
      1,
    );
    assert.equal(value(after, 'filehaven_limit_refusals_total', { limit: 'api-rate' }), value(before, 'filehaven_limit_refusals_total', { limit: 'api-rate' }));
  });
});

describe('metrics: not an API request, gc runs', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ apiRatePerIp: 3, gcIntervalMs: 300 });
  });
  after(() => t.close());

  test('/metrics and the probes never count against the API rate; an API request past it is counted as refused', async () => {
    for (let i = 0; i < 5; i++) {
      assert.equal((await t.fetch('/metrics')).status, 200);
      assert.equal((await t.fetch('/healthz')).status, 200);
    }
    assert.equal(value(await scrape(t), 'filehaven_limit_refusals_total', { limit: 'api-rate' }), 0);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.fetch('/account')).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    assert.equal(value(await scrape(t), 'filehaven_limit_refusals_total', { limit: 'api-rate' }), 1);
  });

  test('gc runs are counted, with the time of the last one that ran to its end', async () => {
    const startedAt = Date.now() / 1000;
    const samples = await scrapeUntil(
      t,
      (s) => value(s, 'filehaven_gc_runs_total', { outcome: 'done' }) >= 1 && value(s, 'filehaven_gc_last_success_timestamp_seconds') >= startedAt - 1,
      'a gc run',
    );
    assert.equal(value(samples, 'filehaven_gc_runs_total', { outcome: 'failed' }), 0);
    assert.ok(value(samples, 'filehaven_gc_last_success_timestamp_seconds') <= Date.now() / 1000 + 1);
    assert.ok(value(samples, 'filehaven_gc_last_duration_seconds') > 0);
  });
});

describe('metrics: the token', () => {
  const token = 'metrics-token-0123456789abcdef';
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ metricsToken: token });
  });
  after(() => t.close());

  test('without the token: 401 with a short plain answer; with another one: 403; with it: the metrics', async () => {
    const none = await t.fetch('/metrics');
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="metrics"');
    assert.equal(none.headers.get('content-type'), 'text/plain; charset=utf-8');
    const noneText = await none.text();
    assert.ok(noneText.length < 100 && !noneText.includes('filehaven_'), noneText);

    const sameLength = token.replace(/.$/, 'X');
    for (const wrong of [`Bearer ${sameLength}`, 'Bearer short', `Bearer ${token}x`, token, `Basic ${Buffer.from(`x:${token}`).toString('base64')}`]) {
      const response = await t.fetch('/metrics', { headers: { Authorization: wrong } });
      const text = await response.text();
      assert.ok(response.status === 401 || response.status === 403, `${wrong}: ${response.status}`);
      assert.ok(!text.includes('filehaven_'), 'no metric in a refusal');
    }
    assert.equal((await t.fetch('/metrics', { headers: { Authorization: `Bearer ${sameLength}` } })).status, 403);

    const samples = await scrape(t, token);
    assert.ok(samples.has(key('filehaven_upload_bytes_total')));
    // The refusals are requests like any other: counted under the route's pattern.
    assert.ok(value(samples, 'filehaven_http_requests_total', { route: '/metrics', method: 'GET', status: '401' }) >= 1);
  });
});
